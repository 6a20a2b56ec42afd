// This build's paths for the runner (the one file that reads them, so every
// other file compiles the same in any checkout), overridable from the
// environment for builds carried to another machine.
#include <cstdlib>
#include <string>

#include "skilldb/verify/kernelbench.h"

#ifndef SKILLDB_KB_RUNNER_DIR
#error "SKILLDB_KB_RUNNER_DIR must be defined by the build"
#endif
#ifndef SKILLDB_KB_LAUNCH
#define SKILLDB_KB_LAUNCH ""
#endif
#ifndef SKILLDB_KB_SANDBOX_LIB
#define SKILLDB_KB_SANDBOX_LIB ""
#endif

namespace skilldb::verify::kb {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : fallback;
}

}  // namespace

RunnerOptions WithDefaults(RunnerOptions o) {
  if (o.runner_dir.empty()) o.runner_dir = EnvOr("SKILLDB_KB_RUNNER_DIR", SKILLDB_KB_RUNNER_DIR);
  if (o.launcher.empty()) o.launcher = EnvOr("SKILLDB_KB_LAUNCH", SKILLDB_KB_LAUNCH);
  if (o.sandbox_lib.empty()) {
    o.sandbox_lib = EnvOr("SKILLDB_KB_SANDBOX_LIB", SKILLDB_KB_SANDBOX_LIB);
  }
  if (o.python.empty()) o.python = EnvOr("SKILLDB_KB_PYTHON", "python3");
  return o;
}

}  // namespace skilldb::verify::kb
