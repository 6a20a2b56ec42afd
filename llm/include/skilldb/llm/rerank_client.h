// RerankClient: relevance scores for documents against a query from a
// reranker server, in either of the two wire shapes in use:
//   Cohere (vLLM, llama.cpp's server, Cohere, Jina):
//     POST <base>/rerank {model, query, documents, top_n}
//       -> {"results": [{"index", "relevance_score"}, ...], "usage": {...}}
//   TEI (Hugging Face text-embeddings-inference):
//     POST <base path>/rerank {query, texts} -> [{"index", "score"}, ...]
//     (<origin>/rerank when the base URL has no path: TEI's own layout)
//
// A RerankClient is safe for concurrent use by multiple threads; it shares
// the HTTP client's retries, timeouts and concurrency limit (ClientConfig).
#ifndef SKILLDB_LLM_RERANK_CLIENT_H_
#define SKILLDB_LLM_RERANK_CLIENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skilldb/llm/backbone.h"
#include "skilldb/llm/client_config.h"
#include "skilldb/status.h"

namespace skilldb::llm {

namespace internal {
class HttpTransport;
}

enum class RerankApi {
  kCohere,  // {model, query, documents, top_n} -> results[{index,
            // relevance_score}]
  kTei,     // {query, texts} -> [{index, score}]
};

struct RerankConfig {
  // base_url, model, key, timeouts, retries, TLS. The model is sent in the
  // Cohere shape only (TEI serves one model).
  ClientConfig client;
  RerankApi api = RerankApi::kCohere;  // Default: kCohere.
  // The endpoint's path, overriding the default: base path + "/rerank" for
  // Cohere (".../v1/rerank"); for TEI the base URL's path + "/rerank" when
  // it has one (http://h:8080/tei -> /tei/rerank), else "/rerank" at the
  // server's root. Default: "".
  std::string path;
};

// One document's relevance.
struct RerankScore {
  size_t index = 0;    // into the documents passed in
  double score = 0.0;  // the server's scale: higher is more relevant
  bool operator==(const RerankScore&) const = default;
};

class RerankClient {
 public:
  // Makes a client; no request is sent. Errors: InvalidArgument for a bad
  // config (as OpenAiClient::Create).
  static Result<std::unique_ptr<RerankClient>> Create(
      const RerankConfig& config);
  ~RerankClient();

  // Scores `documents` against `query` and returns them best first (ties by
  // index), at most `top_n` of them (0 = all). Every index is in range and
  // appears once. Errors: InvalidArgument for an empty query or no
  // documents; Unavailable / DeadlineExceeded when the server cannot be
  // reached in time (after retries); the codes of a refused request as
  // OpenAiClient::Generate; Internal for an answer it cannot read (bad
  // JSON, a missing or non-numeric score, an index out of range or
  // repeated). Never throws.
  Result<std::vector<RerankScore>> Rerank(
      const std::string& query, const std::vector<std::string>& documents,
      size_t top_n = 0);

  // requests: answered rerank requests; prompt_tokens: the servers'
  // usage.total_tokens (Cohere shape only; TEI reports none).
  TokenUsage Usage() const;
  const RerankConfig& config() const { return config_; }

 private:
  RerankClient(const RerankConfig& config,
               std::unique_ptr<internal::HttpTransport> transport);

  const RerankConfig config_;
  std::unique_ptr<internal::HttpTransport> transport_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> tokens_{0};
};

}  // namespace skilldb::llm

#endif  // SKILLDB_LLM_RERANK_CLIENT_H_
