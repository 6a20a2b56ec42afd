// The Skill Summary Agent: turns a trajectory with a verified speedup into
// a candidate skill and submits it through verified insertion; turns a
// failed trajectory into pitfall notes on the skills it used.
//
// Distill(trajectory):
//  1. prompt the backbone with the task, the winning kernel and its
//     timings, the skills the winning turn used and the earlier attempts'
//     verdicts, asking for one JSON object in the skill interchange schema
//     (title, summary, a body with When to use / How / Pitfalls / How to
//     tell it worked, code pattern, tags, ops, arch) that generalizes the
//     technique rather than restating the kernel;
//  2. validate it strictly (skill_candidate.h); on failure, show the model
//     its answer and the error and ask again, at most `max_attempts` times;
//  3. submit it: Library::Propose -> Duplicates -> Verify with the
//     trajectory's kernel as evidence, re-run now by the verifier on fresh
//     inputs and judged by the proposal's reproducibility policy (from the
//     same device class as the trajectory; not run for a candidate that
//     duplicates a live skill under DedupPolicy::kReject, which is rejected
//     regardless) -> Commit. The library's audit
//     log keeps the outcome and, for a rejection, its reasons; an Aborted
//     commit (something changed meanwhile) is proposed again up to
//     `max_commit_attempts` times.
//  The skill's provenance is {source "summary-agent", author
//  "summary-agent/<model>", rollout_id = the trajectory id, task_id = the
//  task}; its lineage derives from the skills the winning turn selected.
//
// AttachPitfalls(trajectory): for a trajectory without a verified speedup,
// ask the backbone for one short note per skill the rollout relied on (what
// went wrong when it was applied), validate it, and attach each note to its
// skill as an unverified annotation (policy/pitfall_notes.h): a new
// revision whose title, summary, body, code and evidence are unchanged,
// committed with kind "annotate" under optimistic concurrency. Content, and
// so everything verified insertion vouched for, is never changed by it.
//
// Every run, whatever its outcome, is returned as a DistillationRecord with
// its model calls and validation errors, and written to the rollout store
// when one is given. A SummaryAgent is immutable after construction and
// safe to use from several threads when its dependencies are.
#ifndef SKILLDB_SUMMARIZE_SUMMARY_AGENT_H_
#define SKILLDB_SUMMARIZE_SUMMARY_AGENT_H_

#include <memory>
#include <string>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/llm/backbone.h"
#include "skilldb/policy/rollout_store.h"
#include "skilldb/policy/task_context.h"
#include "skilldb/policy/trajectory.h"
#include "skilldb/proposal.h"
#include "skilldb/status.h"
#include "skilldb/verifier.h"

namespace skilldb::summarize {

struct SummaryOptions {
  int max_attempts = 3;  // model answers tried per run, >= 1. Default: 3.
  // Default: temperature 0.2, max_tokens 3000. A seed, when set, is mixed
  // with the trajectory's id and the attempt for each call: the same
  // trajectory is distilled from the same samples in any process (a
  // resumed training run relies on it).
  llm::SamplingOptions sampling = DefaultSampling();
  // Dedup policy, near-duplicate threshold, reproducibility policy. Its
  // policy.device_class is set to the trajectory's when empty; author and
  // message are filled in when empty.
  ProposalOptions proposal;
  int verify_rounds = 3;           // Default: 3.
  int timed_calls_per_round = 30;  // Default: 30.
  int max_commit_attempts = 3;     // Aborted commits re-proposed. Default: 3.
  // Pitfall notes kept per skill (oldest dropped). Default: 8.
  size_t pitfalls_per_skill = 8;
  // The status a distilled skill is committed with (ProposalOptions::
  // accepted_status). Default: kCandidate: its code is verified, its prose
  // (which later prompts quote) is model-written and read by no person
  // yet. Candidates are retrieved like active skills, so the library still
  // grows with them; a reviewer promotes or prunes them.
  SkillStatus accepted_status = SkillStatus::kCandidate;

  static llm::SamplingOptions DefaultSampling();
};

// What a Distill prompt is built from.
struct DistillPromptInput {
  const policy::Trajectory* trajectory = nullptr;
  const policy::PolicyTask* task = nullptr;
  const policy::SampleRecord* best = nullptr;  // the verified sample
  std::string used_skills;  // "- `id`: title (summary)" lines or "(none)"
};

// Builds Distill's prompt (step 1 of the file comment). A task family with
// its own answer format (the trainer's template parameters) plugs in a
// short one; the answer is read and checked the same way whatever the
// prompt.
class DistillPromptBuilder {
 public:
  virtual ~DistillPromptBuilder() = default;
  virtual std::vector<ChatMessage> Build(
      const DistillPromptInput& input) const = 0;
  // The family's own check of a candidate that passed summarize/'s checks
  // (a family whose skills state an answer can require the verified one):
  // a non-OK status refuses it, and its message goes back to the model as
  // a malformed answer's does. Default: every candidate passes.
  virtual Status Check(const DistillPromptInput& input,
                       const Skill& skill) const {
    (void)input;
    (void)skill;
    return Status::Ok();
  }
};

// REQUIRES: each pointer outlives the agent; `store` and `distill_prompts`
// may be null (null prompts: the agent's own).
struct SummaryAgentDeps {
  llm::Backbone* backbone = nullptr;
  Library* library = nullptr;
  Verifier* verifier = nullptr;  // for Distill's evidence
  policy::RolloutStore* store = nullptr;
  const DistillPromptBuilder* distill_prompts = nullptr;
};

class SummaryAgent {
 public:
  // InvalidArgument when the backbone, library or verifier is missing.
  static Result<std::unique_ptr<SummaryAgent>> Make(
      SummaryAgentDeps deps, SummaryOptions options = {});

  // Distills `trajectory` (see the file comment); `task` is its task.
  // Returns the record (outcome accepted, rejected, aborted, invalid or
  // error). Errors: FailedPrecondition when the trajectory has no verified
  // speedup; InvalidArgument when `task` is not the trajectory's; the
  // rollout store's write errors.
  Result<policy::DistillationRecord> Distill(
      const policy::Trajectory& trajectory, const policy::PolicyTask& task);

  // Pitfall notes from a failed trajectory (outcome attached, none,
  // invalid or error). Errors: FailedPrecondition for a solved trajectory
  // or one that selected no skills; InvalidArgument as Distill.
  Result<policy::DistillationRecord> AttachPitfalls(
      const policy::Trajectory& trajectory, const policy::PolicyTask& task);

 private:
  SummaryAgent(SummaryAgentDeps deps, SummaryOptions options)
      : deps_(deps), options_(std::move(options)) {}
  class DistillRun;
  class PitfallRun;

  SummaryAgentDeps deps_;
  SummaryOptions options_;
};

}  // namespace skilldb::summarize

#endif  // SKILLDB_SUMMARIZE_SUMMARY_AGENT_H_
