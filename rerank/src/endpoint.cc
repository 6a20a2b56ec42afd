#include "skilldb/rerank/endpoint.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "skilldb/llm/rerank_client.h"

namespace skilldb::rerank {
namespace {

// Puts scores on [0, 1] (see EndpointScale).
void Rescale(EndpointScale scale, std::vector<std::optional<double>>* s) {
  double low = INFINITY, high = -INFINITY;
  bool in_unit = true;
  for (const auto& v : *s) {
    if (!v) continue;
    low = std::min(low, *v);
    high = std::max(high, *v);
    in_unit = in_unit && *v >= 0.0 && *v <= 1.0;
  }
  for (auto& v : *s) {
    if (!v) continue;
    if (scale == EndpointScale::kMinMax) {
      v = high > low ? (*v - low) / (high - low) : 1.0;
    } else if (scale == EndpointScale::kLogistic || !in_unit) {
      v = 1.0 / (1.0 + std::exp(-*v));
    }
  }
}

}  // namespace

Status ValidateEndpointOptions(const EndpointOptions& o) {
  if (!(o.min_scored_fraction >= 0.0 && o.min_scored_fraction <= 1.0)) {
    return Status::InvalidArgument("min_scored_fraction must be in [0, 1]");
  }
  return Status::Ok();
}

Result<std::unique_ptr<EndpointJudge>> EndpointJudge::Create(
    EndpointFunction score, std::string model, const EndpointOptions& options) {
  if (!score) return Status::InvalidArgument("no scoring function");
  SKILLDB_RETURN_IF_ERROR(ValidateEndpointOptions(options));
  return std::unique_ptr<EndpointJudge>(
      new EndpointJudge(std::move(score), std::move(model), options));
}

Result<std::unique_ptr<EndpointJudge>> EndpointJudge::Create(
    llm::RerankClient* client, const EndpointOptions& options) {
  if (client == nullptr) return Status::InvalidArgument("no rerank client");
  const llm::ClientConfig& config = client->config().client;
  std::string model = config.model.empty() ? config.base_url : config.model;
  auto score = [client](const std::string& query,
                        const std::vector<std::string>& documents)
      -> Result<std::vector<std::pair<size_t, double>>> {
    SKILLDB_ASSIGN_OR_RETURN(std::vector<llm::RerankScore> scores,
                             client->Rerank(query, documents));
    std::vector<std::pair<size_t, double>> out;
    out.reserve(scores.size());
    for (const llm::RerankScore& s : scores) out.push_back({s.index, s.score});
    return out;
  };
  return Create(std::move(score), std::move(model), options);
}

std::string EndpointJudge::Fingerprint() const {
  return "endpoint-v1|" + std::to_string(static_cast<int>(options_.scale)) +
         "|" + std::to_string(options_.min_scored_fraction) + "|" +
         rerank::Fingerprint(options_.prompt);
}

Judgment EndpointJudge::Assess(const std::string& query,
                               const std::vector<Hit>& candidates) {
  Judgment judgment;
  const size_t n = candidates.size();
  std::vector<std::string> documents;
  documents.reserve(n);
  for (const Hit& h : candidates) {
    documents.push_back(CandidateText(h, options_.prompt));
  }
  auto answer = score_(Clip(query, options_.prompt.max_query_bytes), documents);
  if (!answer.ok()) {
    judgment.status = answer.status();
    return judgment;
  }
  std::vector<std::optional<double>> scores(n);
  for (const auto& [index, score] : *answer) {
    if (index >= n || scores[index] || !std::isfinite(score)) {
      judgment.status = Status::Internal(
          "the rerank endpoint answered an index out of range, a repeated "
          "index or a score that is not a number");
      return judgment;
    }
    scores[index] = score;
  }
  const size_t scored = answer->size();
  if (scored == 0 || scored < options_.min_scored_fraction * n) {
    judgment.status = Status::Internal(
        "the rerank endpoint scored " + std::to_string(scored) + " of " +
        std::to_string(n) + " candidates, below min_scored_fraction");
    return judgment;
  }
  Rescale(options_.scale, &scores);
  const double top = candidates.front().score;
  judgment.scores.resize(n);
  for (size_t i = 0; i < n; ++i) {
    judgment.scores[i] =
        scores[i] ? *scores[i] : (top > 0.0 ? candidates[i].score / top : 0.0);
  }
  if (scored < n) {
    judgment.note = std::to_string(n - scored) + " of " + std::to_string(n) +
                    " candidates unscored by the endpoint kept their BM25 "
                    "score";
  }
  return judgment;
}

Result<std::unique_ptr<ModelReranker>> MakeEndpointReranker(
    llm::RerankClient* client, const EndpointOptions& endpoint,
    const RerankerOptions& options) {
  SKILLDB_ASSIGN_OR_RETURN(std::unique_ptr<EndpointJudge> judge,
                           EndpointJudge::Create(client, endpoint));
  return ModelReranker::Create(std::move(judge), options);
}

}  // namespace skilldb::rerank
