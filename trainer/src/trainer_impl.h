// Trainer::Impl (internal to trainer/): the run's state between steps.
// rl_loop.cc builds it (Init, in phases) and runs the cold start;
// rl_step.cc takes one RL step over it (StepRun, in phases).
#ifndef SKILLDB_TRAINER_TRAINER_IMPL_H_
#define SKILLDB_TRAINER_TRAINER_IMPL_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kb_free.h"
#include "kb_tasks.h"
#include "loop_agents.h"
#include "skilldb/generation.h"
#include "skilldb/library.h"
#include "skilldb/policy/policy_agent.h"
#include "skilldb/policy/rollout_store.h"
#include "skilldb/policy/selection.h"
#include "skilldb/policy/task_context.h"
#include "skilldb/reranker.h"
#include "skilldb/summarize/summary_agent.h"
#include "skilldb/trainer/events.h"
#include "skilldb/trainer/learner.h"
#include "skilldb/trainer/param_task.h"
#include "skilldb/trainer/rl_loop.h"
#include "skilldb/trainer/sft_data.h"

namespace skilldb::trainer {

// A distillation whose decisions are trained at the next step, when the
// later uses of the skill it wrote are known.
struct PendingSummary {
  std::string task, skill_id, rollout;
  bool inserted = false;
  std::vector<GenerationRecord> generations;
};

// One KernelBench problem the loop trains or evaluates on: its answer
// template and policy task, and the agents wired to them (the Policy
// Agent's prompts and extractor are the template's; the Summary Agent's
// short prompt too).
// With free-form answers (kernelbench.answers "free") the Policy Agent's
// prompts and extractor are the KernelBench ones instead.
struct KbSlot {
  TaskFamily family;
  verify::kb::Problem problem;
  policy::PolicyTask task;
  std::unique_ptr<internal::ParamPromptBuilder> prompts;
  std::unique_ptr<internal::ParamExtractor> extractor;
  std::unique_ptr<internal::KbFreePromptBuilder> free_prompts;
  std::unique_ptr<internal::KbFreeExtractor> free_extractor;
  std::unique_ptr<policy::PolicyAgent> policy;
  std::unique_ptr<internal::ParamDistillPrompts> distill_prompts;
  std::unique_ptr<summarize::SummaryAgent> summary;  // rank 0, with summary
};

// A task of a step, whichever the source: the template family's members
// of Trainer::Impl, or a KbSlot's.
struct SlotRef {
  const TaskFamily* family = nullptr;
  const policy::PolicyTask* task = nullptr;
  const internal::ParamPromptBuilder* prompts = nullptr;
  policy::PolicyAgent* policy = nullptr;
  summarize::SummaryAgent* summary = nullptr;  // null: no distillation
  // The Policy Agent's prompts with free-form answers; null: `prompts`.
  const policy::PromptBuilder* free_prompts = nullptr;
};

class Trainer::Impl {
 public:
  TrainConfig config;
  TrainerPaths paths;
  std::shared_ptr<ProcessGroupHandle> group;
  int rank = 0;
  TaskFamily family;
  std::string model_dir;
  std::unique_ptr<Learner> learner;
  std::unique_ptr<Library> library;
  std::unique_ptr<policy::RolloutStore> store;
  std::unique_ptr<internal::CachingVerifier> verifier;
  policy::PolicyTask task;
  // The agents, wired once (WireAgents): the family's prompt builder and
  // extractor, the Selection Agent's reranker and selector, the Policy
  // Agent (each rollout passes its own options: seeds, group), and the
  // Summary Agent (rank 0, when config.summary).
  std::unique_ptr<internal::ParamPromptBuilder> prompts;
  std::unique_ptr<internal::ParamExtractor> extractor;
  std::unique_ptr<Reranker> reranker;
  std::unique_ptr<policy::SkillSelector> selector;
  std::unique_ptr<policy::PolicyAgent> policy;
  std::unique_ptr<internal::ParamDistillPrompts> distill_prompts;
  std::unique_ptr<summarize::SummaryAgent> summary;
  // Scalars of every step for TensorBoard (rank 0).
  std::unique_ptr<EventWriter> events;
  // The skills the Summary Agent added in this run (read back from the
  // library's provenance on open, so a resumed run knows them too).
  std::set<std::string> run_skills;
  std::mt19937_64 rng;
  int step = 0;  // RL steps done
  bool resumed = false;
  std::vector<PendingSummary> pending;
  // KernelBench as the task source (config.kernelbench): the verifier
  // behind the cache (owned by `verifier`), the train and held-out
  // problems in config order.
  internal::KbVerifier* kb = nullptr;
  std::vector<std::unique_ptr<KbSlot>> kb_train, kb_heldout;
  std::string kb_device;  // the device line of free-form prompts
  // Test seams: called before each training rollout of a step (step, index
  // in the step) and after it with its trajectory. Unset in runs.
  std::function<void(int, int)> before_rollout;
  std::function<void(const policy::Trajectory&)> after_rollout;

  // The tasks steps draw from: the family's one, or the train problems.
  std::vector<SlotRef> TrainSlots() const;
  static SlotRef Ref(const KbSlot& slot);

  Status Init();
  Result<std::string> ColdStart();
  Result<std::string> Step();  // rl_step.cc
  Status Save(const std::string& dir);
  uint64_t LibrarySize();
  // The selection options of config.loop.
  policy::SelectionOptions Selection() const;
  // The selection request of the task's first turn, as the Policy Agent
  // makes it (for the cold start's prompts).
  policy::SelectionRequest FirstTurnRequest(
      const policy::PolicyTask& task) const;  // asks the verifier

 private:
  Status LoadFamily();
  Status OpenLearner();
  Status OpenLibrary();
  Status SeedLibrary();
  Status OpenVerifier();
  Status WireAgents();
  Status OpenKernelBench();
  Status WireKbSlot(KbSlot* slot);
  Status WireSummary(const TaskFamily& family,
                     std::unique_ptr<internal::ParamDistillPrompts>* prompts,
                     std::unique_ptr<summarize::SummaryAgent>* agent);
  Status Resume();
  std::vector<SftRecord> Demonstrations();
  void SlotDemonstrations(const SlotRef& slot, int count,
                          std::vector<SftRecord>* records);
  void SkillDemonstrations(const SlotRef& slot,
                           const std::vector<ParamValues>& combos,
                           const policy::PromptInput& first_turn,
                           std::vector<SftRecord>* records);
  void SummaryDemonstrations(const SlotRef& slot,
                             const std::vector<ParamValues>& combos,
                             std::vector<SftRecord>* records);
  Status ReadRunSkills();
  summarize::SummaryOptions SummaryAgentOptions() const;
  Result<std::vector<TrainSequence>> SftSequences(
      const std::vector<SftRecord>& records);
  Status SftEpochs(std::vector<TrainSequence>* seqs, nlohmann::json* line);
};

}  // namespace skilldb::trainer

#endif  // SKILLDB_TRAINER_TRAINER_IMPL_H_
