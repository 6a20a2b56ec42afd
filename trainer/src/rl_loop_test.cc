// The RL loop end to end on the host backend: the tiny fixture model
// (random weights), the real agents, the real host verifier, a real
// library and rollout store. Fixed seeds.
#include "skilldb/trainer/rl_loop.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "skilldb/trainer/report.h"
#include "test_dir.h"

namespace skilldb::trainer {
namespace {

using nlohmann::json;

TrainConfig LearningConfig(const std::string& out) {
  TrainConfig c;
  c.out_dir = out;
  c.seed = 3;
  c.steps = 10;
  c.groups = 8;
  c.max_turns = 1;
  c.max_new_tokens = 32;
  c.optim.lr = 1e-3;
  c.sft_lr = 5e-3;
  c.optim.warmup_steps = 2;
  c.sft_demo_records = 36;  // every combination once
  c.sft_epochs = 5;
  c.sft_filter.max_similarity = 0.95;  // parameter lines are much alike
  return c;
}

// The stated margin: the mean policy reward of the last three steps beats
// the first three by at least 0.15 (rewards are in [0, 2]).
constexpr double kMargin = 0.15;

TEST_CASE("the policy learns the template's parameters from verifier rewards") {
  skilldb::trainer::ScopedTempDir temp("skilldb_loop_test");
  const std::string out = temp.path();
  TrainConfig c = LearningConfig(out);
  // The Summary Agent with the family's short prompt: its own prompt is
  // some 2,600 of the fixture's tokens, and each distillation is trained on
  // at the next step (over half of this test's time; the policy's rewards
  // were the same either way at seed 3). The resume test keeps its own.
  c.loop.family_summary_prompt = true;
  auto trainer = Trainer::Create(c, DefaultTrainerPaths());
  REQUIRE_MESSAGE(trainer.ok(), trainer.status().ToString());
  std::vector<json> steps;
  json sft;
  Status s = (*trainer)->Run([&](const std::string& line) {
    MESSAGE(line);
    json j = json::parse(line);
    if (j.contains("phase")) {
      sft = j;
    } else {
      steps.push_back(j);
    }
  });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  REQUIRE(steps.size() == 10);
  CHECK(sft["nll_after"].get<double>() < sft["nll_before"].get<double>());
  auto mean_policy = [&](size_t from, size_t to) {
    double sum = 0;
    for (size_t i = from; i < to; ++i) {
      sum += steps[i]["reward"]["policy"]["mean"].get<double>();
    }
    return sum / (to - from);
  };
  const double first = mean_policy(0, 3), last = mean_policy(7, 10);
  MESSAGE("mean policy reward: first 3 steps " << first << ", last 3 " << last);
  CHECK(last > first + kMargin);
  int trained = 0;
  for (const auto& j : steps) {
    CHECK(j.contains("advantage"));
    CHECK(j["time_s"]["total"].get<double>() > 0);
    CHECK(j["library"]["size"].get<int>() > 0);
    // A step whose rewards were all equal has no gradient and takes no
    // optimizer step; the others all train.
    CHECK(j["trained"].get<bool>() == (j["grad_norm"].get<double>() != 0));
    trained += j["trained"].get<bool>();
    CHECK(j["failed_rollouts"].get<int>() == 0);
  }
  CHECK(trained >= 8);
  CHECK(steps.back()["reward_cache"]["hits"].get<int>() > 0);

  // The report reads the run.
  auto r = WriteReport(out);
  REQUIRE(r.ok());
  CHECK(r->steps == 10);
}

TEST_CASE(
    "a run resumed from a checkpoint takes the same next step as the run "
    "that went on") {
  skilldb::trainer::ScopedTempDir temp("skilldb_resume_test");
  const std::string went_on_dir = temp.path() + "/went_on";
  const std::string resumed_dir = temp.path() + "/resumed";
  TrainConfig c = LearningConfig(went_on_dir);
  // Rewards from correctness alone: the measured speedup would make the two
  // runs' rewards differ by the host's timing noise, not by the checkpoint.
  c.rewards.speedup_weight = 0;
  auto trainer = Trainer::Create(c, DefaultTrainerPaths());
  REQUIRE_MESSAGE(trainer.ok(), trainer.status().ToString());
  REQUIRE((*trainer)->ColdStart().ok());
  // Step until a step distilled summaries: their decisions are trained at
  // the next step, so the checkpoint must carry them.
  int distilled = 0;
  for (int i = 0; i < 6 && distilled == 0; ++i) {
    auto line = (*trainer)->Step();
    REQUIRE_MESSAGE(line.ok(), line.status().ToString());
    distilled = json::parse(*line)["distilled"].get<int>();
  }
  REQUIRE(distilled > 0);
  REQUIRE((*trainer)->SaveCheckpoint(went_on_dir + "/checkpoints/here").ok());
  // The run directory as it is at the checkpoint (library, rollout store),
  // for the resumed run; nothing writes to it while it is copied.
  std::filesystem::copy(went_on_dir, resumed_dir,
                        std::filesystem::copy_options::recursive);
  auto went_on_line = (*trainer)->Step();
  REQUIRE_MESSAGE(went_on_line.ok(), went_on_line.status().ToString());
  trainer->reset();

  TrainConfig r = c;
  r.out_dir = resumed_dir;
  r.resume = resumed_dir + "/checkpoints/here";
  auto resumed = Trainer::Create(r, DefaultTrainerPaths());
  REQUIRE_MESSAGE(resumed.ok(), resumed.status().ToString());
  auto sft = (*resumed)->ColdStart();
  REQUIRE(sft.ok());
  CHECK(json::parse(*sft)["skipped"] == "resumed");
  auto resumed_line = (*resumed)->Step();
  REQUIRE_MESSAGE(resumed_line.ok(), resumed_line.status().ToString());

  const json a = json::parse(*went_on_line), b = json::parse(*resumed_line);
  MESSAGE("went on: " << *went_on_line);
  MESSAGE("resumed: " << *resumed_line);
  CHECK(a["summaries_trained"].get<int>() > 0);
  // The same step, bit for bit: what was sampled (model, rollout seeds),
  // rewarded and advantaged (the pending summaries of the step before), and
  // the update (optimizer, schedule, shuffling RNG). Not compared: this
  // step's own distillations (generated_tokens counts them), whose prompts
  // carry the speedups the verifier measured, and the timings.
  for (const char* key :
       {"step", "loss", "pg_loss", "kl", "grad_norm", "lr", "train_tokens",
        "summaries_trained", "sequences", "reward", "return", "advantage",
        "library"}) {
    CHECK_MESSAGE(a[key] == b[key], key);
  }
}

}  // namespace
}  // namespace skilldb::trainer
