// Distill: a trajectory with a verified speedup -> a candidate skill ->
// verified insertion (see summary_agent.h).
#include <cstdio>

#include "agent_util.h"
#include "skilldb/policy/prompt.h"
#include "skilldb/summarize/skill_candidate.h"
#include "skilldb/summarize/summary_agent.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/text.h"

namespace skilldb::summarize {
namespace {

constexpr char kDistillSystem[] =
    R"(You are the Skill Summary Agent of a kernel-optimization system. A rollout just produced a kernel that the verifier confirmed is correct and reproducibly faster than the reference. Distill the technique that made it faster into a reusable skill for a library that future rollouts search with BM25 before writing their kernels. Generalize: describe the technique so that it applies to other kernels and tasks; do not restate this task's kernel or name the task.

Answer with exactly one JSON object in a ```json block, with these fields and no others:
- "title": one line naming the technique (8 to 120 characters)
- "summary": one line (20 to 400 characters): what the technique does and why it is faster
- "body": markdown with the sections "## When to use", "## How", "## Pitfalls" and "## How to tell it worked"
- "code": a short code pattern showing the technique in general form, not the whole kernel
- "tags": 1 to 12 lowercase words
- "ops": 1 to 8 op families it applies to (matmul, reduction, softmax, elementwise, normalization, conv, attention, scan, transpose, ...)
- "arch": the GPU architectures it needs, like "sm_90" ([] if it does not depend on one)
- "language": "cuda", "triton" or "any"
The library sets id, provenance, lineage, evidence and status itself: leave them out.)";

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

Language LanguageOf(const policy::PolicyTask& task) {
  return task.backend == verify::Backend::kCuda ? Language::kCuda
                                                : Language::kAny;
}

}  // namespace

class SummaryAgent::DistillRun {
 public:
  DistillRun(SummaryAgent& agent, const policy::Trajectory& t,
             const policy::PolicyTask& task)
      : deps_(agent.deps_),
        options_(agent.options_),
        t_(t),
        task_(task),
        best_(*policy::BestSample(t)) {}

  Result<policy::DistillationRecord> Go();

 private:
  std::vector<ChatMessage> Prompt() const;
  std::string UsedSkillsText() const;
  // The model's skill, or nullopt after max_attempts (errors recorded).
  std::optional<Skill> AskForSkill();
  void Submit(Skill skill);
  ProposalOptions Options() const;

  const SummaryAgentDeps& deps_;
  const SummaryOptions& options_;
  const policy::Trajectory& t_;
  const policy::PolicyTask& task_;
  const policy::SampleRecord& best_;
  policy::DistillationRecord rec_;
};

// Library text, one line per skill (a newline in a title cannot start a
// section of the prompt).
std::string SummaryAgent::DistillRun::UsedSkillsText() const {
  std::string out;
  for (const policy::SkillRef& ref : internal::UsedSkills(t_)) {
    out += "- `" + util::OneLine(ref.id) + "`: " + util::OneLine(ref.title);
    auto s = deps_.library->Get(ref.id, ReadOptions{.as_of = std::nullopt});
    if (s.ok() && !s->summary.empty()) {
      out += " (" + util::OneLine(s->summary) + ")";
    }
    out += "\n";
  }
  return out.empty() ? "(none)\n" : out;
}

std::vector<ChatMessage> SummaryAgent::DistillRun::Prompt() const {
  if (deps_.distill_prompts != nullptr) {
    return deps_.distill_prompts->Build(
        DistillPromptInput{&t_, &task_, &best_, UsedSkillsText()});
  }
  const VerificationReport& r = *best_.report;
  std::string user = "# Task\n\n" + policy::FormatTask(task_);
  user += "\n# The verified kernel\n\n" +
          util::FencedBlock(best_.language == "cuda" ? "cuda" : "cpp",
                            policy::Truncate(best_.source, 24000)) +
          "\n";
  user += "Verified on " + r.device + ": speedup " + Num(r.speedup.ratio) +
          "x over " + std::to_string(r.rounds.size()) + " rounds, " +
          Num(100 * r.speedup.confidence) + "% confidence interval [" +
          Num(r.speedup.ci_low) + ", " + Num(r.speedup.ci_high) + "].\n";
  user += "\n# Skills the rollout was given\n\n" + UsedSkillsText();
  user += "\n# The rollout's turns (what failed teaches the pitfalls)\n\n" +
          internal::Attempts(t_, 1200, 0);
  user += "\nWrite the skill.";
  return {{"system", kDistillSystem}, {"user", user}};
}

std::optional<Skill> SummaryAgent::DistillRun::AskForSkill() {
  std::vector<ChatMessage> chat = Prompt();
  CandidateRules rules;
  rules.kernel_source = best_.source;
  rules.task_name = t_.task;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    GenerationRecord gen;
    bool cut = false;
    auto answer = internal::Ask(
        *deps_.backbone, chat,
        internal::CallSampling(options_.sampling, t_.id, attempt), &gen, &cut);
    if (!answer.ok()) {
      rec_.outcome = "error";
      rec_.reasons.push_back("the backbone failed: " +
                             answer.status().ToString());
      return std::nullopt;
    }
    rec_.generations.push_back(std::move(gen));
    if (rec_.model.empty()) rec_.model = deps_.backbone->Model();
    Result<Skill> skill = Status::Internal("unset");
    auto object = ExtractJsonObject(*answer);
    if (object.ok()) {
      skill = ParseCandidate(*object, "candidate", rules);
      // The id names the technique the model chose, salted by the rollout.
      if (skill.ok()) skill->id = DistilledSkillId(skill->title, t_.id);
      if (skill.ok() && deps_.distill_prompts != nullptr) {
        Status family = deps_.distill_prompts->Check(
            DistillPromptInput{&t_, &task_, &best_, UsedSkillsText()}, *skill);
        if (!family.ok()) skill = family;
      }
    } else {
      skill = object.status();
    }
    if (skill.ok()) {
      rec_.errors.push_back("");
      return std::move(*skill);
    }
    const std::string error = internal::AnswerError(
        cut, options_.sampling.max_tokens, skill.status().message());
    rec_.errors.push_back(error);
    internal::AppendRetry(&chat, *answer, error);
  }
  rec_.outcome = "invalid";
  rec_.reasons.push_back("no valid skill after " +
                         std::to_string(options_.max_attempts) + " attempts");
  return std::nullopt;
}

ProposalOptions SummaryAgent::DistillRun::Options() const {
  ProposalOptions o = options_.proposal;
  if (o.policy.device_class.empty()) {
    o.policy.device_class = best_.report->device_class;
  }
  if (o.author.empty()) o.author = "summary-agent/" + rec_.model;
  // Verified code, prose no person has read: committed as a candidate
  // (retrieved like an active skill; a reviewer promotes it).
  o.accepted_status = options_.accepted_status;
  if (o.message.empty()) {
    o.message = "distilled from trajectory " + t_.id + " (" + t_.task + ")";
  }
  return o;
}

void SummaryAgent::DistillRun::Submit(Skill skill) {
  skill.language =
      skill.language == Language::kAny ? LanguageOf(task_) : skill.language;
  // A skill that names no arch is filed under the device class its
  // evidence comes from (a GPU's, like sm_90): selections for that device
  // filter by arch, and would never see it otherwise.
  const std::string& device = best_.report->device_class;
  if (skill.arch.empty() && device.rfind("sm_", 0) == 0) {
    skill.arch.push_back(device);
  }
  skill.provenance.source = "summary-agent";
  skill.provenance.author = "summary-agent/" + rec_.model;
  skill.provenance.rollout_id = t_.id;
  skill.provenance.task_id = t_.task;
  for (const policy::SkillRef& ref : internal::UsedSkills(t_)) {
    skill.lineage.derived_from.push_back(ref.id);
  }
  rec_.skill_id = skill.id;
  rec_.candidate_json = SkillToJson(skill);
  VerificationRequest request;
  request.task = t_.task;
  request.candidate.name = best_.language == "cuda" ? "skill.cu" : "skill.cc";
  request.candidate.language = best_.language;
  request.candidate.source = best_.source;
  request.rounds = options_.verify_rounds;
  request.timed_calls_per_round = options_.timed_calls_per_round;
  request.device_class = best_.report->device_class;
  const ProposalOptions popts = Options();
  for (int attempt = 0; attempt < options_.max_commit_attempts; ++attempt) {
    auto fail = [&](const Status& st) {
      rec_.outcome = "error";
      rec_.reasons.push_back(st.ToString());
    };
    auto proposal = deps_.library->Propose(skill, popts);
    if (!proposal.ok()) return fail(proposal.status());
    rec_.proposal_id = (*proposal)->id();
    auto dups = (*proposal)->Duplicates();
    if (!dups.ok()) return fail(dups.status());
    // A duplicate under kReject is rejected whatever the evidence says:
    // the verifier's time is not spent on it (the rejection then also
    // names the missing report).
    if (dups->empty() || popts.dedup != DedupPolicy::kReject) {
      auto report = (*proposal)->Verify(*deps_.verifier, request);
      if (!report.ok()) return fail(report.status());
      rec_.report_json = ReportToJson(*report);
    }
    auto outcome = (*proposal)->Commit();
    if (!outcome.ok() && outcome.status().IsAborted()) {
      rec_.reasons.push_back(outcome.status().message());
      rec_.outcome = "aborted";
      continue;
    }
    if (!outcome.ok()) return fail(outcome.status());
    rec_.outcome = outcome->accepted ? "accepted" : "rejected";
    rec_.version = outcome->version;
    if (outcome->accepted) rec_.skill_id = outcome->skill_id;
    rec_.reasons = outcome->reasons;
    return;
  }
}

// The record is stored "pending" before the library is asked to commit:
// a commit is then never without the record of the run that made it (a
// store that refuses the record stops the run before the commit).
Result<policy::DistillationRecord> SummaryAgent::DistillRun::Go() {
  rec_.id = internal::NewDistillationId();
  rec_.trajectory_id = t_.id;
  rec_.kind = "skill";
  rec_.started_ms = util::NowUnixMs();
  if (std::optional<Skill> skill = AskForSkill()) {
    if (deps_.store) {
      policy::DistillationRecord pending = rec_;
      pending.outcome = "pending";
      pending.skill_id = skill->id;
      SKILLDB_RETURN_IF_ERROR(deps_.store->PutDistillation(pending));
    }
    Submit(std::move(*skill));
  }
  rec_.finished_ms = util::NowUnixMs();
  return rec_;
}

Result<policy::DistillationRecord> SummaryAgent::Distill(
    const policy::Trajectory& t, const policy::PolicyTask& task) {
  if (task.task.name != t.task) {
    return Status::InvalidArgument("task '" + task.task.name +
                                   "' is not the trajectory's ('" + t.task +
                                   "')");
  }
  const policy::SampleRecord* best = policy::BestSample(t);
  if (!t.solved || best == nullptr ||
      best->verdict != policy::SampleVerdict::kFaster || !best->report) {
    return Status::FailedPrecondition("trajectory " + t.id +
                                      " has no verified speedup to distill");
  }
  DistillRun run(*this, t, task);
  SKILLDB_ASSIGN_OR_RETURN(policy::DistillationRecord rec, run.Go());
  if (deps_.store) SKILLDB_RETURN_IF_ERROR(deps_.store->PutDistillation(rec));
  return rec;
}

}  // namespace skilldb::summarize
