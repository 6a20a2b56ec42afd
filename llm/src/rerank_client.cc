#include "skilldb/llm/rerank_client.h"

#include <algorithm>

#include "http_transport.h"
#include "json_util.h"

namespace skilldb::llm {
namespace {

using internal::BadAnswer;
using internal::Find;
using internal::HttpAnswer;
using internal::json;

std::string BuildRequest(const RerankConfig& config, const std::string& query,
                         const std::vector<std::string>& documents,
                         size_t top_n) {
  json r = json::object();
  r["query"] = query;
  if (config.api == RerankApi::kTei) {
    r["texts"] = documents;
  } else {
    if (!config.client.model.empty()) r["model"] = config.client.model;
    r["documents"] = documents;
    if (top_n > 0) r["top_n"] = top_n;
    r["return_documents"] = false;
  }
  return internal::Dump(r);
}

// The list of {index, <score_key>} objects, validated against `count`.
Result<std::vector<RerankScore>> ReadScores(const HttpAnswer& answer,
                                            const json& list,
                                            const char* score_key,
                                            size_t count) {
  std::vector<RerankScore> scores;
  std::vector<bool> seen(count, false);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "result " + std::to_string(i);
    auto index = internal::AsCount(Find(list[i], "index"));
    auto score = internal::AsNumber(Find(list[i], score_key));
    if (!index || *index >= count || seen[*index]) {
      return BadAnswer(answer, at + " has a bad or repeated \"index\"");
    }
    if (!score) {
      return BadAnswer(answer, at + " has no numeric \"" + score_key + "\"");
    }
    seen[*index] = true;
    scores.push_back({static_cast<size_t>(*index), *score});
  }
  return scores;
}

Result<std::vector<RerankScore>> ParseAnswer(const HttpAnswer& answer,
                                             RerankApi api, size_t count,
                                             uint64_t* tokens) {
  SKILLDB_ASSIGN_OR_RETURN(json root, internal::ParseJson(answer));
  if (api == RerankApi::kTei) {
    if (!root.is_array())
      return BadAnswer(answer, "answer is not a JSON array");
    return ReadScores(answer, root, "score", count);
  }
  const json* results = Find(root, "results");
  if (results == nullptr || !results->is_array()) {
    return BadAnswer(answer, "answer has no \"results\" array");
  }
  const json* usage = Find(root, "usage");
  *tokens = internal::AsCount(usage ? Find(*usage, "total_tokens") : nullptr)
                .value_or(0);
  return ReadScores(answer, *results, "relevance_score", count);
}

}  // namespace

Result<std::unique_ptr<RerankClient>> RerankClient::Create(
    const RerankConfig& config) {
  SKILLDB_ASSIGN_OR_RETURN(auto transport,
                           internal::HttpTransport::Create(config.client));
  return std::unique_ptr<RerankClient>(
      new RerankClient(config, std::move(transport)));
}

RerankClient::RerankClient(const RerankConfig& config,
                           std::unique_ptr<internal::HttpTransport> transport)
    : config_(config), transport_(std::move(transport)) {}

RerankClient::~RerankClient() = default;

TokenUsage RerankClient::Usage() const {
  return {requests_.load(), tokens_.load(), 0};
}

Result<std::vector<RerankScore>> RerankClient::Rerank(
    const std::string& query, const std::vector<std::string>& documents,
    size_t top_n) {
  if (query.empty()) return Status::InvalidArgument("rerank: empty query");
  if (documents.empty()) return Status::InvalidArgument("rerank: no documents");
  try {
    const std::string path = !config_.path.empty() ? config_.path
                             : config_.api == RerankApi::kTei
                                 ? std::string("/rerank")
                                 : transport_->Path("/rerank");
    SKILLDB_ASSIGN_OR_RETURN(
        HttpAnswer answer,
        transport_->Post(path, BuildRequest(config_, query, documents, top_n)));
    if (!answer.ok()) return internal::StatusForAnswer(answer);
    uint64_t tokens = 0;
    SKILLDB_ASSIGN_OR_RETURN(
        std::vector<RerankScore> scores,
        ParseAnswer(answer, config_.api, documents.size(), &tokens));
    requests_.fetch_add(1);
    tokens_.fetch_add(tokens);
    std::stable_sort(scores.begin(), scores.end(),
                     [](const RerankScore& a, const RerankScore& b) {
                       if (a.score != b.score) return a.score > b.score;
                       return a.index < b.index;
                     });
    if (top_n > 0 && scores.size() > top_n) scores.resize(top_n);
    return scores;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("rerank: ") + e.what());
  } catch (...) {
    return Status::Internal("rerank: unknown exception");
  }
}

}  // namespace skilldb::llm
