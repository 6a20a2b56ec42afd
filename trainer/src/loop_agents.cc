// The RL loop's agent wiring (see loop_agents.h).
#include "loop_agents.h"

#include <nlohmann/json.hpp>

#include "skilldb/rerank/listwise.h"
#include "skilldb/rerank/model_reranker.h"

namespace skilldb::trainer::internal {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string Cut(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + " ...";
}

std::vector<ChatMessage> ParamPromptBuilder::Build(
    const policy::PromptInput& input) const {
  std::vector<ChatMessage> out;
  out.push_back({"system", "You tune the " + family_->name +
                               " kernel template. " +
                               FamilyInstructions(*family_)});
  std::string user = "Task " + family_->task + " (" + family_->backend +
                     "): " + Cut(family_->description, loop_.description_bytes);
  const std::vector<policy::SelectedSkill>& skills = input.new_skills;
  if (!skills.empty()) {
    user += "\nSkills:";
    for (size_t i = 0; i < skills.size() &&
                       i < static_cast<size_t>(loop_.skills_shown);
         ++i) {
      user += "\n- " + Cut(skills[i].hit.title, loop_.skill_title_bytes);
      if (loop_.skill_code_bytes > 0 && !skills[i].hit.code.empty()) {
        user += " | code: " + Cut(skills[i].hit.code, loop_.skill_code_bytes);
      }
    }
  }
  out.push_back({"user", user});
  for (const auto& p : input.prior) {
    out.push_back({"assistant", Cut(p.completion, loop_.answer_bytes)});
    out.push_back({"user", "Feedback: " + Cut(p.feedback, loop_.feedback_bytes) +
                               "\nAnswer with new parameters."});
  }
  return out;
}

Result<policy::Extraction> ParamExtractor::Extract(
    const policy::PolicyTask&, std::string_view completion) const {
  policy::Extraction e;
  ParsedParams p = ParseParams(*family_, completion);
  if (!p.ok) {
    e.note = "template parameters: " + p.error;
    return e;
  }
  e.found = true;
  e.source = Render(*family_, p.values);
  e.language = family_->language;
  e.note = "template parameters " + FormatParams(*family_, p.values);
  return e;
}

std::vector<ChatMessage> ParamDistillPrompts::ForParams(
    const std::string& params) const {
  // The parameters alone, which the skill states. The speedup is left out:
  // it is the verifier's timing, so with it the same parameters made a
  // different prompt on a loaded machine, and the greedy answer (the skill
  // the run wrote) changed with the load.
  return {{"system",
           "You are the Skill Summary Agent. Parameters of the " +
               family_->name +
               " kernel template were verified faster than the reference. "
               "Write one skill that states them: one JSON object with "
               "title, summary, body (## When to use, ## How, ## Pitfalls, "
               "## How to tell it worked), code (the parameter line), tags, "
               "ops, arch, language."},
          {"user", "Task " + family_->task + " (" + family_->backend +
                       "): verified parameters " + params + "."}};
}

std::vector<ChatMessage> ParamDistillPrompts::Build(
    const summarize::DistillPromptInput& input) const {
  // The verified sample's answer in canonical form (it parsed, or it would
  // not have been verified).
  ParsedParams p = ParseParams(*family_, input.best->generation.completion);
  const std::string params =
      p.ok ? FormatParams(*family_, p.values)
           : Cut(input.best->generation.completion, loop_.answer_bytes);
  return ForParams(params);
}

Status ParamDistillPrompts::Check(const summarize::DistillPromptInput& input,
                                  const Skill& skill) const {
  const ParsedParams verified =
      ParseParams(*family_, input.best->generation.completion);
  if (!verified.ok) return Status::Ok();  // nothing to compare with
  const ParsedParams stated = ParseParams(*family_, skill.code);
  if (stated.ok && stated.values == verified.values) return Status::Ok();
  return Status::InvalidArgument(
      "code: state the verified parameter line '" +
      FormatParams(*family_, verified.values) + "' exactly" +
      (stated.ok ? std::string(" (it states other values)")
                 : " (" + Cut(stated.error, 120) + ")"));
}

std::string DemoSkillJson(const std::string& when, const std::string& op,
                          const std::string& params) {
  // Short and with little repeated text: a small model learns to write it
  // whole (the checks of summarize/ still apply: a body of 200 bytes and
  // more with the four sections).
  nlohmann::json j = {
      {"title", "Template parameters " + params},
      {"summary", "Verified faster than the reference on this template."},
      {"body", "## When to use\n" + Cut(when, 160) + "\n## How\nAnswer " +
                   params + "\n## Pitfalls\nOther values are refused.\n" +
                   "## How to tell it worked\nA speedup in every round."},
      {"code", params},
      {"tags", {"template"}},
      // A KernelBench problem has no op family: no op rather than "".
      {"ops",
       op.empty() ? nlohmann::json::array() : nlohmann::json::array({op})},
      {"arch", nlohmann::json::array()}};
  return j.dump();
}

policy::SelectedSkill DemoSkill(const std::string& params) {
  policy::SelectedSkill s;
  s.hit.id = "demo";
  s.hit.title = "Template parameters " + params;
  s.hit.summary = "Verified faster than the reference on this template.";
  s.hit.code = params;
  return s;
}

Result<policy::Selection> NoSkillSelector::Select(
    const policy::SelectionRequest& request) {
  policy::Selection out;
  out.record.query = request.query;
  out.record.library_version = request.as_of.value_or(0);
  return out;
}

Result<VerificationReport> CachingVerifier::Verify(
    const VerificationRequest& r) {
  const std::string key = r.task + '\0' + r.candidate.language + '\0' +
                          r.candidate.source + '\0' + r.baseline.source +
                          '\0' + std::to_string(r.rounds) + '\0' +
                          std::to_string(r.timed_calls_per_round);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ++hits_;
      VerificationReport d = it->second;
      d.times = {};  // nothing ran
      d.times.compile_cache_hit = true;
      return d;
    }
  }
  SKILLDB_ASSIGN_OR_RETURN(auto d, inner_->Verify(r));
  std::lock_guard<std::mutex> lock(mu_);
  ++misses_;
  cache_.emplace(key, d);
  return d;
}

std::pair<int64_t, int64_t> CachingVerifier::Counts() {
  std::lock_guard<std::mutex> lock(mu_);
  return {hits_, misses_};
}

Result<std::unique_ptr<Reranker>> MakeSelectionReranker(
    llm::Backbone* backbone, double temperature, const LoopConfig& loop) {
  rerank::ListwiseOptions lo;
  lo.prompt.max_title_bytes = loop.rerank_title_bytes;
  lo.prompt.max_summary_bytes = loop.rerank_summary_bytes;
  lo.prompt.max_excerpt_bytes = 0;
  lo.prompt.max_query_bytes = loop.rerank_query_bytes;
  lo.temperature = temperature;
  lo.max_tokens = loop.rerank_max_tokens;
  SKILLDB_ASSIGN_OR_RETURN(auto judge,
                           rerank::ListwiseJudge::Create(backbone, lo));
  rerank::RerankerOptions ro;
  ro.fusion.strong_signal_margin = 2.0;  // > 1: never skip the model
  ro.fusion.min_agreement = -1.0;        // never distrust it
  ro.fusion.guard_ranks = 0;
  SKILLDB_ASSIGN_OR_RETURN(auto reranker,
                           rerank::ModelReranker::Create(std::move(judge), ro));
  return std::unique_ptr<Reranker>(std::move(reranker));
}

}  // namespace skilldb::trainer::internal
