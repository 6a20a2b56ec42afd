#include "context.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "companion.h"
#include "files.h"
#include "skilldb/util/file.h"
#include "skilldb/util/sqlite.h"
#include "jsonl.h"

namespace skilldb::cli {
namespace fs = std::filesystem;

namespace {

std::string DefaultLibraryPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  fs::path base;
  if (xdg != nullptr && *xdg != '\0') {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    base = fs::path(home != nullptr && *home != '\0' ? home : ".") / ".local" /
           "share";
  }
  return (base / "skilldb" / "library").string();
}

// Imports every data/seed/*.jsonl file, in name order, as one commit.
Status ImportSeed(Library& library, const Io& io, const std::string& path) {
  const std::string dir = SeedDir();
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".jsonl") files.push_back(it->path());
  }
  if (ec || files.empty()) {
    *io.err << "skilldb: warning: no seed library found in '" << EscapeLine(dir)
            << "'"
            << (ec ? " (" + ec.message() + ")" : "")
            << "; the default library starts empty\n";
    return Status::Ok();
  }
  std::sort(files.begin(), files.end());
  std::vector<Skill> skills;
  for (const fs::path& file : files) {
    SKILLDB_ASSIGN_OR_RETURN(std::string text, util::ReadFile(file.string()));
    SKILLDB_ASSIGN_OR_RETURN(auto parsed, ParseJsonl(text, file.string()));
    for (Skill& s : parsed) skills.push_back(std::move(s));
  }
  *io.err << "skilldb: creating the default library at '" << EscapeLine(path)
          << "' from " << skills.size() << " seed skills in '"
          << EscapeLine(dir) << "'\n";
  CommitOptions commit;
  commit.message = "seed library";
  commit.author = "skilldb";
  commit.kind = "import";
  return library.PutMany(skills, commit).status();
}

// Creates the default library from the seed, once: under an exclusive lock
// on library.lock beside it, built (and seeded) in a directory beside it and
// renamed into place, so a process that starts meanwhile either waits for
// the lock or finds the whole library, and exactly one process creates it
// (and says so).
Status CreateDefaultLibrary(const std::string& path, const GlobalArgs& g,
                            const Io& io) {
  const fs::path target(path);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return Status::IOError("cannot create '" + target.parent_path().string() +
                           "': " + ec.message());
  }
  const std::string lock_path =
      (target.parent_path() / "library.lock").string();
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError("cannot open '" + lock_path +
                           "': " + std::strerror(errno));
  }
  struct Unlock {
    int fd;
    ~Unlock() { close(fd); }  // closing releases the lock
  } unlock{fd};
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      return Status::IOError("cannot lock '" + lock_path +
                             "': " + std::strerror(errno));
    }
  }
  if (fs::exists(target / "CURRENT", ec))
    return Status::Ok();  // made meanwhile
  // A creator that died under the lock left its build: nobody else builds
  // while this process holds the lock.
  const std::string prefix = "." + target.filename().string() + ".seeding-";
  for (auto it = fs::directory_iterator(target.parent_path(), ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().starts_with(prefix)) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  const std::string build =
      (target.parent_path() / (prefix + std::to_string(getpid()))).string();
  Status made = [&]() -> Status {
    Options create;
    create.create_if_missing = true;
    create.field_weights = kSkillLibraryWeights;
    create.lock_timeout_ms = g.lock_timeout_ms;
    SKILLDB_ASSIGN_OR_RETURN(auto library, Library::Open(create, build));
    return ImportSeed(*library, io, path);
  }();
  if (made.ok() && std::rename(build.c_str(), path.c_str()) != 0) {
    made = Status::IOError("cannot move the new default library into '" + path +
                           "': " + std::strerror(errno));
  }
  if (!made.ok()) fs::remove_all(build, ec);
  return made;
}

}  // namespace

std::string ResolveDbPath(const GlobalArgs& g, bool* is_default) {
  *is_default = false;
  if (!g.db.empty()) return g.db;
  const char* env = std::getenv("SKILLDB_DB");
  if (env != nullptr && *env != '\0') return env;
  *is_default = true;
  return DefaultLibraryPath();
}

std::string SidecarStorePath(const GlobalArgs& g, const std::string& flag,
                             const char* env, std::string_view suffix) {
  if (!flag.empty()) return flag;
  if (env != nullptr) {
    const char* value = std::getenv(env);
    if (value != nullptr && *value != '\0') return value;
  }
  bool is_default = false;
  return util::SidecarPath(ResolveDbPath(g, &is_default), suffix);
}

Result<std::unique_ptr<Library>> OpenLibrary(const GlobalArgs& g,
                                             bool read_only, const Io& io) {
  bool is_default = false;
  const std::string path = ResolveDbPath(g, &is_default);
  std::error_code ec;
  if (is_default && !fs::exists(fs::path(path) / "CURRENT", ec)) {
    SKILLDB_RETURN_IF_ERROR(CreateDefaultLibrary(path, g, io));
  }
  Options options;
  options.read_only = read_only;
  options.lock_timeout_ms = g.lock_timeout_ms;
  auto opened = Library::Open(options, path);
  if (!opened.ok() && opened.status().code() == StatusCode::kNotFound) {
    return Status::NotFound("no library at '" + path +
                            "' (create one with `skilldb --db " + path +
                            " init`)");
  }
  return opened;
}

int Fail(const GlobalArgs& g, const Io& io, const Status& status) {
  const int code = util::ExitCodeFor(status.code());
  // Messages quote ids, titles and arguments: escaped like any human output.
  *io.err << "skilldb: error: " << EscapeBlock(status.message()) << "\n";
  if (g.json) {
    Json j;
    j["error"] = {{"code", std::string(StatusCodeName(status.code()))},
                  {"message", status.message()}};
    *io.err << util::DumpLossy(j) << "\n";
  }
  return code;
}

int FailUsage(const GlobalArgs& g, const Io& io, const Status& status) {
  const int code = Fail(g, io, status);
  *io.err << "run 'skilldb --help' or 'skilldb COMMAND --help' for usage\n";
  return code;
}

Result<std::string> ReadInput(const std::string& file, const Io& io) {
  if (file != "-") return util::ReadFile(file);
  std::stringstream buffer;
  buffer << io.in->rdbuf();
  if (io.in->bad()) return Status::IOError("error reading stdin");
  return buffer.str();
}

void PrintJson(const Io& io, const Json& j) {
  *io.out << util::DumpLossy(j, j.is_object() ? 2 : -1) << "\n";
}

std::string FormatTime(int64_t time_ms) {
  const std::time_t t = static_cast<std::time_t>(time_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

namespace {
std::vector<std::string>& ProcessArgsStorage() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace

void SetProcessArgs(int argc, char** argv) {
  ProcessArgsStorage().assign(argv, argv + argc);
}

const std::vector<std::string>& ProcessArgs() { return ProcessArgsStorage(); }

std::string FormatScore(double score) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", score);
  return buf;
}

}  // namespace skilldb::cli
