// The RL step loop: multi-turn REINFORCE over the three agents sharing one
// backbone (the Learner's module), with rewards from the real verifier.
//
// One step: tasks_per_step tasks from the task family; for each, `groups`
// rollouts, each through the real agents: the Selection Agent (a
// reranker over the shared backbone that picks among the BM25 candidates,
// inside policy's RerankingSelector), the Policy Agent (max_turns turns with
// verifier feedback; the family's PromptBuilder and CompletionExtractor turn
// the parameter text into a real candidate) and, for a solved rollout, the
// Skill Summary Agent (verified insertion into the library). Trajectories
// and distillations go to the rollout store. Rewards (rewards.h), then
// advantages (advantages.h), then one learner step on every agent's
// completion tokens. Identical candidate sources are verified once per run
// (a reward cache keyed by task, language and source; hits are counted).
//
// Summary decisions are trained one step late: their reward adds the
// later utility of the skill they wrote (successful uses in the next
// step's rollouts), so they join the next step's batch.
//
// Every rollout of a step reads the library version the step started with;
// the Summary Agent's commits land after the step's rollouts and the
// version after them is tagged "step-N" (rank 0), so a skill written at
// step t can be selected from step t+1 on. Rank 0 writes TensorBoard event
// files (events.h) beside steps.jsonl.
//
// With a process group every rank runs its own rollouts (seeds differ by
// rank); gradients are averaged; rank 0 alone writes the library (usage,
// summaries), steps.jsonl and checkpoints.
#ifndef SKILLDB_TRAINER_RL_LOOP_H_
#define SKILLDB_TRAINER_RL_LOOP_H_

#include <functional>
#include <memory>
#include <string>

#include "skilldb/status.h"
#include "skilldb/trainer/config.h"

namespace skilldb::trainer {

class ProcessGroupHandle;

struct TrainerPaths {
  std::string seed_dir;       // data/seed (*.jsonl) for a new library
  std::string tasks_dir;      // trainer/tasks (the family files)
  std::string fixture_model;  // models/testdata/qwen2-tiny
};

// The paths of this build (compiled in; $SKILLDB_SEED_DIR,
// $SKILLDB_TRAINER_TASKS and $SKILLDB_TRAINER_MODEL override them).
TrainerPaths DefaultTrainerPaths();

class Trainer {
 public:
  // Builds everything the run needs in config.out_dir (created): the model
  // (config.model_dir, or the fixture with a longer context window), the
  // library (library/, seeded on first use), the rollout store, the
  // verifier, the agents. Errors name the part that failed.
  static Result<std::unique_ptr<Trainer>> Create(
      const TrainConfig& config, const TrainerPaths& paths,
      std::shared_ptr<ProcessGroupHandle> group = nullptr);
  ~Trainer();

  // The SFT cold start (config.sft_data or demonstrations of the family):
  // filter, then sft_epochs passes. Returns one JSON line (filter counts,
  // NLL before and after, steps). Skipped (a line saying so) when there
  // are no records or sft_epochs is 0, or when resuming.
  Result<std::string> ColdStart();
  // One RL step; its JSON line (also appended to steps.jsonl on rank 0).
  Result<std::string> Step();
  // ColdStart, then config.steps steps (from the resumed step), with
  // checkpoints; every line goes to `on_line`.
  Status Run(const std::function<void(const std::string&)>& on_line);
  Status SaveCheckpoint(const std::string& dir);

  class Impl;

 private:
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_RL_LOOP_H_
