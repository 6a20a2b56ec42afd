#include "skilldb/trainer/rewards.h"

#include <algorithm>
#include <map>

namespace skilldb::trainer {

Status ValidateRewardConfig(const RewardConfig& c) {
  if (!(c.speedup_cap > 0)) {
    return Status::InvalidArgument("rewards: speedup_cap must be > 0");
  }
  if (c.summary_utility_cap < 0) {
    return Status::InvalidArgument("rewards: summary_utility_cap must be >= 0");
  }
  return Status::Ok();
}

double PolicyTurnReward(bool correct, std::optional<double> speedup, bool hack,
                        const RewardConfig& c) {
  if (hack) return c.hack_reward;
  if (!correct) return 0.0;
  double r = c.correct_weight;
  if (speedup.has_value() && *speedup > 0) {
    r += c.speedup_weight * std::min(*speedup, c.speedup_cap);
  }
  return r;
}

std::vector<double> SelectionRewards(
    const std::vector<SelectionOutcome>& outcomes, const RewardConfig& c) {
  std::vector<double> out(outcomes.size(), 0.0);
  std::map<std::string, std::pair<double, size_t>> per_task;  // sum, count
  for (const auto& o : outcomes) {
    auto& [sum, count] = per_task[o.task];
    sum += o.group_return;
    ++count;
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const auto& [sum, count] = per_task[outcomes[i].task];
    double r = outcomes[i].group_return;
    if (c.selection_relative && count > 1) {
      r -= (sum - outcomes[i].group_return) / static_cast<double>(count - 1);
    }
    out[i] = c.selection_weight * r;
  }
  return out;
}

double SummaryReward(bool inserted, int later_successful_uses,
                     const RewardConfig& c) {
  double r = inserted ? c.summary_inserted : c.summary_rejected;
  if (inserted) {
    r += c.summary_utility *
         std::clamp(later_successful_uses, 0, c.summary_utility_cap);
  }
  return r;
}

}  // namespace skilldb::trainer
