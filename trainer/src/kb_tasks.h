// KernelBench problems as the RL loop's tasks (internal to trainer/): the
// verifier over the KernelBench evaluator (the confined torch runner) that
// the Policy and Summary agents call, the reward that reads its findings,
// the answer templates of the problems and their policy tasks, and the
// held-out score (KernelBench's fast_p).
//
// KbVerifier is safe for concurrent use; the rest are plain functions.
#ifndef SKILLDB_TRAINER_KB_TASKS_H_
#define SKILLDB_TRAINER_KB_TASKS_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "skilldb/policy/reward.h"
#include "skilldb/policy/task_context.h"
#include "skilldb/policy/trajectory.h"
#include "skilldb/status.h"
#include "skilldb/trainer/config.h"
#include "skilldb/trainer/param_task.h"
#include "skilldb/verifier.h"
#include "skilldb/verify/kernelbench.h"

namespace skilldb::trainer::internal {

// "kernelbench/level<L>/<id>": the task name the KernelBench verifier reads.
std::string KbTaskName(int level, int id);

// The engine's Verifier over KernelBench tasks, judged by `evaluator`,
// whose reports are verify/'s (kernelbench.h ToVerificationReport: the
// findings as codes the rewards and the Policy Agent's verdicts read).
// Every result is kept for the held-out score (Find).
class KbVerifier : public Verifier {
 public:
  KbVerifier(std::shared_ptr<verify::kb::Evaluator> evaluator,
             verify::kb::TaskStore store, std::string device_class)
      : evaluator_(std::move(evaluator)),
        store_(std::move(store)),
        device_class_(std::move(device_class)) {}
  std::string_view Name() const override { return "kernelbench"; }
  // InvalidArgument for a task not of the form "kernelbench/level<L>/<id>",
  // NotFound for a problem the store lacks, the evaluator's errors
  // (Unavailable: no runner).
  Result<VerificationReport> Verify(const VerificationRequest& r) override;
  Result<std::string> DeviceClass() override { return device_class_; }
  // The result behind a report (its task and candidate_hash); nullopt when
  // this verifier did not judge it.
  std::optional<verify::kb::EvalResult> Find(const std::string& task,
                                             const std::string& hash);

 private:
  std::shared_ptr<verify::kb::Evaluator> evaluator_;
  verify::kb::TaskStore store_;
  std::string device_class_;
  std::mutex mu_;
  std::map<std::string, verify::kb::EvalResult> results_;  // GUARDED_BY(mu_)
};

// The trainer's reward shape (rewards.h: correct_weight + speedup_weight x
// min(speedup, cap)) on KernelBench reports: hack_reward for a hack
// verdict or any finding that voids a result, 0 for an answer that is not
// correct, and no speedup term for a correct answer PyTorch does the work
// of (not credited).
policy::RewardFunction MakeKbReward(const RewardConfig& rewards);

// The answer template of problem `id`: DIR/level<L>_<id>.json (param_task.h)
// whose task must be KbTaskName(level, id), for `backend`, in the
// language `format` names ("cpp", "cuda" or "triton"). Errors:
// LoadTaskFamily's, InvalidArgument naming the file and the field that does not
// match.
Result<TaskFamily> LoadKbFamily(const KernelBenchConfig& config, int id,
                                const std::string& backend);

// The policy task of a problem answered through `family`: the name the
// verifier reads, the family's description and the problem's name, the
// problem's source as the reference (prompts, retrieval), the backend.
policy::PolicyTask KbPolicyTask(const verify::kb::Problem& problem,
                                const TaskFamily& family);

// The best judged answer of a trajectory (correct and credited first, then
// the larger speedup; any judged answer before none), as sample 0.
std::optional<verify::kb::EvalResult> BestResult(KbVerifier* verifier,
                                                 const policy::Trajectory& t);

}  // namespace skilldb::trainer::internal

#endif  // SKILLDB_TRAINER_KB_TASKS_H_
