// The agents' subcommands: `skilldb solve` (the Policy Agent, one task or a
// rollout pool over several), `skilldb rollouts list|show|export` (the
// rollout store) and `skilldb distill` (the Skill Summary Agent). Argument
// structs filled by main.cc; one Run function per subcommand, returning the
// exit code as commands.h describes.
//
// The rollout store is at --rollouts PATH, else $SKILLDB_ROLLOUTS, else
// beside the library: "<library path>.rollouts.sqlite".
#ifndef SKILLDB_CLI_AGENT_COMMANDS_H_
#define SKILLDB_CLI_AGENT_COMMANDS_H_

#include <optional>
#include <string>
#include <vector>

#include "commands.h"

namespace skilldb::cli {

// Where the model is: the LLM options every model command shares.
using AgentLlmArgs = LlmClientArgs;

struct SolveArgs {
  std::string task;                // --task NAME
  std::vector<std::string> tasks;  // --tasks a,b,c (the pool)
  int turns = 3;
  int samples = 1;      // completions per turn
  int rollouts = 1;     // trajectories per task (RL groups), with --tasks
  int concurrency = 0;  // rollouts in flight; 0 = all of them
  std::string backend = "cuda";
  int workers = 0;              // host verifier workers; 0 = one per two cores
  std::string rerank = "none";  // none | listwise
  int skills = 3;               // selected skills per turn
  int candidates = 20;          // BM25 candidates
  double temperature = 0.8;
  int max_tokens = 4096;
  bool no_early_stop = false;
  std::string group;          // Trajectory::group
  std::string rollouts_path;  // --rollouts
  AgentLlmArgs llm;
};

struct RolloutsArgs {
  std::string action;  // list | show | export
  std::string id;      // show
  std::string task;    // list/export filter
  std::string group;
  std::string solved;  // "" | "yes" | "no"
  size_t limit = 0;
  std::string output;  // export: file ("" = stdout)
  // export: "trajectories" (one trajectory per line) or "generations" (one
  // model call per line: agent, prompt, completion, tokens, reward).
  std::string format = "trajectories";
  std::string rollouts_path;
};

struct DistillArgs {
  std::string id;       // the trajectory
  std::string backend;  // "" = the trajectory's
  std::string dedup = "reject";
  int attempts = 3;
  int workers = 0;
  std::string rollouts_path;
  AgentLlmArgs llm;
};

int RunSolve(const GlobalArgs& g, const SolveArgs& a, const Io& io);
int RunRollouts(const GlobalArgs& g, const RolloutsArgs& a, const Io& io);
int RunDistill(const GlobalArgs& g, const DistillArgs& a, const Io& io);

}  // namespace skilldb::cli

#endif  // SKILLDB_CLI_AGENT_COMMANDS_H_
