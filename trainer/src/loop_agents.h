// The RL loop's agent wiring (internal to trainer/): the task family's
// prompt builder and extractor for the Policy Agent, the reward cache in
// front of the verifier, and the Selection Agent's reranker. Built once per
// run (Trainer::Impl::Init), used by every rollout of every step.
#ifndef SKILLDB_TRAINER_LOOP_AGENTS_H_
#define SKILLDB_TRAINER_LOOP_AGENTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "skilldb/llm/backbone.h"
#include "skilldb/policy/extract.h"
#include "skilldb/policy/prompt.h"
#include "skilldb/policy/selection.h"
#include "skilldb/reranker.h"
#include "skilldb/summarize/summary_agent.h"
#include "skilldb/status.h"
#include "skilldb/trainer/config.h"
#include "skilldb/trainer/param_task.h"
#include "skilldb/verify/verify.h"

namespace skilldb::trainer::internal {

// SplitMix64's finalizer: decorrelates the seeds derived from one run seed.
uint64_t Mix(uint64_t x);

// `s` cut to `n` bytes with " ..." when it was longer.
std::string Cut(const std::string& s, size_t n);

// The family's prompts: short (a small model's context), one system
// message with the answer format, the task, skill titles, then each earlier
// answer with the verifier's feedback; the cuts are config.loop's.
class ParamPromptBuilder : public policy::PromptBuilder {
 public:
  // REQUIRES: `family` outlives the builder.
  ParamPromptBuilder(const TaskFamily* family, const LoopConfig& loop)
      : family_(family), loop_(loop) {}
  std::vector<ChatMessage> Build(
      const policy::PromptInput& input) const override;

 private:
  const TaskFamily* family_;
  LoopConfig loop_;
};

// The family's answers: parameter text in, the rendered candidate out; a
// malformed answer is "no code" with the parser's reason.
class ParamExtractor : public policy::CompletionExtractor {
 public:
  // REQUIRES: `family` outlives the extractor.
  explicit ParamExtractor(const TaskFamily* family) : family_(family) {}
  Result<policy::Extraction> Extract(
      const policy::PolicyTask& task,
      std::string_view completion) const override;

 private:
  const TaskFamily* family_;
};

// The Summary Agent's prompt for the family (LoopConfig::
// family_summary_prompt): the task and the verified parameters, short
// enough for a small model's context.
class ParamDistillPrompts : public summarize::DistillPromptBuilder {
 public:
  // REQUIRES: `family` outlives the builder.
  ParamDistillPrompts(const TaskFamily* family, const LoopConfig& loop)
      : family_(family), loop_(loop) {}
  std::vector<ChatMessage> Build(
      const summarize::DistillPromptInput& input) const override;
  // A skill's code pattern must be the verified parameter line (parsed,
  // equal in every parameter): a skill that states other parameters than
  // its evidence ran is refused (the model is told which line to state).
  Status Check(const summarize::DistillPromptInput& input,
               const Skill& skill) const override;
  // The same prompt for verified `params` (the cold start's summary
  // demonstrations).
  std::vector<ChatMessage> ForParams(const std::string& params) const;

 private:
  const TaskFamily* family_;
  LoopConfig loop_;
};

// The skill a summary demonstration writes for the parameter line
// `params` (the answer format the Summary Agent is cold-started on): a
// title and summary stating the parameters, a body with the four sections
// (when to use: the task's description `when`), the parameter line as the
// code pattern, op `op`. One compact JSON object that ParseCandidate
// accepts.
std::string DemoSkillJson(const std::string& when, const std::string& op,
                          const std::string& params);

// The skill shown in a skill-following demonstration: DemoSkillJson's
// title, summary and code as a selected hit.
policy::SelectedSkill DemoSkill(const std::string& params);

// The no-skill arm's selector: retrieves nothing (the prompt shows no
// skill, the Selection Agent makes no call).
class NoSkillSelector : public policy::SkillSelector {
 public:
  Result<policy::Selection> Select(
      const policy::SelectionRequest& request) override;
};

// The reward cache: the verifier's report on identical bytes (task,
// language, candidate and baseline source, rounds, calls) is reused, with
// its phase times zeroed (nothing ran). Any Verifier behind it (the task
// verifier, or the KernelBench one). Safe for concurrent use.
class CachingVerifier : public Verifier {
 public:
  explicit CachingVerifier(std::unique_ptr<Verifier> inner)
      : inner_(std::move(inner)) {}
  std::string_view Name() const override { return inner_->Name(); }
  Result<VerificationReport> Verify(const VerificationRequest& r) override;
  Result<std::string> DeviceClass() override { return inner_->DeviceClass(); }
  int64_t MaxSourceBytes() const override { return inner_->MaxSourceBytes(); }
  // (hits, misses) so far.
  std::pair<int64_t, int64_t> Counts();
  // The verifier behind the cache: what verified insertion asks, so that a
  // skill's evidence is a fresh run, never a cached report.
  Verifier* uncached() { return inner_.get(); }

 private:
  std::unique_ptr<Verifier> inner_;
  std::mutex mu_;
  std::map<std::string, VerificationReport> cache_;  // GUARDED_BY(mu_)
  int64_t hits_ = 0, misses_ = 0;                    // GUARDED_BY(mu_)
};

// The Selection Agent of this loop: rerank/'s listwise reranker over the
// shared backbone (RankGPT-style "[2] > [1] > ..." over the numbered BM25
// candidates), fused with BM25 as in serving, but made to call the model
// for every rollout (no skip on a strong BM25 top hit, no distrust of a
// disagreeing model, no guard on BM25's top hit): each call is a decision
// the selection is trained on by its downstream return, and an answer it
// cannot read keeps BM25 order with the reason, its call recorded anyway.
// Each rollout passes its own sampling seed with the request
// (PolicyOptions::selection_seed), so one reranker serves the whole run.
Result<std::unique_ptr<Reranker>> MakeSelectionReranker(
    llm::Backbone* backbone, double temperature, const LoopConfig& loop);

}  // namespace skilldb::trainer::internal

#endif  // SKILLDB_TRAINER_LOOP_AGENTS_H_
