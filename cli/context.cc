#include "context.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "files.h"
#include "jsonl.h"

#ifndef SKILLDB_SEED_DIR
#define SKILLDB_SEED_DIR ""
#endif

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

std::string SeedDir() {
  const char* env = std::getenv("SKILLDB_SEED_DIR");
  return env != nullptr && *env != '\0' ? env : SKILLDB_SEED_DIR;
}

// Imports every data/seed/*.jsonl file, in name order, as one commit.
Status ImportSeed(Library& library, const Io& io) {
  const std::string dir = SeedDir();
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".jsonl") files.push_back(it->path());
  }
  if (ec || files.empty()) {
    *io.err << "skilldb: warning: no seed library found in '" << dir << "'"
            << (ec ? " (" + ec.message() + ")" : "")
            << "; the default library starts empty\n";
    return Status::Ok();
  }
  std::sort(files.begin(), files.end());
  std::vector<Skill> skills;
  for (const fs::path& file : files) {
    SKILLDB_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(file.string()));
    SKILLDB_ASSIGN_OR_RETURN(auto parsed, ParseJsonl(text, file.string()));
    for (Skill& s : parsed) skills.push_back(std::move(s));
  }
  *io.err << "skilldb: creating the default library at '"
          << EscapeLine(library.Info().path) << "' from " << skills.size()
          << " seed skills\n";
  CommitOptions commit;
  commit.message = "seed library";
  commit.author = "skilldb";
  commit.kind = "import";
  return library.PutMany(skills, commit).status();
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

Result<std::unique_ptr<Library>> OpenLibrary(const GlobalArgs& g,
                                             bool read_only, const Io& io) {
  bool is_default = false;
  const std::string path = ResolveDbPath(g, &is_default);
  std::error_code ec;
  if (is_default && !fs::exists(fs::path(path) / "CURRENT", ec)) {
    Options create;
    create.create_if_missing = true;
    create.field_weights = kSkillLibraryWeights;
    create.lock_timeout_ms = g.lock_timeout_ms;
    SKILLDB_ASSIGN_OR_RETURN(auto library, Library::Open(create, path));
    if (library->CurrentVersion() == 0) {
      SKILLDB_RETURN_IF_ERROR(ImportSeed(*library, io));
    }
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
  int code = kExitUserError;
  switch (status.code()) {
    case StatusCode::kCorruption:
    case StatusCode::kIOError:
    case StatusCode::kInternal:
    case StatusCode::kNotSupported:
      code = kExitInternalError;
      break;
    default:
      break;
  }
  // Messages quote ids, titles and arguments: escaped like any human output.
  *io.err << "skilldb: error: " << EscapeBlock(status.message()) << "\n";
  if (g.json) {
    Json j;
    j["error"] = {{"code", std::string(StatusCodeName(status.code()))},
                  {"message", status.message()}};
    *io.err << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  }
  return code;
}

int FailUsage(const GlobalArgs& g, const Io& io, const Status& status) {
  const int code = Fail(g, io, status);
  *io.err << "run 'skilldb --help' or 'skilldb COMMAND --help' for usage\n";
  return code;
}

Result<std::string> ReadInput(const std::string& file, const Io& io) {
  if (file != "-") return ReadWholeFile(file);
  std::stringstream buffer;
  buffer << io.in->rdbuf();
  if (io.in->bad()) return Status::IOError("error reading stdin");
  return buffer.str();
}

void PrintJson(const Io& io, const Json& j) {
  *io.out << j.dump(j.is_object() ? 2 : -1, ' ', false,
                    Json::error_handler_t::replace)
          << "\n";
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
