// The RL loop over KernelBench tasks on the CPU: a problem set this test
// writes (KernelBench's format: Model, get_inputs, get_init_inputs),
// imported into a task store; answers built from a template per problem
// whose parameters the policy writes (the work: the answer's own fused
// C++ kernel through load_inline, the kernel called six times, or
// PyTorch's operators; and whether a bias is added, which makes the answer
// wrong), judged by the confined torch runner on CPU tensors. The
// rewards differ by variant (fused > repeated > PyTorch's, not credited >
// wrong = 0), so a tiny model can learn which to write. Fixed seeds.
//
// Needs a Python with torch (Debian's python3-torch): /usr/bin/python3 or
// $SKILLDB_KB_PYTHON; without one the binary exits 77 (skipped).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kb_cpu_problems.h"
#include "skilldb/trainer/param_task.h"
#include "skilldb/trainer/rl_loop.h"
#include "skilldb/verify/kernelbench.h"
#include "test_dir.h"
#include "trainer_impl.h"

namespace skilldb::trainer {
namespace {

using nlohmann::json;

using kb_testing::KbPython;
using kb_testing::KbTestCacheDir;
using kb_testing::WriteTestFile;

// One problem under three names (two trained on, one held out). Its
// reference makes four passes over memory where the answer's fused loop
// makes one, so the fused answer is faster on any CPU.
std::string Problem(int n) {
  return kb_testing::ScaleAddProblem(
      n, kb_testing::ScaleAddReference::kFourPasses);
}

// The answer template: the extension of verify/kernelbench's host test
// (same load_inline arguments, so the same cached build for every
// variant), then ModelNew's forward from the parameters.
const std::string kTemplate = kb_testing::ScaleAddAnswer(R"PY(
    def forward(self, x, y):
{{work}}{{bias}}
)PY");

json Family(int id) {
  return {
      {"name", "scale_add_kb"},
      {"task", "kernelbench/level1/" + std::to_string(id)},
      {"backend", "host"},
      {"language", "cpp"},
      {"template", "scale_add.py.tmpl"},
      {"description",
       "out = alpha * x + y on CPU tensors. Choose the work (fused: the "
       "answer's own C++ loop; repeat: that loop six times; torch: "
       "PyTorch's operators) and the bias (none, or shift by 0.01)."},
      {"params",
       {{{"name", "work"},
         {"values",
          {{"fused", "        return ext.scale_add(x, y, self.alpha)"},
           {"repeat",
            "        for _ in range(6):\n"
            "            out = ext.scale_add(x, y, self.alpha)\n"
            "        return out"},
           {"torch", "        return (self.alpha * x + y).contiguous()"}}}},
        {{"name", "bias"}, {"values", {{"none", ""}, {"shift", " + 1e-2"}}}}}}};
}

void Write(const std::string& path, const std::string& text) {
  REQUIRE(WriteTestFile(path, text));
}

// Problems 1..count of size size(id), their answer templates and the store
// they are imported into, under root (KernelBench/, families/, store/).
void ImportScaleAdd(const std::string& root, int count, int (*size)(int id)) {
  for (int id = 1; id <= count; ++id) {
    Write(root + "/KernelBench/level1/" + std::to_string(id) + "_Scale_add_" +
              std::to_string(id) + ".py",
          Problem(size(id)));
    Write(root + "/families/level1_" + std::to_string(id) + ".json",
          Family(id).dump(2));
  }
  Write(root + "/families/scale_add.py.tmpl", kTemplate);
  verify::kb::ImportOptions io;
  io.path = root + "/KernelBench";
  io.level = 1;
  io.runner.python = KbPython();
  io.runner.device = "cpu";
  auto store = verify::kb::TaskStore::Open(root + "/store");
  REQUIRE(store.ok());
  auto imported = verify::kb::ImportProblems(io, &*store);
  REQUIRE_MESSAGE(imported.ok(), imported.status().ToString());
  REQUIRE(imported->imported.size() == static_cast<size_t>(count));
}

// The stated margin: the mean policy reward of the last three steps beats
// the first three by at least 0.25 (rewards are in [0, 2]: 0.5 for a correct
// answer plus 0.5 x its speedup capped at 3; a wrong one 0). With 8
// rollouts a step and no KL term, one CI run of seed 3 (of about ten) fell
// out of the answer format from step 6 and ended 0.44 below, and seeds 5-7
// failed on 2026-12-06 (rewards come from timings: each run differs). With
// 16 rollouts a step and the KL term held to the cold-started policy
// (optim.kl_coef 0.1), seeds 1-7, two runs at a time on 2 cores: 0.45 to
// 0.73 above, but seed 7 0.20 (its first steps the luckiest, 0.70).
// trainer/bench/kb_loop_seeds.sh runs such a sweep.
constexpr double kMargin = 0.25;

TEST_CASE(
    "the loop learns KernelBench answers from the torch runner's "
    "rewards and reports held-out fast_p") {
  ScopedTempDir temp("skilldb_kb_loop_test");
  const std::string root = temp.path();
  ImportScaleAdd(root, 3, [](int id) { return (1 << 18) + id * 1024; });

  TrainConfig c;
  c.out_dir = root + "/run";
  c.seed = 3;
  c.steps = 10;
  c.groups = 16;
  c.max_turns = 1;
  c.max_new_tokens = 24;
  c.optim.lr = 3e-3;
  c.optim.kl_coef = 0.1;  // to the policy after its cold start
  c.optim.warmup_steps = 2;
  // The seed sweep behind kMargin's figures (trainer/bench/kb_loop_seeds.sh)
  // sets these; the test as CI runs it leaves them unset.
  if (const char* v = std::getenv("SKILLDB_KB_LOOP_SEED"))
    c.seed = std::atoi(v);
  if (const char* v = std::getenv("SKILLDB_KB_LOOP_GROUPS"))
    c.groups = std::atoi(v);
  if (const char* v = std::getenv("SKILLDB_KB_LOOP_KL"))
    c.optim.kl_coef = std::atof(v);
  c.sft_lr = 5e-3;
  c.sft_demo_records = 48;  // each combination of each problem four times
  c.sft_epochs = 12;
  // The demonstrations repeat each parameter line on purpose (six lines):
  // none is a near-duplicate to drop.
  c.sft_filter.max_similarity = 2.0;
  c.verify_rounds = 2;
  c.timed_calls = 8;
  c.warmup_calls = 1;
  // The Summary Agent on the first verified win of a step (not
  // cold-started on summaries: skills are the co-evolution test's).
  c.loop.summaries_per_step = 1;
  c.kernelbench.store = root + "/store";
  c.kernelbench.level = 1;
  c.kernelbench.train = {1, 2};
  c.kernelbench.heldout = {3};
  c.kernelbench.format = "cpp";
  c.kernelbench.families = root + "/families";
  c.kernelbench.eval_every = 5;
  c.kernelbench.python = KbPython();
  c.kernelbench.cache_dir = KbTestCacheDir();
  c.kernelbench.correctness_trials = 2;

  auto trainer = Trainer::Create(c, DefaultTrainerPaths());
  REQUIRE_MESSAGE(trainer.ok(), trainer.status().ToString());
  std::vector<json> steps;
  Status s = (*trainer)->Run([&](const std::string& line) {
    MESSAGE(line);
    json j = json::parse(line);
    if (!j.contains("phase")) steps.push_back(j);
  });
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  REQUIRE(steps.size() == 10);
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

  int evaluated = 0;
  for (const auto& j : steps) {
    CHECK(j["failed_rollouts"].get<int>() == 0);
    CHECK(j["library"]["pinned"] == j["library"]["version_before"]);
    for (auto& [task, n] : j["tasks"].items()) {
      CHECK((task == "kernelbench/level1/1" || task == "kernelbench/level1/2"));
    }
    if (!j.contains("heldout")) continue;
    ++evaluated;
    const json& h = j["heldout"];
    CHECK(h["problems"] == 1);
    for (const char* p : {"0", "0.5", "0.8", "1", "1.5", "2"}) {
      REQUIRE(h["fast_p"].contains(p));
      CHECK(h["fast_p"][p].get<double>() >= 0);
      CHECK(h["fast_p"][p].get<double>() <= 1);
    }
    CHECK(h["pass_rate"].get<double>() >= h["fast_p"]["1"].get<double>());
  }
  CHECK(evaluated == 2);  // steps 5 and 10
  // Verified wins depend on this machine's timings (a speedup whose
  // interval is above 1): what the Summary Agent made of them is reported,
  // not asserted.
  int distilled = 0, added = 0;
  for (const auto& j : steps) {
    distilled += j["distilled"].get<int>();
    added += j["skills_added"].get<int>();
  }
  MESSAGE("Summary Agent: " << distilled << " distillations, " << added
                            << " skills added");
  CHECK(steps.back()["reward_cache"]["hits"].get<int>() > 0);
}

// Everything the messages of a chat say, in order.
std::string ChatText(const std::vector<ChatMessage>& chat) {
  std::string out;
  for (const ChatMessage& m : chat) out += m.content + "\n";
  return out;
}

// The plumbing of free-form answers (kernelbench.answers "free"), not
// learning: the tiny random model writes no ModelNew, so what is asserted
// is that the Policy Agent the loop wires is prompted with the KernelBench
// prompt (turn 2 with the earlier answer and its feedback), reads
// completions with the KernelBench extractor (reward 0 and the reason kept
// for what it cannot use), that a step (rollout, rewards, training) and
// the held-out evaluation complete, and that the reader, the verifier and
// the prompt the loop wires find, judge and report a written answer. The
// two-turn trajectory comes from the wired agent itself, outside a step:
// a step trains on every prompt token (about 1.4 ms a token of the
// fixture on one core, and a prompt is some 2,700), so the step runs one
// single-turn rollout.
TEST_CASE(
    "free-form KernelBench answers: the loop prompts with the KernelBench "
    "prompt and judges what the extractor reads") {
  ScopedTempDir temp("skilldb_kb_free_test");
  const std::string root = temp.path();
  ImportScaleAdd(root, 2, [](int id) { return 4096 + id; });

  Trainer::Impl run;
  TrainConfig& c = run.config;
  c.out_dir = root + "/run";
  c.seed = 5;
  c.groups = 1;
  c.max_turns = 1;
  c.max_new_tokens = 16;
  c.sft_demo_records = 0;
  c.sft_epochs = 0;
  c.selection = false;
  c.summary = false;
  c.verify_rounds = 1;
  c.timed_calls = 2;
  c.kernelbench.store = root + "/store";
  c.kernelbench.train = {1};
  c.kernelbench.heldout = {2};
  c.kernelbench.format = "cpp";
  c.kernelbench.families = root + "/families";
  c.kernelbench.answers = "free";
  c.kernelbench.eval_every = 1;
  c.kernelbench.python = KbPython();
  c.kernelbench.cache_dir = KbTestCacheDir();
  c.kernelbench.correctness_trials = 1;
  // The KernelBench prompt (the role, the format, the problem's source) is
  // about 5,000 of the fixture's tokens: a longer window for it.
  c.loop.fixture_context_tokens = 12288;
  // One skill shown (a skill is up to 7,000 bytes of body and code, and a
  // step trains on every prompt token).
  c.loop.select_k = 1;
  run.paths = DefaultTrainerPaths();
  Status init = run.Init();
  REQUIRE_MESSAGE(init.ok(), init.ToString());
  REQUIRE(run.kb_train.size() == 1);
  KbSlot& slot = *run.kb_train[0];

  // Two turns of the wired agent.
  policy::PolicyOptions po;
  po.max_turns = 2;
  po.samples = 1;
  po.sampling.max_tokens = 16;
  po.sampling.temperature = 1.0;
  po.sampling.seed = 11;
  po.verify_rounds = 1;
  po.timed_calls_per_round = 2;
  po.group = "plumbing";
  auto traj = slot.policy->Solve(slot.task, po);
  REQUIRE_MESSAGE(traj.ok(), traj.status().ToString());
  REQUIRE(traj->turns.size() == 2);
  for (const policy::TurnRecord& turn : traj->turns) {
    REQUIRE(turn.samples.size() == 1);
    const policy::SampleRecord& smp = turn.samples[0];
    const std::string prompt = ChatText(smp.generation.prompt);
    // kb_prompt's: the problem's source and the run's answer format (cpp:
    // load_inline with cpp_sources), not the template's parameters.
    CHECK(prompt.find("out += self.alpha * x") != std::string::npos);
    CHECK(prompt.find("N = 4097") != std::string::npos);
    CHECK(prompt.find("cpp_sources") != std::string::npos);
    CHECK(prompt.find("class ModelNew") != std::string::npos);
    CHECK(prompt.find("Choose the work") == std::string::npos);
    // The selected skill, in the first user message.
    REQUIRE(turn.selection.selected.size() == 1);
    CHECK(smp.generation.prompt[1].content.find(
              turn.selection.selected[0].title) != std::string::npos);
    CHECK(std::isfinite(smp.reward));
    if (smp.verdict == policy::SampleVerdict::kNoCode) {
      CHECK(smp.extraction.rfind("kernelbench extraction: ", 0) == 0);
      CHECK(smp.reward == 0.0);
    } else {
      CHECK(smp.report.has_value());
    }
  }
  // Turn 2 shows turn 1's answer and the feedback on it.
  const auto& second = traj->turns[1].samples[0].generation.prompt;
  REQUIRE(second.size() >= 4);
  CHECK(second[second.size() - 2].content ==
        traj->turns[0].samples[0].generation.completion);
  CHECK(second.back().content.find("Verifier feedback") != std::string::npos);

  // One step of the loop, and the held-out evaluation.
  auto line = run.Step();
  REQUIRE_MESSAGE(line.ok(), line.status().ToString());
  const json j = json::parse(*line);
  CHECK(j["failed_rollouts"].get<int>() == 0);
  CHECK(std::isfinite(j["reward"]["policy"]["mean"].get<double>()));
  REQUIRE(j.contains("heldout"));
  CHECK(j["heldout"]["problems"] == 1);

  // The reader, the verifier and the prompt the loop wires, on an answer
  // as a model writes it (prose, then the ModelNew in a fence): found,
  // judged correct, and its result told in the next turn's prompt; prose
  // without code: nothing, and why.
  const std::string answer =
      "Here is a fused kernel.\n```python\n" +
      Render(slot.family, {{"work", "fused"}, {"bias", "none"}}) +
      "\n```\nIt makes one pass.";
  auto e = slot.free_extractor->Extract(slot.task, answer);
  REQUIRE(e.ok());
  REQUIRE(e->found);
  auto nothing = slot.free_extractor->Extract(slot.task, "I would fuse them.");
  REQUIRE(nothing.ok());
  CHECK_FALSE(nothing->found);
  CHECK(nothing->note.rfind("kernelbench extraction: ", 0) == 0);
  VerificationRequest q;
  q.task = slot.task.task.name;
  q.candidate.language = e->language;
  q.candidate.source = e->source;
  auto rep = run.kb->Verify(q);
  REQUIRE_MESSAGE(rep.ok(), rep.status().ToString());
  CHECK(rep->correctness.passed);
  const double reward = internal::MakeKbReward(c.rewards)(
      {policy::VerdictFor(*rep, rep->findings), &*rep, &rep->findings});
  CHECK(reward >= c.rewards.correct_weight);
  auto result = run.kb->Find(q.task, rep->candidate_hash);
  REQUIRE(result.has_value());
  policy::PromptInput next;
  next.task = &slot.task;
  next.prior.push_back({{}, answer, "the agent's own words"});
  const auto chat = slot.free_prompts->Build(next);
  CHECK(chat.back().content.find(policy::FormatKernelBenchFeedback(
            policy::ExtractKernelBenchAnswer(answer), &*result)) !=
        std::string::npos);
  CHECK(chat.back().content.find("the agent's own words") == std::string::npos);
}

}  // namespace
}  // namespace skilldb::trainer

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    listing |= a.rfind("--list", 0) == 0 || a.rfind("-l", 0) == 0;
  }
  const std::string probe =
      "'" + skilldb::kb_testing::KbPython() +
      "' -c 'import torch, torch.utils.cpp_extension' >/dev/null 2>&1";
  if (!listing && std::system(probe.c_str()) != 0) {
    std::printf(
        "skipped: %s has no torch (install python3-torch or set "
        "SKILLDB_KB_PYTHON)\n",
        skilldb::kb_testing::KbPython().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
