// The Policy Agent: writes a kernel for a verifier task over several turns,
// conditioned on the skills the Selection Agent picks, with execution
// feedback after each turn.
//
// One turn: build the retrieval query from the task (task_context.h), let
// the selector pick skills (selection.h), build the prompt (prompt.h), ask
// the backbone for `samples` completions, extract a candidate from each
// (extract.h), verify the candidates in parallel on the verifier's workers,
// score each (reward.h) and turn its report into feedback. The best sample
// of a turn (highest reward, earliest on ties) continues the trajectory: the
// next turn's prompt shows its answer and feedback. The trajectory stops
// after `max_turns` or, with stop_on_speedup, after the first turn with a
// verified speedup.
//
// Model output is untrusted: a completion with no code, a wrong entry
// point, an oversized source or a reward hack is a sample with a verdict
// (never an error, never a crash). A backbone or verifier failure ends the
// trajectory with status "failed" and the reason; the turns before it stand.
//
// Each turn is appended to the rollout store as it ends, and its usage
// events (retrieved, selected; per sample with code: applied, then
// succeeded or failed for every selected skill) go to the library in one
// batch.
//
// A PolicyAgent is immutable after construction; Solve is safe to call
// from many threads at once (the rollout pool does) when its dependencies
// are, as the ones in this tree are.
#ifndef SKILLDB_POLICY_POLICY_AGENT_H_
#define SKILLDB_POLICY_POLICY_AGENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "skilldb/library.h"
#include "skilldb/llm/backbone.h"
#include "skilldb/policy/extract.h"
#include "skilldb/policy/prompt.h"
#include "skilldb/policy/reward.h"
#include "skilldb/policy/selection.h"
#include "skilldb/policy/task_context.h"
#include "skilldb/policy/trajectory.h"
#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb::policy {

class RolloutStore;

struct PolicyOptions {
  int max_turns = 3;  // T, >= 1. Default: 3.
  int samples = 1;    // completions per turn, >= 1. Default: 1.
  // Sampling (its n is replaced by `samples`). Default: the backbone
  // defaults with max_tokens 4096 and temperature 0.8.
  llm::SamplingOptions sampling = DefaultSampling();
  bool stop_on_speedup = true;  // stop after a verified speedup. Default: on.
  int verify_rounds = 3;        // timing rounds per candidate. Default: 3.
  int timed_calls_per_round = 30;  // Default: 30 (the verifier's minimum).
  // Samples verified at once (they queue on the verifier's workers anyway);
  // 0 = all of a turn's samples. Default: 0.
  int verify_parallelism = 0;
  // Input seed for verification; 0 = drawn by the verifier (use a fixed
  // one only in tests). Default: 0.
  uint64_t verify_seed = 0;
  // Filters handed to the selector: the task's op family, the device arch
  // (the verifier's device class for CUDA, e.g. sm_90; none on the host)
  // and the language (cuda for CUDA).
  bool filter_ops = true;
  bool filter_arch = true;
  bool filter_language = true;
  // Run the selector every turn (later turns add the previous verdict's
  // words to the query); false selects once. Default: true.
  bool reselect_each_turn = true;
  bool record_usage = true;  // usage events to the library. Default: true.
  // The library version every selection of the trajectory reads (a
  // training step pins one); unset = the head at each selection. Default:
  // unset.
  std::optional<Version> library_version;
  // Sampling seed for the selector's model reranker (SelectionRequest::
  // seed); unset = the reranker's own. Default: unset.
  std::optional<uint64_t> selection_seed;
  std::string group;         // Trajectory::group (RL grouping). Default: "".
  FeedbackOptions feedback;

  static llm::SamplingOptions DefaultSampling();
};

// InvalidArgument naming the field that is out of range.
Status ValidatePolicyOptions(const PolicyOptions& options);

// What a PolicyAgent works with. Pointers are borrowed: REQUIRES each
// outlives the agent. Optional ones may be null.
struct PolicyAgentDeps {
  llm::Backbone* backbone = nullptr;         // required
  SkillSelector* selector = nullptr;         // required
  // required: the API's Verifier (its reports carry the findings and
  // phase times the rewards and feedback read; DeviceClass() gives the
  // arch filter of a CUDA task's selections and the device its prompts
  // name).
  Verifier* verifier = nullptr;
  Library* library = nullptr;     // usage events; null: none are recorded
  RolloutStore* store = nullptr;  // null: trajectories are not stored
  // null: a CodeExtractor / KernelPromptBuilder owned by the agent.
  const CompletionExtractor* extractor = nullptr;
  const PromptBuilder* prompts = nullptr;
  RewardFunction reward;  // empty: DefaultReward
};

class PolicyAgent {
 public:
  // InvalidArgument when a required dependency is missing.
  static Result<std::unique_ptr<PolicyAgent>> Make(PolicyAgentDeps deps);

  // Runs one trajectory on `task`. Returns it (status "failed" with the
  // reason when the backbone or verifier gave up mid-way). Errors:
  // InvalidArgument for bad options; the rollout store's errors (the
  // trajectory could not be recorded).
  Result<Trajectory> Solve(const PolicyTask& task,
                           const PolicyOptions& options) const;

  // Called after every turn with the trajectory so far (e.g. progress
  // output). Must be safe to call from several threads. Default: none.
  void set_turn_observer(
      std::function<void(const Trajectory&, const TurnRecord&)> observer) {
    observer_ = std::move(observer);
  }

  const PolicyAgentDeps& deps() const { return deps_; }

 private:
  explicit PolicyAgent(PolicyAgentDeps deps);
  class Run;

  PolicyAgentDeps deps_;
  // The verifier's device class, asked once (the first CUDA selection or
  // prompt); "" when it cannot say (no arch filter then, and the prompt
  // names kDefaultCudaArch).
  std::string DeviceClass() const;

  std::unique_ptr<CompletionExtractor> own_extractor_;
  std::unique_ptr<PromptBuilder> own_prompts_;
  mutable std::once_flag device_once_;
  mutable std::string device_class_;
  std::function<void(const Trajectory&, const TurnRecord&)> observer_;
};

// The usage events of one turn (see the file comment), counts summed per
// skill and event.
std::vector<UsageRecord> TurnUsage(const TurnRecord& turn);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_POLICY_AGENT_H_
