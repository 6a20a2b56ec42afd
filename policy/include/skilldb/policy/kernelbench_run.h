// The field's evaluation loop on KernelBench (`skilldb kernelbench run`):
// for each selected problem and sample, a trajectory of up to `turns`
// turns (prompt -> generate -> extract -> verify -> feedback) against any
// Backbone, verified by a KernelBench Evaluator as answers arrive. Many
// trajectories run at once, so one's generation overlaps another's
// verification. The run directory gets KernelBench's generation layout
// (level_L_problem_P_sample_S_kernel.py: each sample's best turn), every
// turn's answer under turns/, the trajectories (trajectories.jsonl), every
// turn as it is judged (turns.jsonl) and the verifier's results
// (skilldb_eval.jsonl, which `kernelbench eval` resumes from, so the
// closing table is exactly `kernelbench eval`'s).
//
// A run stopped mid-way and started again on the same directory, with the
// same model, format and skill setting, resumes: trajectories that had
// ended are not run again, and unfinished ones go on after their last
// judged turn (the model is not asked again for turns it answered). Lines
// of other runs in the directory are passed over.
//
// RunKernelBench is safe to call from one thread at a time per run
// directory; it uses the Backbone, selector and Evaluator from several
// threads (each states that it is safe for that).
#ifndef SKILLDB_POLICY_KERNELBENCH_RUN_H_
#define SKILLDB_POLICY_KERNELBENCH_RUN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/llm/backbone.h"
#include "skilldb/policy/kernelbench_answer.h"
#include "skilldb/policy/selection.h"
#include "skilldb/status.h"
#include "skilldb/verify/kernelbench.h"

namespace skilldb::policy {

struct KernelBenchRunOptions {
  std::string out_dir;   // created if missing. Required.
  int level = 1;         // >= 1
  std::string problems;  // ParseIdList syntax; "" = every imported one
  int turns = 1;         // per trajectory, >= 1. Default: 1.
  int samples = 1;       // trajectories per problem, >= 1. Default: 1.
  KernelBenchFormat format = KernelBenchFormat::kCuda;
  // Sampling of each turn (n is forced to 1: a sample is a trajectory).
  // seed, when set, is offset per problem, sample and turn.
  llm::SamplingOptions sampling;
  // Trajectories in flight at once; 0 = min(16, trajectories).
  int concurrency = 0;
  // Skill selection (null = --skills off) and where evidence is read
  // (null = no evidence). Retrieval reads `library_version` when set.
  SkillSelector* selector = nullptr;
  Library* library = nullptr;
  std::optional<Version> library_version;
  KernelBenchPromptOptions prompt;
  KernelBenchFeedbackOptions feedback;
  KernelBenchExtractOptions extract;
  // Completions kept in trajectories.jsonl are cut to this. Default: 256 KiB.
  size_t stored_completion_bytes = size_t{256} << 10;
  std::function<void(const std::string&)> progress;  // one line per turn
};

// The best answer so far of every trajectory after each turn.
struct TurnScore {
  int turn = 0;
  int trajectories = 0;
  int answered = 0;   // trajectories with an extracted answer by this turn
  int correct = 0;    // best so far correct (and credited)
  int faster = 0;     // best so far correct, credited and speedup > 1
  double fast_1 = 0;  // faster / trajectories
};

struct KernelBenchRunReport {
  verify::kb::RunReport eval;  // kernelbench eval's report over the layout
  std::vector<TurnScore> turns;
  int trajectories = 0;
  int generation_errors = 0;  // turns whose generation failed
  int no_answer = 0;          // turns with nothing extracted
  // From an earlier run in the same directory (same model, format and
  // skill setting): trajectories that had ended there (not run again) and
  // judged turns of unfinished ones (not generated again).
  int resumed_trajectories = 0;
  int resumed_turns = 0;
  std::string model;
  std::string format;
  bool skills = false;
  std::string trajectories_path;
};

// Runs the loop. Errors: InvalidArgument for bad options, NotFound when
// the store has none of the selected problems, IOError for the run
// directory; a failed generation or verification of one answer is a value
// in its trajectory, not an error.
Result<KernelBenchRunReport> RunKernelBench(
    const KernelBenchRunOptions& options, llm::Backbone* backbone,
    verify::kb::Evaluator* evaluator, const verify::kb::TaskStore& store);

std::string KernelBenchRunReportToJson(const KernelBenchRunReport& report);
// kernelbench eval's table, then the per-turn improvement (not escaped:
// the caller escapes).
std::string FormatKernelBenchRunReport(const KernelBenchRunReport& report);

}  // namespace skilldb::policy

#endif  // SKILLDB_POLICY_KERNELBENCH_RUN_H_
