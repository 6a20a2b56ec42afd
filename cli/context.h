// Shared plumbing of the CLI commands: resolving and opening the library,
// reporting errors with the documented exit codes, reading input files.
#ifndef SKILLDB_CLI_CONTEXT_H_
#define SKILLDB_CLI_CONTEXT_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "skilldb/json.h"
#include "skilldb/library.h"
#include "skilldb/util/json.h"
#include "text.h"

namespace skilldb::cli {

using Json = nlohmann::ordered_json;

// The library path: --db, else $SKILLDB_DB, else the default library
// ($XDG_DATA_HOME or ~/.local/share, then skilldb/library).
std::string ResolveDbPath(const GlobalArgs& g, bool* is_default);

// Where a side store of the library is (the rollout store, the embedding
// store): `flag` when given, else the variable `env` when set and not
// empty (nullptr: none), else "<library path><suffix>" beside the library
// (util::SidecarPath).
std::string SidecarStorePath(const GlobalArgs& g, const std::string& flag,
                             const char* env, std::string_view suffix);

// Opens the library for the command. Read-only commands open it read-only
// (they work while another process writes). The default library is created
// from the seed library the first time any command other than init uses it.
Result<std::unique_ptr<Library>> OpenLibrary(const GlobalArgs& g,
                                             bool read_only, const Io& io);

// The command line the process was started with (Main records it): what a
// command hands to skilldb-ml when it needs libtorch (dense_command.cc).
void SetProcessArgs(int argc, char** argv);
const std::vector<std::string>& ProcessArgs();

// Prints `status` as the error of the command (control characters in it
// escaped; with --json also as {"error": ...}) and returns its exit code:
// 2 for Corruption, IOError, Internal and NotSupported, else 1.
int Fail(const GlobalArgs& g, const Io& io, const Status& status);

// Reads all of `file` ("-" = io.in). NotFound / IOError name the file (or
// stdin) and say why (the errno text).
Result<std::string> ReadInput(const std::string& file, const Io& io);

// Prints `j` on io.out (pretty for objects, one line otherwise).
void PrintJson(const Io& io, const Json& j);

// A public type as a JSON value, through its API-layer codec (skilldb/json.h).
template <typename T>
Json AsJson(const T& value) {
  return Json::parse(ToJson(value));
}

std::string FormatTime(int64_t time_ms);
std::string FormatScore(double score);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_CONTEXT_H_
