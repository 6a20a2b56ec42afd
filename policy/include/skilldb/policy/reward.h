// Per-sample rewards from the verifier's verdict, and the verdict itself.
//
// The default reward is the one KernelGYM's Dr. Kernel trainer uses (issue
// 19): 0.5 x correct + 0.5 x min(speedup, 3), and 0 for a candidate rejected
// as a reward hack. "correct" is the verifier's correctness check; the
// speedup is the report's point estimate (the median of the per-round
// ratios), counted only for correct candidates that were timed, whether or
// not the speedup was established: a correct kernel at 0.8x earns 0.9, one
// verified at 2x earns 1.5.
//
// Pure functions and a stateless default; a custom RewardFunction must be
// safe to call from several threads at once (samples are scored in
// parallel).
#ifndef SKILLDB_POLICY_REWARD_H_
#define SKILLDB_POLICY_REWARD_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/policy/trajectory.h"
#include "skilldb/verifier.h"

namespace skilldb::policy {

// True for the finding codes (verify/finding.h names) that mark a
// candidate as a reward hack rather than an honest failure: forbidden
// imports/exports, sandbox violations, modified inputs, out-of-bounds
// writes, decoy launches, foreign streams, late or hidden work, timer
// mismatches, results that change between calls, implausible speedups,
// and a KernelBench answer's hidden threads, cached outputs, untimed work,
// patched functions, lowered precision and lazy outputs.
bool IsHackFinding(std::string_view code);

// The verdict for a verified sample from its report and finding codes.
SampleVerdict VerdictFor(const VerificationReport& report,
                         const std::vector<std::string>& findings);

// What a reward function sees of one sample.
struct RewardInput {
  SampleVerdict verdict = SampleVerdict::kNoCode;
  const VerificationReport* report = nullptr;  // null when never verified
  const std::vector<std::string>* findings = nullptr;  // never null
};

using RewardFunction = std::function<double(const RewardInput&)>;

struct DefaultRewardOptions {
  double correct_weight = 0.5;  // Default: 0.5.
  double speedup_weight = 0.5;  // Default: 0.5.
  double speedup_cap = 3.0;     // Default: 3.
  double hack_reward = 0.0;     // Default: 0.
};

// 0.5 x correct + 0.5 x min(speedup, 3); `hack_reward` for kHack.
double DefaultReward(const RewardInput& input,
                     const DefaultRewardOptions& options = {});

// DefaultReward with `options`, as a RewardFunction.
RewardFunction MakeDefaultReward(DefaultRewardOptions options = {});

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_REWARD_H_
