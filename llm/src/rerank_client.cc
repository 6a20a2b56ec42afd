#include "skilldb/llm/rerank_client.h"

#include <algorithm>

#include "http_transport.h"
#include "json_util.h"
#include "rerank_protocol.h"

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
    // TEI serves /rerank under the base URL's own path when it has one
    // (a proxy's http://h/tei), at the origin otherwise (its default
    // layout); Cohere-shape servers under the API root (/v1/rerank).
    const BaseUrl& base = transport_->base_url();
    const std::string path =
        !config_.path.empty()              ? config_.path
        : config_.api != RerankApi::kTei   ? transport_->Path("/rerank")
        : base.path_given ? base.path + "/rerank"
                          : std::string("/rerank");
    // The answer's size follows from the documents: an index and a score
    // each (and the echoed texts some servers add, bounded by the request).
    const std::string request = BuildRequest(config_, query, documents, top_n);
    const size_t max_bytes = (size_t{64} << 10) + 256 * documents.size() +
                             2 * request.size();
    SKILLDB_ASSIGN_OR_RETURN(HttpAnswer answer,
                             transport_->Post(path, request, max_bytes));
    if (!answer.ok()) return internal::StatusForAnswer(answer);
    uint64_t tokens = 0;
    SKILLDB_ASSIGN_OR_RETURN(
        std::vector<RerankScore> scores,
        internal::ParseRerankAnswer(answer, config_.api, documents.size(),
                                    &tokens));
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
    return Status::Internal(std::string("rerank: ") + e.what());  // a bug
  } catch (...) {
    return Status::Internal("rerank: unknown exception");
  }
}

}  // namespace skilldb::llm
