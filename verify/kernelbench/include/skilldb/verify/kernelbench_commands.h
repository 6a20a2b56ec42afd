// The kernelbench commands (import, eval, list) behind both front ends: the
// skilldb CLI (cli/kernelbench_command.cc) and skilldb_kernelbench, the
// standalone driver the GPU machine builds with verify/ alone. Each returns
// the process exit code: 0 success, 1 a user error (a bad path, an unknown
// problem, bad options), 2 an internal error. Errors go to `err` naming the
// input and what is wrong; with `json` as {"error": {"code", "message"}}.
// Text that came from problems or answers is escaped before it reaches a
// terminal. Progress lines go to `err` when `progress` is set.
#ifndef SKILLDB_VERIFY_KERNELBENCH_COMMANDS_H_
#define SKILLDB_VERIFY_KERNELBENCH_COMMANDS_H_

#include <iosfwd>
#include <string>

#include "skilldb/verify/kernelbench.h"

namespace skilldb::verify::kb {

struct CommandIo {
  std::ostream* out;
  std::ostream* err;
  bool json = false;
  bool progress = true;
};

struct ImportCommandArgs {
  std::string path;
  std::string store;  // "" = TaskStore::DefaultDir()
  int level = 0;
  std::string problems;
  std::string precision = "fp32";
  int64_t max_screen_bytes = int64_t{2} << 30;
  int jobs = 0;  // ImportOptions::jobs
  RunnerOptions runner;
  // The runners' bytecode cache under this cache root (EvalOptions'
  // cache_dir: "" = the default); off with bytecode_cache = false.
  std::string cache;
  bool bytecode_cache = true;
};

struct EvalCommandArgs {
  std::string run_dir;
  std::string store;
  int level = 0;
  std::string problems;
  std::string results;   // "" = RUN_DIR/skilldb_eval.jsonl
  std::string backend;   // "" = detect per answer
  RunnerOptions runner;
  EvalOptions eval;
};

struct ListCommandArgs {
  std::string store;
  int level = 0;
};

int RunImportCommand(const ImportCommandArgs& args, const CommandIo& io);
int RunEvalCommand(const EvalCommandArgs& args, const CommandIo& io);
int RunListCommand(const ListCommandArgs& args, const CommandIo& io);

}  // namespace skilldb::verify::kb

#endif  // SKILLDB_VERIFY_KERNELBENCH_COMMANDS_H_
