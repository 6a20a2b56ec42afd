// The rewards of the three agents, each configurable (RewardConfig) and
// recorded with the run (config.json in the run directory).
//
//   policy     per turn, from the verifier: correct_weight x correct +
//              speedup_weight x min(speedup, speedup_cap), hack_reward for
//              a candidate rejected as a reward hack (KernelGYM's Dr.
//              Kernel reward; policy/reward.h computes it from reports).
//   selection  the downstream return of the rollout group that used the
//              selection, relative to the other selections made for the
//              same task in the same step (its return minus the mean of
//              theirs; alone, its own return), times selection_weight.
//   summary    summary_inserted for a skill verified and inserted,
//              summary_rejected otherwise, plus summary_utility per later
//              successful use of the written skill (capped).
// Pure functions, no torch.
#ifndef SKILLDB_TRAINER_REWARDS_H_
#define SKILLDB_TRAINER_REWARDS_H_

#include <optional>
#include <string>
#include <vector>

#include "skilldb/status.h"

namespace skilldb::trainer {

struct RewardConfig {
  double correct_weight = 0.5;  // Default: 0.5.
  double speedup_weight = 0.5;  // Default: 0.5.
  double speedup_cap = 3.0;     // Default: 3.
  double hack_reward = 0.0;     // Default: 0.
  // Selection: relative to the other selections of the task (true) or the
  // group's return as is (false). Default: true.
  bool selection_relative = true;
  double selection_weight = 1.0;  // Default: 1.
  double summary_inserted = 1.0;  // verified insertion. Default: 1.
  double summary_rejected = 0.0;  // refused or failed. Default: 0.
  double summary_utility = 0.25;  // per later successful use. Default: 0.25.
  int summary_utility_cap = 4;    // uses counted at most. Default: 4.
};

Status ValidateRewardConfig(const RewardConfig& config);

// The policy turn reward. `speedup` counts only when `correct`.
double PolicyTurnReward(bool correct, std::optional<double> speedup, bool hack,
                        const RewardConfig& config);

// One selection made in a step, with the return of the rollout group that
// used it.
struct SelectionOutcome {
  std::string task;
  double group_return = 0;
};
// Rewards in input order.
std::vector<double> SelectionRewards(
    const std::vector<SelectionOutcome>& outcomes, const RewardConfig& config);

double SummaryReward(bool inserted, int later_successful_uses,
                     const RewardConfig& config);

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_REWARDS_H_
