// Co-evolution on the host backend (issue 36), small and with fixed seeds:
// one cold start, then three arms resumed from it with the same seed and
// budget: the co-evolving library (the Summary Agent adds skills through
// verified insertion), the seed library frozen (no Summary Agent) and no
// skills at all. Then TensorBoard's own reader reads the co-evolving
// run's event files back and the ablation report renders.
#include <doctest/doctest.h>
#include <stdio.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "build_paths.h"
#include "skilldb/trainer/report.h"
#include "skilldb/trainer/rl_loop.h"
#include "skilldb/trainer/train_command.h"
#include "test_dir.h"

namespace skilldb::trainer {
namespace {

using nlohmann::json;

TrainConfig CoevolutionConfig(const std::string& out) {
  TrainConfig c;
  c.out_dir = out;
  c.seed = 3;
  c.groups = 4;
  c.max_turns = 1;
  c.max_new_tokens = 32;
  c.optim.lr = 1e-3;
  c.optim.warmup_steps = 2;
  c.sft_lr = 5e-3;
  c.sft_demo_records = 36;
  c.sft_epochs = 8;
  c.sft_filter.max_similarity = 0.95;  // parameter lines are much alike
  ApplyCoevolution(&c);
  return c;
}

// Runs `config` and returns its step lines (the cold start's is left out).
std::vector<json> RunArm(const TrainConfig& config) {
  auto trainer = Trainer::Create(config, DefaultTrainerPaths());
  REQUIRE_MESSAGE(trainer.ok(), trainer.status().ToString());
  std::vector<json> steps;
  Status s = (*trainer)->Run([&](const std::string& line) {
    MESSAGE(line.substr(0, 600));
    json j = json::parse(line);
    if (!j.contains("phase")) steps.push_back(j);
  });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return steps;
}

// Runs a command, returns its standard output; fails the test on a non-zero
// exit status.
std::string Output(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  REQUIRE_MESSAGE(status == 0, command << " exited with " << status << ": "
                                       << out.substr(0, 2000));
  return out;
}

// Mean policy reward of one step line.
double PolicyReward(const json& step) {
  return step["reward"]["policy"]["mean"].get<double>();
}

TEST_CASE(
    "a skill stating the right parameters helps the cold-started policy; a "
    "skill the Summary Agent adds through verified insertion is selected in "
    "a later step, beside the frozen and no-skill arms") {
  ScopedTempDir temp("skilldb_coevolution_test");
  const std::string root = temp.path();
  // The cold start, once for every arm (steps 0: only its checkpoint).
  TrainConfig sft = CoevolutionConfig(root + "/sft");
  sft.steps = 0;
  RunArm(sft);
  const std::string checkpoint = root + "/sft/checkpoints/final";

  // The probe: one step of 8 rollouts from the cold start, with a library
  // of one skill that states the parameters the host rewards most
  // (order=rows, a tail loop) against no skill at all; same seeds, so the
  // two differ only in the prompt. No learning enters (the rollouts come
  // before the step's update).
  {
    const std::string seed_dir = root + "/probe_seed";
    REQUIRE(MakeDirs(seed_dir).ok());
    const std::string params = "order=rows tile=256 unroll=4 tail=loop";
    json skill = {
        {"id", "probe-row-order"},
        {"title", "Template parameters " + params},
        {"summary", "Verified faster than the reference: answer the kernel "
                    "template with " + params + "."},
        {"body", "## When to use\nReductions over the middle dimension.\n"
                 "## How\nAnswer with " + params + ".\n## Pitfalls\nNone "
                 "known.\n## How to tell it worked\nA verified speedup."},
        {"code", params},
        {"tags", json::array({"template"})},
        {"ops", json::array({"reduction"})},
        {"language", "any"}};
    REQUIRE(WriteFile(seed_dir + "/probe.jsonl", skill.dump() + "\n").ok());
    TrainerPaths paths = DefaultTrainerPaths();
    paths.seed_dir = seed_dir;
    TrainConfig with = CoevolutionConfig(root + "/probe_with");
    with.resume = checkpoint;
    with.steps = 1;
    with.groups = 8;
    with.summary = false;
    with.selection = false;  // BM25: the one skill is always selected
    auto trainer = Trainer::Create(with, paths);
    REQUIRE_MESSAGE(trainer.ok(), trainer.status().ToString());
    auto with_line = (*trainer)->Step();
    REQUIRE_MESSAGE(with_line.ok(), with_line.status().ToString());
    trainer->reset();
    TrainConfig without = with;
    without.out_dir = root + "/probe_without";
    without.skills = false;
    auto bare = Trainer::Create(without, paths);
    REQUIRE_MESSAGE(bare.ok(), bare.status().ToString());
    auto without_line = (*bare)->Step();
    REQUIRE_MESSAGE(without_line.ok(), without_line.status().ToString());
    const double r_with = PolicyReward(json::parse(*with_line));
    const double r_without = PolicyReward(json::parse(*without_line));
    MESSAGE("probe: policy reward with the skill " << r_with << ", without "
                                                   << r_without);
    CHECK(r_with > r_without);
  }

  TrainConfig co = CoevolutionConfig(root + "/coevolve");
  co.resume = checkpoint;
  co.steps = 4;
  const std::vector<json> steps = RunArm(co);
  REQUIRE(steps.size() == 4);
  // A skill added at some step (verified insertion: the Summary Agent's
  // candidate, re-verified on fresh inputs, committed) and selected by a
  // rollout of a later step, which read the library version pinned for it.
  int added_at = 0;
  bool selected_later = false;
  for (const json& s : steps) {
    const int step = s["step"].get<int>();
    CHECK(s["library"]["pinned"] == s["library"]["version_before"]);
    if (added_at > 0 && step > added_at &&
        s["run_skills"]["rollouts_with"].get<int>() > 0) {
      selected_later = true;
    }
    if (added_at == 0 && s["skills"]["added"].get<int>() > 0) added_at = step;
  }
  CHECK_MESSAGE(added_at > 0, "no skill was added");
  CHECK_MESSAGE(selected_later, "no later rollout selected a run-written skill");
  CHECK(steps.back()["run_skills"]["count"].get<int>() >= 1);

  TrainConfig frozen = CoevolutionConfig(root + "/frozen");
  frozen.resume = checkpoint;
  frozen.steps = 2;
  frozen.summary = false;
  for (const json& s : RunArm(frozen)) {
    CHECK(s["skills"]["added"].get<int>() == 0);
    CHECK(s["library"]["version"] == s["library"]["version_before"]);
  }
  TrainConfig none = CoevolutionConfig(root + "/none");
  none.resume = checkpoint;
  none.steps = 2;
  none.skills = false;
  for (const json& s : RunArm(none)) {
    CHECK(s["run_skills"]["rollouts_with"].get<int>() == 0);
    CHECK_FALSE(s["reward"].contains("selection"));  // no Selection Agent
  }

  // TensorBoard's reader sees every step of the co-evolving run.
  const std::string tools = SKILLDB_TRAINER_TOOLS;
  const json events = json::parse(Output(
      "/usr/bin/python3 " + tools + "/read_events.py --pydeps " +
      SKILLDB_PYDEPS_TB + " " + root + "/coevolve"));
  REQUIRE(events.contains("reward/policy"));
  CHECK(events["reward/policy"].size() == 4);
  CHECK(events["reward/policy"][3][0] == 4);
  double added = 0;
  for (const auto& point : events["skills/added"]) added += point[1].get<double>();
  CHECK(added >= 1);

  // The ablation report renders the three arms.
  Output("/usr/bin/python3 " + tools + "/report.py --ablation " + root +
         "/ablation coevolve=" + root + "/coevolve frozen=" + root +
         "/frozen none=" + root + "/none");
  auto html = ReadFile(root + "/ablation/ablation.html");
  REQUIRE(html.ok());
  CHECK(html->find("data:image/png;base64,") != std::string::npos);
  auto run_report = WriteReport(root + "/coevolve");
  REQUIRE_MESSAGE(run_report.ok(), run_report.status().ToString());
  CHECK(run_report->steps == 4);
}

}  // namespace
}  // namespace skilldb::trainer
