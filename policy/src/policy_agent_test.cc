// The Policy Agent over the real engine and the real host verifier, with
// an in-test Backbone scripted per test (tests/agents/ runs the same loop
// over the HTTP client and the scripted protocol server).
#include "skilldb/policy/policy_agent.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include "agents_test_util.h"
#include "skilldb/policy/rollout_store.h"

namespace skilldb::policy {
namespace {

using testing::CandidateSource;
using testing::Fenced;
using testing::QueueBackbone;

constexpr char kNoCompile[] =
    "extern \"C\" int launch(const Tensor* in, int, Tensor* out, int, void*) "
    "{\n  return undeclared_identifier_42;\n}\n";

struct Rig {
  testing::SeedLibrary lib;
  std::unique_ptr<verify::TaskVerifier> verifier = testing::HostVerifier();
  QueueBackbone backbone;
  Bm25Selector selector{&*lib};
  skilldb::testing::TempDir dir;
  std::unique_ptr<RolloutStore> store;

  explicit Rig(std::vector<std::string> answers)
      : backbone(std::move(answers)) {
    auto s = RolloutStore::Open(dir.Sub("rollouts.sqlite"));
    REQUIRE(s.ok());
    store = std::move(*s);
  }
  std::unique_ptr<PolicyAgent> Agent() {
    PolicyAgentDeps d;
    d.backbone = &backbone;
    d.selector = &selector;
    d.verifier = verifier.get();
    d.library = &*lib;
    d.store = store.get();
    auto a = PolicyAgent::Make(d);
    REQUIRE(a.ok());
    return std::move(*a);
  }
};

PolicyOptions Small(int turns, int samples) {
  PolicyOptions o;
  o.max_turns = turns;
  o.samples = samples;
  return o;
}

TEST_CASE(
    "a kernel that fails to compile, then verifies faster, solves the task in "
    "two turns") {
  Rig rig({Fenced(kNoCompile),
           Fenced(CandidateSource("sum_dim1_fp32", "fast.cc"))});
  const PolicyTask task = testing::HostTask("sum_dim1_fp32");
  auto t = rig.Agent()->Solve(task, Small(3, 1));
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  INFO(ToJson(*t));
  CHECK(t->status == "finished");
  REQUIRE(t->turns.size() == 2);  // stopped early on the verified speedup
  const SampleRecord& first = t->turns[0].samples.at(0);
  CHECK(first.verdict == SampleVerdict::kCompileError);
  CHECK(first.reward == 0.0);
  CHECK(first.feedback.find("undeclared_identifier_42") != std::string::npos);
  const SampleRecord& second = t->turns[1].samples.at(0);
  CHECK(second.verdict == SampleVerdict::kFaster);
  CHECK(second.reward >= 1.0);
  CHECK(t->solved);
  CHECK(t->best_turn == 1);
  // The second prompt showed the first answer and its compiler output.
  const std::vector<llm::Chat> prompts = rig.backbone.prompts();
  REQUIRE(prompts.size() == 2);
  REQUIRE(prompts[1].size() == 4);
  CHECK(prompts[1][2].role == "assistant");
  CHECK(prompts[1][3].content.find("undeclared_identifier_42") !=
        std::string::npos);
  // The generation keeps its tokens; the store has the same trajectory.
  CHECK(second.generation.completion_token_ids.size() ==
        second.generation.completion.size());
  CHECK(second.generation.prompt_token_ids == std::vector<int32_t>{1, 2, 3});
  auto stored = rig.store->LoadTrajectory(t->id);
  REQUIRE(stored.ok());
  CHECK(*stored == *t);
}

TEST_CASE(
    "bad model output ends in verdicts with zero reward, never in an error") {
  const PolicyTask task = testing::HostTask("sum_dim1_fp32");
  auto hacks = verify::LoadCandidates(testing::HostOptions().task_dir,
                                      task.task, verify::SourceLanguage::kCpp);
  REQUIRE(hacks.ok());
  std::string hack;
  for (const verify::Candidate& c : *hacks) {
    if (c.spec.name == "hack_modify_inputs") hack = c.source;
  }
  REQUIRE(!hack.empty());
  std::string renamed = CandidateSource("sum_dim1_fp32", "fast.cc");
  renamed.replace(renamed.find("launch"), 6, "launch_kernel");
  Rig rig({"I would rather describe the idea: walk the rows in memory order.",
           Fenced(renamed), Fenced(hack), std::string(3 << 20, 'x')});
  auto t = rig.Agent()->Solve(task, Small(1, 4));
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  INFO(ToJson(*t));
  REQUIRE(t->turns.size() == 1);
  const auto& s = t->turns[0].samples;
  REQUIRE(s.size() == 4);
  CHECK(s[0].verdict == SampleVerdict::kNoCode);
  CHECK(s[1].verdict == SampleVerdict::kLoadError);
  CHECK(s[2].verdict == SampleVerdict::kHack);
  CHECK(std::find(s[2].findings.begin(), s[2].findings.end(),
                  "inputs_modified") != s[2].findings.end());
  CHECK(s[3].verdict == SampleVerdict::kNoCode);
  for (const SampleRecord& r : s) CHECK(r.reward == 0.0);
  CHECK_FALSE(t->solved);
  CHECK(t->status == "finished");
}

// A verifier that reports a device class and judges nothing (the test's
// answer holds no code, so nothing reaches Verify).
class DeviceClassVerifier : public Verifier {
 public:
  std::string_view Name() const override { return "device-class"; }
  Result<VerificationReport> Verify(const VerificationRequest&) override {
    return Status::Unavailable("this verifier judges nothing");
  }
  Result<std::string> DeviceClass() override { return std::string("sm_80"); }
};

TEST_CASE("a CUDA task's prompt names the verifier's device class") {
  Rig rig({"No code in this answer."});
  DeviceClassVerifier sm80;
  PolicyAgentDeps d;
  d.backbone = &rig.backbone;
  d.selector = &rig.selector;
  d.verifier = &sm80;
  auto agent = PolicyAgent::Make(d);
  REQUIRE(agent.ok());
  PolicyTask task = testing::HostTask("sum_dim1_fp32");
  task.backend = verify::Backend::kCuda;
  auto t = (*agent)->Solve(task, Small(1, 1));
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  const std::vector<llm::Chat> prompts = rig.backbone.prompts();
  REQUIRE(prompts.size() == 1);
  const std::string& system = prompts[0].at(0).content;
  CHECK(system.find("Backend: CUDA on an NVIDIA GPU of device class sm_80.") !=
        std::string::npos);
}

TEST_CASE(
    "a source over the verifier's limit is judged too large without running") {
  verify::VerifierOptions o = testing::HostOptions();
  o.limits.max_source_bytes = 64;
  Rig rig({Fenced(CandidateSource("sum_dim1_fp32", "fast.cc"))});
  rig.verifier = testing::HostVerifier(o);
  auto t = rig.Agent()->Solve(testing::HostTask("sum_dim1_fp32"), Small(1, 1));
  REQUIRE(t.ok());
  const SampleRecord& s = t->turns.at(0).samples.at(0);
  CHECK(s.verdict == SampleVerdict::kTooLarge);
  CHECK_FALSE(s.report.has_value());
  CHECK(s.feedback.find("over the verifier's limit") != std::string::npos);
}

TEST_CASE(
    "a backbone that gives up ends the trajectory as failed and keeps its "
    "turns") {
  Rig rig({Fenced(kNoCompile)});  // one answer for three turns
  auto t = rig.Agent()->Solve(testing::HostTask("sum_dim1_fp32"), Small(3, 1));
  REQUIRE(t.ok());
  CHECK(t->status == "failed");
  CHECK(t->error.find("no answer left") != std::string::npos);
  CHECK(t->turns.size() == 1);
  auto stored = rig.store->LoadTrajectory(t->id);
  REQUIRE(stored.ok());
  CHECK(stored->status == "failed");
  CHECK(stored->turns.size() == 1);
}

TEST_CASE("usage events of a turn reach the library in one batch") {
  // A wrong kernel: applied and failed for every selected skill (and no
  // timing rounds, which keeps the test short).
  Rig rig({Fenced(CandidateSource("sum_dim1_fp32", "wrong.cc"))});
  auto t = rig.Agent()->Solve(testing::HostTask("sum_dim1_fp32"), Small(1, 1));
  REQUIRE(t.ok());
  REQUIRE(t->turns.at(0).samples.at(0).verdict == SampleVerdict::kWrong);
  const SelectionRecord& sel = t->turns.at(0).selection;
  REQUIRE(!sel.selected.empty());
  auto used = rig.lib->GetUsage(sel.selected[0].id);
  REQUIRE(used.ok());
  CHECK(used->count(UsageEvent::kRetrieved) == 1);
  CHECK(used->count(UsageEvent::kSelected) == 1);
  CHECK(used->count(UsageEvent::kApplied) == 1);
  CHECK(used->count(UsageEvent::kFailed) == 1);
  CHECK(used->count(UsageEvent::kSucceeded) == 0);
  auto unselected = rig.lib->GetUsage(sel.retrieved.back().id);
  REQUIRE(unselected.ok());
  CHECK(unselected->count(UsageEvent::kRetrieved) == 1);
  CHECK(unselected->count(UsageEvent::kApplied) == 0);
}

TEST_CASE("a turn the rollout store refuses is never counted in the library") {
  Rig rig({Fenced(CandidateSource("sum_dim1_fp32", "wrong.cc"))});
  // The store breaks under the agent: its turns table is gone.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(rig.dir.Sub("rollouts.sqlite").c_str(), &db) ==
          SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "DROP TABLE turns", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  sqlite3_close(db);
  auto t = rig.Agent()->Solve(testing::HostTask("sum_dim1_fp32"), Small(1, 1));
  REQUIRE_FALSE(t.ok());
  uint64_t events = 0;
  REQUIRE(rig.lib
              ->ScanUsage([&](const std::string&, const UsageCounters& c) {
                for (uint64_t n : c.counts) events += n;
                return true;
              })
              .ok());
  CHECK(events == 0);
  auto rows = rig.store->List({});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].status == "failed");
  CHECK((*rows)[0].turns_done == 0);
}

TEST_CASE("turn usage counts applications per sample with code") {
  TurnRecord turn;
  turn.selection.retrieved = {{"a", 1, "", 1, 1, 1}, {"b", 1, "", 1, 2, 1}};
  turn.selection.selected = {{"a", 1, "", 1, 1, 1}};
  SampleRecord fast, wrong, none;
  fast.verdict = SampleVerdict::kFaster;
  wrong.verdict = SampleVerdict::kWrong;
  none.verdict = SampleVerdict::kNoCode;
  turn.samples = {fast, wrong, none};
  std::vector<UsageRecord> u = TurnUsage(turn);
  auto count = [&](const std::string& id, UsageEvent e) {
    for (const UsageRecord& r : u)
      if (r.id == id && r.event == e) return r.count;
    return uint64_t{0};
  };
  CHECK(count("a", UsageEvent::kRetrieved) == 1);
  CHECK(count("b", UsageEvent::kRetrieved) == 1);
  CHECK(count("a", UsageEvent::kSelected) == 1);
  CHECK(count("a", UsageEvent::kApplied) == 2);
  CHECK(count("a", UsageEvent::kSucceeded) == 1);
  CHECK(count("a", UsageEvent::kFailed) == 1);
  CHECK(count("b", UsageEvent::kApplied) == 0);
  turn.selection.reused = true;
  CHECK(count("a", UsageEvent::kRetrieved) == 1);  // u computed before
  std::vector<UsageRecord> reused = TurnUsage(turn);
  for (const UsageRecord& r : reused) CHECK(r.event != UsageEvent::kRetrieved);
}

TEST_CASE("options out of range and missing dependencies are refused") {
  CHECK(PolicyAgent::Make(PolicyAgentDeps{}).status().IsInvalidArgument());
  PolicyOptions o;
  o.max_turns = 0;
  CHECK(ValidatePolicyOptions(o).IsInvalidArgument());
  o = PolicyOptions();
  o.samples = 0;
  CHECK(ValidatePolicyOptions(o).IsInvalidArgument());
  CHECK(ValidatePolicyOptions(PolicyOptions()).ok());
}

}  // namespace
}  // namespace skilldb::policy
