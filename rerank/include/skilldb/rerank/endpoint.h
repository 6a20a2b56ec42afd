// Endpoint reranking: a dedicated reranker server scores the candidates
// (/v1/rerank in the Cohere shape that vLLM and llama.cpp serve, or TEI's
// /rerank), through llm/'s RerankClient. The documents sent are the
// candidates as the prompts show them (CandidateText); the server's scores
// are put on [0, 1] for fusion.
//
// An EndpointJudge is safe for concurrent use by multiple threads when its
// scoring function is (RerankClient is).
#ifndef SKILLDB_RERANK_ENDPOINT_H_
#define SKILLDB_RERANK_ENDPOINT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "skilldb/rerank/judge.h"
#include "skilldb/rerank/model_reranker.h"
#include "skilldb/rerank/prompt.h"

namespace skilldb::llm {
class RerankClient;
}

namespace skilldb::rerank {

// How a server's scores become relevances in [0, 1].
enum class EndpointScale {
  // As given when every score is in [0, 1] (Cohere's relevance_score,
  // TEI's default sigmoid), else the logistic of each (servers that return
  // raw logits).
  kAuto,
  kLogistic,  // 1 / (1 + e^-score) always
  kMinMax,    // (score - lowest) / (highest - lowest) over the candidates
};

struct EndpointOptions {
  PromptOptions prompt;  // how each candidate is written as a document
  EndpointScale scale = EndpointScale::kAuto;  // Default: kAuto.
  // Share of candidates the server must score, in [0, 1]; those it leaves
  // out score as BM25 ranks them. Below it the judgment fails. Default: 1.
  double min_scored_fraction = 1.0;
};

// InvalidArgument naming the field.
Status ValidateEndpointOptions(const EndpointOptions& options);

// Scores `documents` against `query`: (index into documents, score)
// pairs, in any order. Errors are the judgment's failure.
using EndpointFunction =
    std::function<Result<std::vector<std::pair<size_t, double>>>(
        const std::string& query, const std::vector<std::string>& documents)>;

class EndpointJudge final : public Judge {
 public:
  // Over any scoring function; `model` names it in cache keys. Errors:
  // InvalidArgument for an empty function or bad options.
  static Result<std::unique_ptr<EndpointJudge>> Create(
      EndpointFunction score, std::string model,
      const EndpointOptions& options);
  // Over llm/'s RerankClient (not owned; must outlive the judge): the
  // model is the client's configured model, or its base URL when none.
  static Result<std::unique_ptr<EndpointJudge>> Create(
      llm::RerankClient* client, const EndpointOptions& options);

  std::string_view Mode() const override { return "endpoint"; }
  std::string Model() const override { return model_; }
  std::string Fingerprint() const override;
  // Failures: the function's error; scores for too few candidates; an
  // index out of range, repeated, or a score that is not finite.
  Judgment Assess(const std::string& query,
                  const std::vector<Hit>& candidates) override;

 private:
  EndpointJudge(EndpointFunction score, std::string model,
                const EndpointOptions& options)
      : score_(std::move(score)), model_(std::move(model)), options_(options) {}

  const EndpointFunction score_;
  const std::string model_;
  const EndpointOptions options_;
};

// An endpoint ModelReranker over `client` (not owned).
Result<std::unique_ptr<ModelReranker>> MakeEndpointReranker(
    llm::RerankClient* client, const EndpointOptions& endpoint,
    const RerankerOptions& options);

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_ENDPOINT_H_
