// The library version pinned per step (rl_loop.h): a commit made while a
// step's rollouts run (as the Summary Agent's or another writer's) is not
// read by that step's rollouts and is read by the next step's, and the
// version after a step is tagged with the step. The template family on the
// host backend, the tiny fixture model, BM25 selection (deterministic).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "skilldb/policy/task_context.h"
#include "test_dir.h"
#include "trainer_impl.h"

namespace skilldb::trainer {
namespace {

struct Seen {
  int step = 0;
  Version version = 0;  // the version the rollout's selection read
  bool probe = false;   // the probe skill among its candidates
};

TEST_CASE(
    "a skill committed during a step is read from the next step on, "
    "and the tag names the step") {
  ScopedTempDir temp("skilldb_pin_test");
  Trainer::Impl run;
  run.config.out_dir = temp.path();
  run.config.seed = 5;
  run.config.groups = 3;
  run.config.max_turns = 1;
  run.config.max_new_tokens = 8;
  run.config.sft_epochs = 0;
  run.config.selection = false;  // BM25: what the pinned read returns
  run.config.summary = false;    // the probe is the only commit
  run.paths = DefaultTrainerPaths();
  Status init = run.Init();
  REQUIRE_MESSAGE(init.ok(), init.ToString());

  // The probe: the task's own retrieval query as its text, so BM25 puts
  // it among the candidates whenever the version read holds it.
  Skill probe = Skill::Make("pin-probe", policy::RetrievalQuery(run.task));
  probe.body = probe.title;
  if (!run.task.task.family.empty()) probe.ops = {run.task.task.family};
  Version committed = 0;
  run.before_rollout = [&](int step, int index) {
    if (step != 1 || index != 1) return;  // after step 1's first rollout
    auto v = run.library->Put(probe);
    REQUIRE_MESSAGE(v.ok(), v.status().ToString());
    committed = *v;
  };
  std::vector<Seen> seen;
  run.after_rollout = [&](const policy::Trajectory& t) {
    REQUIRE(!t.turns.empty());
    const policy::SelectionRecord& sel = t.turns[0].selection;
    Seen s{run.step, sel.library_version, false};
    for (const auto& ref : sel.retrieved) s.probe |= ref.id == "pin-probe";
    seen.push_back(s);
  };

  const Version before = run.library->CurrentVersion();
  auto step1 = run.Step();
  REQUIRE_MESSAGE(step1.ok(), step1.status().ToString());
  REQUIRE(committed > before);
  auto step2 = run.Step();
  REQUIRE_MESSAGE(step2.ok(), step2.status().ToString());

  REQUIRE(seen.size() == 6);
  for (int i = 0; i < 3; ++i) {
    CHECK(seen[i].step == 1);
    CHECK(seen[i].version == before);  // the step's pinned version
    CHECK_FALSE(seen[i].probe);        // rollouts 1, 2 ran after the commit
  }
  for (int i = 3; i < 6; ++i) {
    CHECK(seen[i].step == 2);
    CHECK(seen[i].version >= committed);
    CHECK(seen[i].probe);
  }
  // The probe is retrievable at all (else the checks above prove nothing).
  CHECK(seen[3].probe);

  auto tags = run.library->Tags();
  REQUIRE(tags.ok());
  auto tag = std::find_if(tags->begin(), tags->end(),
                          [](const TagInfo& t) { return t.name == "step-1"; });
  REQUIRE(tag != tags->end());
  CHECK(tag->version >= committed);  // step 1's commits, named by its tag
  CHECK(tag->version <= seen[3].version);
}

}  // namespace
}  // namespace skilldb::trainer
