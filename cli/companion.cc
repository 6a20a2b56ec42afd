// The companion and seed lookups (see companion.h). This is the one file
// of the CLI that carries paths of this build (compile definitions), so
// every other file compiles the same in any checkout.
#include "companion.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "context.h"
#include "skilldb/util/file.h"

#ifndef SKILLDB_CLI_BUILD_DIR
#define SKILLDB_CLI_BUILD_DIR ""
#endif
#ifndef SKILLDB_CLI_COMPANION_BUILT
#define SKILLDB_CLI_COMPANION_BUILT ""
#endif
#ifndef SKILLDB_CLI_INSTALL_BINDIR
#define SKILLDB_CLI_INSTALL_BINDIR ""
#endif
#ifndef SKILLDB_CLI_SEED_SOURCE
#define SKILLDB_CLI_SEED_SOURCE ""
#endif
#ifndef SKILLDB_CLI_SEED_FROM_BIN
#define SKILLDB_CLI_SEED_FROM_BIN "../share/skilldb/seed"
#endif
#ifndef SKILLDB_CLI_SEED_INSTALLED
#define SKILLDB_CLI_SEED_INSTALLED ""
#endif

namespace skilldb::cli {

const char kCompanionName[] = "skilldb-ml";

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return !path.empty() && ::realpath(path.c_str(), buf) != nullptr ? buf : "";
}

// The folder of this program (its real path).
std::string SelfDir() {
  const std::string self = RealPath("/proc/self/exe");
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "" : self.substr(0, slash);
}

// True when this program is the build tree's CLI (not an installed copy).
bool InBuildTree() {
  const std::string built = RealPath(SKILLDB_CLI_BUILD_DIR);
  return !built.empty() && built == SelfDir();
}

bool IsDir(const std::string& path) {
  return !path.empty() && util::IsDirectory(path);
}

}  // namespace

std::vector<std::string> CompanionCandidates() {
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (!p.empty()) out.push_back(p);
  };
  add(Env("SKILLDB_ML"));
  if (InBuildTree()) add(SKILLDB_CLI_COMPANION_BUILT);
  if (const std::string dir = SelfDir(); !dir.empty())
    add(dir + "/" + kCompanionName);
  if (std::string bin = SKILLDB_CLI_INSTALL_BINDIR; !bin.empty())
    add(bin + "/" + kCompanionName);
  return out;
}

Status HandOverToCompanion(const std::string& command) {
  const std::vector<std::string> candidates = CompanionCandidates();
  std::string looked;
  for (const std::string& path : candidates) {
    looked += (looked.empty() ? "" : ", ") + path;
    if (::access(path.c_str(), X_OK) != 0) continue;
    std::vector<std::string> args = ProcessArgs();
    if (args.empty()) return Status::Internal("the command line was not recorded");
    args[0] = path;
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::cout.flush();
    std::cerr.flush();
    ::execv(path.c_str(), argv.data());
    return Status::IOError("cannot run " + path + ": " + std::strerror(errno));
  }
  return Status::NotSupported(
      "`skilldb " + command + "` runs on libtorch, in the companion " +
      kCompanionName + ", and none was found (looked at: " +
      (looked.empty() ? std::string("nowhere") : looked) +
      "). Build it with `bash scripts/build.sh skilldb_cli_ml` (libtorch-dev "
      "from scripts/setup.sh), or point $SKILLDB_ML at one");
}

std::string SeedDir() {
  if (std::string env = Env("SKILLDB_SEED_DIR"); !env.empty()) return env;
  if (InBuildTree()) return SKILLDB_CLI_SEED_SOURCE;
  if (const std::string dir = SelfDir(); !dir.empty()) {
    const std::string beside = dir + "/" + SKILLDB_CLI_SEED_FROM_BIN;
    if (IsDir(beside)) return RealPath(beside);
  }
  if (IsDir(SKILLDB_CLI_SEED_INSTALLED)) return SKILLDB_CLI_SEED_INSTALLED;
  return SKILLDB_CLI_SEED_SOURCE;
}

}  // namespace skilldb::cli
