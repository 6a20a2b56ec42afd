// AttachPitfalls: a failed trajectory -> unverified pitfall notes on the
// skills it used (see summary_agent.h and policy/pitfall_notes.h).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "agent_util.h"
#include "skilldb/policy/pitfall_notes.h"
#include "skilldb/policy/prompt.h"
#include "skilldb/summarize/skill_candidate.h"
#include "skilldb/summarize/summary_agent.h"
#include "skilldb/util/clock.h"
#include "skilldb/util/json.h"
#include "skilldb/util/text.h"

namespace skilldb::summarize {
namespace {

using Json = nlohmann::json;

constexpr char kPitfallSystem[] =
    R"(You are the Skill Summary Agent of a kernel-optimization system. A rollout that was given the skills listed below did not produce a verified speedup. For each listed skill whose application went wrong in a way a future user of the skill should know about, write one short pitfall note: one paragraph of 20 to 600 characters saying what went wrong and how to avoid it. Use only the skill ids given; leave out skills the failure had nothing to do with.

Answer with exactly one JSON object in a ```json block: {"notes": [{"skill_id": "...", "note": "..."}]} (an empty list when no failure was about a skill).)";

// The notes of a valid answer, by skill id; InvalidArgument listing every
// problem otherwise.
Result<std::map<std::string, std::string>> ParseNotes(
    std::string_view completion, const std::vector<policy::SkillRef>& used) {
  SKILLDB_ASSIGN_OR_RETURN(std::string object, ExtractJsonObject(completion));
  auto parsed = util::ParseUntrustedJson(object, "the answer",
                                         {.max_bytes = 1 << 20, .max_depth = 16});
  const Json j = parsed.ok() ? std::move(*parsed) : Json();
  if (!j.is_object() || j.size() != 1 || !j.contains("notes") ||
      !j["notes"].is_array()) {
    return Status::InvalidArgument(
        "the answer must be one object with only a \"notes\" array");
  }
  std::map<std::string, std::string> notes;
  std::vector<std::string> problems;
  for (const Json& n : j["notes"]) {
    if (!n.is_object() || !n.contains("skill_id") || !n.contains("note") ||
        !n["skill_id"].is_string() || !n["note"].is_string() || n.size() != 2) {
      problems.push_back(
          "each note is {\"skill_id\": string, \"note\": string}");
      continue;
    }
    const std::string id = n["skill_id"];
    const std::string text = n["note"];
    // Notes enter later prompts beside the skill: screened as skills are.
    std::vector<std::string> screened;
    ScreenModelText("the note on '" + util::OneLine(id) + "'", text, true,
                    &screened);
    if (!screened.empty()) {
      problems.insert(problems.end(), screened.begin(), screened.end());
      continue;
    }
    if (std::none_of(used.begin(), used.end(),
                     [&](const policy::SkillRef& r) { return r.id == id; })) {
      problems.push_back("'" + id + "' is not one of the listed skills");
    } else if (text.size() < 20 || text.size() > 600 ||
               text.find("\n\n") != std::string::npos) {
      problems.push_back("the note on '" + id +
                         "' must be one paragraph of 20 to 600 characters");
    } else if (!notes.emplace(id, text).second) {
      problems.push_back("more than one note on '" + id + "'");
    }
  }
  if (!problems.empty()) {
    std::string msg = "the notes are not valid: ";
    for (size_t i = 0; i < problems.size(); ++i)
      msg += (i ? "; " : "") + problems[i];
    return Status::InvalidArgument(msg);
  }
  return notes;
}

}  // namespace

class SummaryAgent::PitfallRun {
 public:
  PitfallRun(SummaryAgent& agent, const policy::Trajectory& t,
             const policy::PolicyTask& task)
      : deps_(agent.deps_),
        options_(agent.options_),
        t_(t),
        task_(task),
        used_(internal::UsedSkills(t)) {}

  Result<policy::DistillationRecord> Go();

 private:
  std::vector<ChatMessage> Prompt() const;
  std::optional<std::map<std::string, std::string>> AskForNotes();
  void Attach(const std::map<std::string, std::string>& notes);

  const SummaryAgentDeps& deps_;
  const SummaryOptions& options_;
  const policy::Trajectory& t_;
  const policy::PolicyTask& task_;
  const std::vector<policy::SkillRef> used_;
  policy::DistillationRecord rec_;
};

std::vector<ChatMessage> SummaryAgent::PitfallRun::Prompt() const {
  std::string user = "# Task\n\n`" + task_.task.name + "` (" +
                     task_.task.family + "): " + task_.task.description +
                     "\n\n# Skills the rollout was given\n\n";
  for (const policy::SkillRef& r : used_) {
    user += "- `" + util::OneLine(r.id) + "`: " + util::OneLine(r.title) + "\n";
  }
  user += "\n# The rollout's turns\n\n" + internal::Attempts(t_, 1500, 3000);
  user += "\nWrite the pitfall notes.";
  return {{"system", kPitfallSystem}, {"user", user}};
}

std::optional<std::map<std::string, std::string>>
SummaryAgent::PitfallRun::AskForNotes() {
  std::vector<ChatMessage> chat = Prompt();
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
    auto notes = ParseNotes(*answer, used_);
    if (notes.ok()) {
      rec_.errors.push_back("");
      return std::move(*notes);
    }
    const std::string error = internal::AnswerError(
        cut, options_.sampling.max_tokens, notes.status().message());
    rec_.errors.push_back(error);
    internal::AppendRetry(&chat, *answer, error);
  }
  rec_.outcome = "invalid";
  rec_.reasons.push_back("no valid notes after " +
                         std::to_string(options_.max_attempts) + " attempts");
  return std::nullopt;
}

// Read-modify-write of each skill's extra at one head, committed only if
// the head has not moved (else read again).
void SummaryAgent::PitfallRun::Attach(
    const std::map<std::string, std::string>& notes) {
  const policy::SampleRecord* best = policy::BestSample(t_);
  const std::string verdict =
      best ? std::string(policy::SampleVerdictName(best->verdict)) : "";
  for (int attempt = 0; attempt < options_.max_commit_attempts; ++attempt) {
    const Version head = deps_.library->CurrentVersion();
    std::vector<Skill> puts;
    std::vector<std::string> attached;
    for (const auto& [id, text] : notes) {
      auto skill = deps_.library->Get(id, ReadOptions{.as_of = head});
      if (!skill.ok()) continue;  // gone since the rollout: nothing to annotate
      auto extra = policy::AddPitfall(
          skill->extra_json,
          policy::PitfallNote{text, t_.id, t_.task, verdict, util::NowUnixMs()},
          options_.pitfalls_per_skill);
      if (!extra.ok()) continue;  // a skill whose extra is not an object
      skill->extra_json = std::move(*extra);
      puts.push_back(std::move(*skill));
      attached.push_back(id);
    }
    if (puts.empty()) {
      rec_.outcome = "none";
      rec_.reasons.push_back("no listed skill could be annotated");
      return;
    }
    CommitOptions commit;
    commit.kind = "annotate";
    commit.author = "summary-agent/" + rec_.model;
    commit.message = "unverified pitfall notes from trajectory " + t_.id;
    commit.expected_head = head;
    auto version = deps_.library->PutMany(puts, commit);
    if (!version.ok() && version.status().IsAborted()) continue;
    if (!version.ok()) {
      rec_.outcome = "error";
      rec_.reasons.push_back(version.status().ToString());
      return;
    }
    rec_.outcome = "attached";
    rec_.version = *version;
    for (const std::string& id : attached) {
      rec_.reasons.push_back("pitfall note attached to '" + id + "'");
    }
    rec_.skill_id = attached.front();
    return;
  }
  rec_.outcome = "aborted";
  rec_.reasons.push_back("the library kept changing; no note attached");
}

// As DistillRun::Go: the record is stored "pending" before the notes are
// committed to the library.
Result<policy::DistillationRecord> SummaryAgent::PitfallRun::Go() {
  rec_.id = internal::NewDistillationId();
  rec_.trajectory_id = t_.id;
  rec_.kind = "pitfalls";
  rec_.started_ms = util::NowUnixMs();
  if (auto notes = AskForNotes()) {
    if (notes->empty()) {
      rec_.outcome = "none";
      rec_.reasons.push_back("the model wrote no note");
    } else {
      if (deps_.store) {
        policy::DistillationRecord pending = rec_;
        pending.outcome = "pending";
        SKILLDB_RETURN_IF_ERROR(deps_.store->PutDistillation(pending));
      }
      Attach(*notes);
    }
  }
  rec_.finished_ms = util::NowUnixMs();
  return rec_;
}

Result<policy::DistillationRecord> SummaryAgent::AttachPitfalls(
    const policy::Trajectory& t, const policy::PolicyTask& task) {
  if (task.task.name != t.task) {
    return Status::InvalidArgument("task '" + task.task.name +
                                   "' is not the trajectory's ('" + t.task +
                                   "')");
  }
  if (t.solved) {
    return Status::FailedPrecondition("trajectory " + t.id +
                                      " was solved: distill it instead");
  }
  if (internal::UsedSkills(t).empty()) {
    return Status::FailedPrecondition("trajectory " + t.id +
                                      " selected no skills to annotate");
  }
  PitfallRun run(*this, t, task);
  SKILLDB_ASSIGN_OR_RETURN(policy::DistillationRecord rec, run.Go());
  if (deps_.store) SKILLDB_RETURN_IF_ERROR(deps_.store->PutDistillation(rec));
  return rec;
}

}  // namespace skilldb::summarize
