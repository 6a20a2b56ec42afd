// Judge: what a reranking mode does with a model, and nothing else. A
// Judge turns a query and its BM25 candidates into one relevance score per
// candidate (listwise: a permutation; pointwise: yes/no logprobs; endpoint:
// a rerank server's scores). ModelReranker (model_reranker.h) wraps any
// Judge with what every mode shares: request checks, the strong-signal
// skip, the cache, fusion with BM25 and the fallback to BM25 order.
//
// Each Judge states its own thread safety; the ones in this module are safe
// for concurrent use when their backend is.
#ifndef SKILLDB_RERANK_JUDGE_H_
#define SKILLDB_RERANK_JUDGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "skilldb/generation.h"
#include "skilldb/library.h"
#include "skilldb/status.h"

namespace skilldb::rerank {

// A model's judgment of a request's candidates.
struct Judgment {
  // OK, or why the model's answer cannot be used (the backend's error, an
  // unparsable answer): the reranker then keeps BM25 order with this as
  // the reason.
  Status status;
  // One relevance per candidate, in candidate order, in [0, 1] (higher is
  // more relevant). Filled when status is OK.
  std::vector<double> scores;
  // The model calls made, in order, including those of a failed judgment
  // whose answer could not be read (the trainer learns from those too).
  std::vector<GenerationRecord> generations;
  // What the reranker's reason should say about an accepted answer, e.g.
  // "2 ids missing, appended in BM25 order"; "" when clean.
  std::string note;
};

class Judge {
 public:
  virtual ~Judge() = default;

  // "listwise", "pointwise", "endpoint".
  virtual std::string_view Mode() const = 0;
  // The model judging (part of the cache key).
  virtual std::string Model() const = 0;
  // Everything besides the model that changes a judgment (prompt version,
  // windows, sampling): the rest of the cache key.
  virtual std::string Fingerprint() const = 0;

  // Judges `candidates` (BM25 order, best first, at least two) for `query`.
  // Never fails as a call: a model failure is a Judgment with a non-OK
  // status.
  virtual Judgment Assess(const std::string& query,
                          const std::vector<Hit>& candidates) = 0;
  // Assess with a sampling seed for this call (RerankRequest::seed): a
  // judge that samples uses it in place of its own seed; the default, for
  // judges that do not sample, ignores it.
  virtual Judgment AssessSeeded(const std::string& query,
                                const std::vector<Hit>& candidates,
                                uint64_t /*seed*/) {
    return Assess(query, candidates);
  }
};

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_JUDGE_H_
