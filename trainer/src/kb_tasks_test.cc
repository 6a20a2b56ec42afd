// KernelBench results as the loop's reports and rewards (kb_tasks.h), on
// results built here (no Python).
#include "kb_tasks.h"

#include <doctest/doctest.h>

#include "skilldb/trainer/config.h"
#include "skilldb/trainer/rl_loop.h"
#include "test_dir.h"

namespace skilldb::trainer::internal {
namespace {

namespace kb = verify::kb;

kb::EvalResult Correct(double speedup) {
  kb::EvalResult r;
  r.compiled = r.correct = r.credited = true;
  r.verdict = "correct";
  r.trials = r.trials_passed = 2;
  r.answer_hash = "h";
  for (int i = 0; i < 3; ++i) {
    RoundTiming t;
    t.speedup_ratio = speedup;
    r.rounds.push_back(t);
  }
  r.estimate = {speedup, speedup * 0.9, speedup * 1.1, 0.95};
  r.speedup_eager = speedup;
  return r;
}

// The reward as the Policy Agent computes it: the verdict from the report
// and its findings, then the reward function.
double Reward(const kb::EvalResult& r) {
  VerificationRequest q;
  q.task = "kernelbench/level1/1";
  const VerificationReport rep = kb::ToVerificationReport(q, r, {});
  const policy::SampleVerdict v = policy::VerdictFor(rep, rep.findings);
  RewardConfig c;  // 0.5 x correct + 0.5 x min(speedup, 3), hack 0
  return MakeKbReward(c)({v, &rep, &rep.findings});
}

TEST_CASE(
    "a correct credited KernelBench answer earns the correct weight "
    "and its capped speedup") {
  CHECK(Reward(Correct(2.0)) == doctest::Approx(0.5 + 0.5 * 2.0));
  CHECK(Reward(Correct(7.0)) == doctest::Approx(0.5 + 0.5 * 3.0));
  VerificationRequest q;
  CHECK(kb::ToVerificationReport(q, Correct(2.0), {}).passed);
}

TEST_CASE(
    "a KernelBench answer PyTorch does the work of earns no speedup "
    "reward") {
  kb::EvalResult r = Correct(2.0);
  r.verdict = "not_credited";
  r.credited = false;
  r.findings.push_back({verify::FindingCode::kTorchDoesTheWork, "most time"});
  CHECK(Reward(r) == doctest::Approx(0.5));
  VerificationRequest q;
  CHECK_FALSE(kb::ToVerificationReport(q, r, {}).passed);
  // Also when the result names no finding, only the verdict.
  r.findings.clear();
  CHECK(Reward(r) == doctest::Approx(0.5));
}

TEST_CASE("a KernelBench hack earns the hack reward however fast it is") {
  for (auto code :
       {verify::FindingCode::kCachedOutput, verify::FindingCode::kHiddenThread,
        verify::FindingCode::kPatchedFunction,
        verify::FindingCode::kInputsModified}) {
    kb::EvalResult r = Correct(3.0);
    r.verdict = "hack";
    r.findings.push_back({code, "caught"});
    CAPTURE(verify::FindingCodeName(code));
    CHECK(Reward(r) == 0.0);
  }
}

TEST_CASE(
    "a wrong KernelBench answer with a lowered-precision finding is "
    "wrong, not a hack") {
  kb::EvalResult r = Correct(1.0);
  r.verdict = "incorrect";
  r.correct = false;
  r.trials_passed = 0;
  r.findings.push_back({verify::FindingCode::kPrecisionLowered, "far off"});
  VerificationRequest q;
  const VerificationReport rep = kb::ToVerificationReport(q, r, {});
  CHECK(policy::VerdictFor(rep, rep.findings) == policy::SampleVerdict::kWrong);
  CHECK(Reward(r) == 0.0);
}

TEST_CASE("wrong, uncompiled and crashed KernelBench answers earn nothing") {
  kb::EvalResult wrong = Correct(2.0);
  wrong.verdict = "incorrect";
  wrong.correct = false;
  wrong.trials_passed = 1;
  CHECK(Reward(wrong) == 0.0);
  kb::EvalResult broken;
  broken.verdict = "compile_error";
  CHECK(Reward(broken) == 0.0);
  kb::EvalResult crashed = Correct(2.0);
  crashed.verdict = "runtime_error";
  crashed.trials = crashed.trials_passed = 0;
  CHECK(Reward(crashed) == 0.0);
}

TEST_CASE("the kernelbench config names the key it refuses") {
  TrainConfig c;
  c.kernelbench.store = "/tmp/store";
  c.kernelbench.families = "/tmp/families";
  c.kernelbench.train = {1, 2};
  c.kernelbench.heldout = {3};
  CHECK(ValidateTrainConfig(c).ok());
  TrainConfig overlap = c;
  overlap.kernelbench.heldout = {2};
  Status s = ValidateTrainConfig(overlap);
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find("kernelbench.heldout") != std::string::npos);
  TrainConfig empty = c;
  empty.kernelbench.train.clear();
  CHECK(ValidateTrainConfig(empty).IsInvalidArgument());
  TrainConfig twice = c;
  twice.kernelbench.train = {1, 1};
  CHECK(ValidateTrainConfig(twice).IsInvalidArgument());
  TrainConfig gpu = c;
  gpu.kernelbench.format = "cuda";  // backend is host
  CHECK(ValidateTrainConfig(gpu).IsInvalidArgument());
  auto parsed = TrainConfigFromJson(
      R"({"kernelbench": {"store": "s", "families": "f", "train": [1],
          "heldout": [4], "eval_every": 2}})");
  REQUIRE(parsed.ok());
  CHECK(parsed->kernelbench.eval_every == 2);
  CHECK(parsed->kernelbench.heldout == std::vector<int>{4});
  auto bad = TrainConfigFromJson(
      R"({"kernelbench": {"store": "s", "families": "f", "train": [1],
          "heldout": [0]}})");
  CHECK(bad.status().IsInvalidArgument());
  auto unknown = TrainConfigFromJson(R"({"kernelbench": {"split": 1}})");
  CHECK(unknown.status().IsInvalidArgument());
}

TEST_CASE(
    "kernelbench.answers is template or free, survives the config's JSON, "
    "and free refuses the template-parameter summary prompt") {
  auto parsed = TrainConfigFromJson(
      R"({"kernelbench": {"store": "s", "families": "f", "train": [1],
          "heldout": [4], "answers": "free"}})");
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  CHECK(parsed->kernelbench.answers == "free");
  auto back = TrainConfigFromJson(TrainConfigToJson(*parsed));
  REQUIRE(back.ok());
  CHECK(back->kernelbench.answers == "free");
  CHECK(TrainConfig{}.kernelbench.answers == "template");
  auto prose = TrainConfigFromJson(
      R"({"kernelbench": {"store": "s", "families": "f", "train": [1],
          "heldout": [4], "answers": "prose"}})");
  CHECK(prose.status().IsInvalidArgument());
  CHECK(prose.status().message().find("kernelbench.answers") !=
        std::string::npos);
  TrainConfig c = *parsed;
  c.loop.family_summary_prompt = true;
  const Status s = ValidateTrainConfig(c);
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find("loop.family_summary_prompt") != std::string::npos);
  c.kernelbench.answers = "template";
  CHECK(ValidateTrainConfig(c).ok());
}

TEST_CASE(
    "a run refuses a split naming a problem the task store lacks, "
    "naming the key") {
  ScopedTempDir temp("skilldb_kb_split_test");
  const std::string root = temp.path();
  auto store = kb::TaskStore::Open(root + "/store");  // empty
  REQUIRE(store.ok());
  TrainConfig c;
  c.out_dir = root + "/run";
  c.sft_epochs = 0;
  c.kernelbench.store = root + "/store";
  c.kernelbench.families = root + "/families";
  c.kernelbench.train = {1};
  c.kernelbench.heldout = {2};
  auto trainer = Trainer::Create(c, DefaultTrainerPaths());
  REQUIRE_FALSE(trainer.ok());
  CHECK(trainer.status().IsInvalidArgument());
  CHECK(trainer.status().message().find(
            "'kernelbench.train' names problem 1") != std::string::npos);
}

}  // namespace
}  // namespace skilldb::trainer::internal
