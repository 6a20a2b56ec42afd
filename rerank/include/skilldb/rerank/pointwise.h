// Pointwise reranking, Qwen3-Reranker style: one yes/no question per
// candidate ("does this skill help with the task?"), the candidate's
// relevance being P(yes) = exp(lp_yes) / (exp(lp_yes) + exp(lp_no)) from
// the logprobs of the verdict token. All candidates' questions go to the
// backbone in batched calls.
//
// Two ways to read the logprobs, because backends differ:
//  - kTopLogprobs: generate a few tokens with top_logprobs and read the
//    alternatives at the verdict position: the first "yes"/"no" token
//    outside a <think> block, so a thinking template's (empty) reasoning is
//    skipped and the scored token is the verdict. Works with any
//    OpenAI-compatible chat server.
//  - kScore: Backbone::Score of the two completions verdict_prefix + "yes"
//    and verdict_prefix + "no" (the prefix's logprob cancels in the
//    difference). Set verdict_prefix to "<think>\n\n</think>\n\n" for
//    Qwen3-style thinking templates, which is how Qwen3-Reranker is scored.
//
// A PointwiseJudge is safe for concurrent use by multiple threads when its
// Backbone is.
#ifndef SKILLDB_RERANK_POINTWISE_H_
#define SKILLDB_RERANK_POINTWISE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "skilldb/llm/backbone.h"
#include "skilldb/rerank/judge.h"
#include "skilldb/rerank/model_reranker.h"
#include "skilldb/rerank/prompt.h"

namespace skilldb::rerank {

enum class VerdictMethod { kTopLogprobs, kScore };

struct PointwiseOptions {
  PromptOptions prompt;
  // Qwen3-Reranker's <Instruct>. Default: kPointwiseInstruction.
  std::string instruction = std::string(kPointwiseInstruction);
  VerdictMethod method = VerdictMethod::kTopLogprobs;  // Default: top.
  // kScore: the assistant's text before the verdict. Default: "".
  std::string verdict_prefix;
  // kTopLogprobs: alternatives asked per position (>= 2; OpenAI allows at
  // most 20). Default: 20.
  int top_logprobs = 20;
  // kTopLogprobs: tokens generated to reach the verdict (an empty think
  // block comes before it), >= 1. Default: 16.
  int max_tokens = 16;
  // Questions per backbone call (the backbone runs a call's prompts in
  // parallel), >= 1. Default: 64.
  size_t batch_size = 64;
  // Share of candidates whose answer must hold a readable verdict, in
  // [0, 1]; those without one score as BM25 ranks them. Below it the
  // judgment fails. Default: 0.5.
  double min_verdict_fraction = 0.5;
  // Give up (BM25 order) when the batches so far took this long; checked
  // before each batch. 0 = no limit. Default: 0.
  int deadline_ms = 0;
};

// InvalidArgument naming the field.
Status ValidatePointwiseOptions(const PointwiseOptions& options);

// How a verdict was read from one answer.
struct Verdict {
  double p_yes = 0.0;  // in [0, 1]
  // True when read from the alternatives' logprobs; false when only the
  // answer's text held a verdict (p_yes is then 1 or 0).
  bool from_alternatives = false;
};

// Reads the verdict of one sampled answer (kTopLogprobs): nullopt when no
// "yes" or "no" token can be found outside a <think> block. Tokens match
// case-insensitively after trimming whitespace; every alternative that
// matches counts (logsumexp); a verdict absent from the alternatives gets
// the smaller of the least likely listed one's logprob and the log of the
// probability mass the list leaves over. Without alternatives, the
// first word of the answer after any reasoning is read.
std::optional<Verdict> ReadVerdict(const llm::Sample& sample);

class PointwiseJudge final : public Judge {
 public:
  // `backbone` is not owned and must outlive the judge. Errors:
  // InvalidArgument for a null backbone or bad options.
  static Result<std::unique_ptr<PointwiseJudge>> Create(
      llm::Backbone* backbone, const PointwiseOptions& options);

  std::string_view Mode() const override { return "pointwise"; }
  std::string Model() const override { return backbone_->Model(); }
  std::string Fingerprint() const override;
  // Failures: the backbone's error, the deadline, too few verdicts.
  Judgment Assess(const std::string& query,
                  const std::vector<Hit>& candidates) override;

 private:
  PointwiseJudge(llm::Backbone* backbone, const PointwiseOptions& options)
      : backbone_(backbone), options_(options) {}
  Status JudgeByAlternatives(const std::vector<llm::Chat>& chats,
                             std::vector<std::optional<double>>* p_yes,
                             Judgment* judgment);
  Status JudgeByScores(const std::vector<llm::Chat>& chats,
                       std::vector<std::optional<double>>* p_yes,
                       Judgment* judgment);

  llm::Backbone* const backbone_;
  const PointwiseOptions options_;
};

// A pointwise ModelReranker over `backbone` (not owned).
Result<std::unique_ptr<ModelReranker>> MakePointwiseReranker(
    llm::Backbone* backbone, const PointwiseOptions& pointwise,
    const RerankerOptions& options);

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_POINTWISE_H_
