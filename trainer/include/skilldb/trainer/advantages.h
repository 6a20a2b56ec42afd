// Per-agent advantages for multi-turn REINFORCE over the three agents
// (selection, policy, summary) that share one backbone.
//
// Input: one Decision per model completion that is trained on, with the
// immediate reward of the turn it belongs to. Three stages, each
// switchable so that an ablation is one flag:
//   1. Returns: within one (rollout, agent) sequence ordered by turn,
//      G_t = r_t + gamma * G_{t+1} (the last turn's G is its reward).
//   2. Baseline: kLeaveOneOut (TRLOO) groups decisions by (task, agent,
//      turn) and sets A_i = G_i - mean of the other members (a group of
//      one keeps A_i = G_i); kBatchMean subtracts the mean G of the whole
//      batch; kNone keeps A_i = G_i.
//   3. Normalization: kPerAgent divides each agent's advantages, after
//      subtracting that agent's own mean, by that agent's own standard
//      deviation (the multi-agent fix of Dr. MAS); kGlobal does the same
//      with the statistics of the whole batch; kNone leaves them.
// Pure functions, no torch: safe from any thread.
#ifndef SKILLDB_TRAINER_ADVANTAGES_H_
#define SKILLDB_TRAINER_ADVANTAGES_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::trainer {

enum class Baseline { kLeaveOneOut, kBatchMean, kNone };
enum class Normalization { kPerAgent, kGlobal, kNone };

// "loo" | "batch_mean" | "none"; "per_agent" | "global" | "none".
std::string_view BaselineName(Baseline baseline);
std::string_view NormalizationName(Normalization normalization);
// InvalidArgument naming the accepted names.
Result<Baseline> ParseBaseline(std::string_view name);
Result<Normalization> ParseNormalization(std::string_view name);

struct AdvantageOptions {
  double gamma = 1.0;  // discount across turns, in [0, 1]. Default: 1.
  Baseline baseline = Baseline::kLeaveOneOut;
  Normalization normalization = Normalization::kPerAgent;
  // Added to the standard deviation before dividing. Default: 1e-6.
  double std_epsilon = 1e-6;
};

Status ValidateAdvantageOptions(const AdvantageOptions& options);

// One trained completion.
struct Decision {
  std::string task;     // the task of the rollout
  std::string agent;    // "selection" | "policy" | "summary" | any name
  std::string rollout;  // the sequence the discounting runs along
  int turn = 0;         // position in that sequence (0-based)
  double reward = 0;    // immediate reward r_t
};

struct AdvantageResult {
  std::vector<double> returns;     // G per decision, input order
  std::vector<double> advantages;  // A per decision, input order
};

// Errors: InvalidArgument for bad options or two decisions of one
// (rollout, agent) at the same turn.
Result<AdvantageResult> ComputeAdvantages(const std::vector<Decision>& batch,
                                          const AdvantageOptions& options);

// Summary statistics (population standard deviation).
struct Stats {
  size_t count = 0;
  double mean = 0, std = 0, min = 0, max = 0;
};
Stats Summarize(const std::vector<double>& values);

// Statistics of `values` grouped by each decision's agent.
std::map<std::string, Stats> StatsPerAgent(const std::vector<Decision>& batch,
                                           const std::vector<double>& values);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_ADVANTAGES_H_
