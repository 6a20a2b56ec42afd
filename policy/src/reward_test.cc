#include "skilldb/policy/reward.h"

#include <doctest/doctest.h>

namespace skilldb::policy {
namespace {

VerificationReport Timed(double ratio, bool passed) {
  VerificationReport r;
  r.compiled = true;
  r.correctness.checked = true;
  r.correctness.passed = true;
  r.rounds.resize(3);
  r.speedup.ratio = ratio;
  r.passed = passed;
  return r;
}

double Reward(SampleVerdict v, const VerificationReport* r) {
  const std::vector<std::string> none;
  return DefaultReward(RewardInput{v, r, &none});
}

TEST_CASE(
    "the default reward is half correctness plus half the capped speedup") {
  const VerificationReport fast = Timed(2.0, true);
  CHECK(Reward(SampleVerdict::kFaster, &fast) == doctest::Approx(1.5));
  const VerificationReport slow = Timed(0.8, false);
  CHECK(Reward(SampleVerdict::kNotFaster, &slow) == doctest::Approx(0.9));
  const VerificationReport huge = Timed(10.0, true);
  CHECK(Reward(SampleVerdict::kFaster, &huge) == doctest::Approx(2.0));
}

TEST_CASE("wrong, uncompiled, hacked and missing candidates earn nothing") {
  const VerificationReport r = Timed(2.0, false);
  CHECK(Reward(SampleVerdict::kWrong, &r) == 0.0);
  CHECK(Reward(SampleVerdict::kHack, &r) == 0.0);
  CHECK(Reward(SampleVerdict::kCompileError, &r) == 0.0);
  CHECK(Reward(SampleVerdict::kNoCode, nullptr) == 0.0);
  CHECK(Reward(SampleVerdict::kNotFaster, nullptr) == 0.0);
}

TEST_CASE("the reward weights, cap and hack reward are configurable") {
  DefaultRewardOptions o;
  o.correct_weight = 1.0;
  o.speedup_weight = 1.0;
  o.speedup_cap = 1.5;
  o.hack_reward = -1.0;
  RewardFunction f = MakeDefaultReward(o);
  const VerificationReport r = Timed(2.0, true);
  const std::vector<std::string> none;
  CHECK(f(RewardInput{SampleVerdict::kFaster, &r, &none}) ==
        doctest::Approx(2.5));
  CHECK(f(RewardInput{SampleVerdict::kHack, &r, &none}) == -1.0);
}

TEST_CASE("verdicts follow the verifier's findings, hacks before failures") {
  VerificationReport r;
  r.compiled = true;
  CHECK(VerdictFor(r, {"inputs_modified"}) == SampleVerdict::kHack);
  CHECK(VerdictFor(r, {"wrong_output", "inconsistent_results"}) ==
        SampleVerdict::kHack);
  CHECK(VerdictFor(r, {"forbidden_import"}) == SampleVerdict::kHack);
  CHECK(VerdictFor(r, {"load_error"}) == SampleVerdict::kLoadError);
  CHECK(VerdictFor(r, {"crashed"}) == SampleVerdict::kRuntimeError);
  CHECK(VerdictFor(r, {"wrong_output"}) == SampleVerdict::kWrong);
  CHECK(VerdictFor(r, {"not_faster"}) == SampleVerdict::kNotFaster);
  r.compiled = false;
  CHECK(VerdictFor(r, {"compile_error"}) == SampleVerdict::kCompileError);
  r.passed = true;
  CHECK(VerdictFor(r, {}) == SampleVerdict::kFaster);
  CHECK_FALSE(IsHackFinding("wrong_output"));
  CHECK(IsHackFinding("implausible_speedup"));
}

}  // namespace
}  // namespace skilldb::policy
