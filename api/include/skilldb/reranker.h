// The Reranker interface: the Skill Selection Agent's second stage, which
// reorders a query's BM25 candidates (rerank/ implements it with an LLM, a
// rerank endpoint or dense embeddings).
//
// A reranker never makes retrieval fail because its model did: a timeout,
// an unreadable answer or a server that is down yields the BM25 order with
// `applied == false` and the reason. The value types are plain structs;
// each Reranker implementation states its own thread safety.
#ifndef SKILLDB_RERANKER_H_
#define SKILLDB_RERANKER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/library.h"
#include "skilldb/status.h"

namespace skilldb {

// What to rerank: the query and its BM25 candidates, best first, carrying
// the fields the reranker reads (QueryOptions::fields, e.g. title, summary
// and body) and their revisions (for caching).
struct RerankRequest {
  std::string query;
  std::vector<Hit> candidates;
  // Hits wanted in the result; 0 = every candidate. Default: 0.
  size_t k = 0;
  Version version = 0;  // the library version the candidates come from
  // Sampling seed for a model's judgment of this request (a reranker that
  // samples uses it in place of its own; others ignore it). Unset = the
  // reranker's own. Default: unset.
  std::optional<uint64_t> seed;
};

// One hit of a reranked list.
struct RankedHit {
  Hit hit;                  // the candidate as given (hit.score: BM25)
  size_t bm25_rank = 0;     // 1-based position among the candidates
  double rerank_score = 0;  // the model's own score, when it gives one
  double score = 0;         // the final (fused) score, higher is better
  bool operator==(const RankedHit&) const = default;
};

// The outcome of one rerank.
struct RerankResult {
  std::vector<RankedHit> hits;  // final order, best first
  // True when the model's judgment shaped the order; false when the BM25
  // order was kept (see `reason`).
  bool applied = false;
  std::string mode;     // "listwise", "pointwise", "endpoint", "dense", ...
  std::string reason;   // why not applied, or a note ("strong BM25 top hit")
  bool cached = false;  // answered from the reranker's cache
  // The model calls this selection made, in order (empty for endpoint and
  // dense rerankers and for cache hits): the trainer learns from them.
  std::vector<GenerationRecord> generations;
  bool operator==(const RerankResult&) const = default;
};

class Reranker {
 public:
  virtual ~Reranker() = default;

  // The mode this reranker implements ("listwise", ...).
  virtual std::string_view Mode() const = 0;

  // Reorders request.candidates. Model failures are not errors (see the
  // file comment); errors are for the request itself: InvalidArgument for
  // a malformed request (e.g. duplicate candidate ids).
  virtual Result<RerankResult> Rerank(const RerankRequest& request) = 0;
};

// The candidates in their BM25 order as a result with applied == false and
// `reason`, truncated to request.k: what every reranker returns on failure.
RerankResult Bm25Order(const RerankRequest& request, std::string_view mode,
                       std::string reason);

}  // namespace skilldb

#endif  // SKILLDB_RERANKER_H_
