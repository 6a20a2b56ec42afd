// Reranking quality on the seed library against the team's judgments
// (data/relevance): nDCG@10 and recall@10 of BM25 alone and of BM25
// candidates reranked by scripted models through the real selection path
// (SelectionAgent -> ModelReranker -> prompt -> the model's answer ->
// parsing -> fusion). The models are scripted from the judgments: an
// oracle that ranks by grade, and deliberately bad ones (the oracle
// inverted, BM25 reversed, a seeded random order), so the figures show how
// much a good model can add and how much fusion lets a bad one take away.
//
// Used by rerank_eval (the tool behind rerank/RESULTS.md) and by
// rerank_relevance_test (the stated margins). Thread-compatible.
#ifndef SKILLDB_TESTS_RERANK_RERANK_EVAL_H_
#define SKILLDB_TESTS_RERANK_RERANK_EVAL_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "relevance.h"
#include "skilldb/library.h"
#include "skilldb/rerank/fusion.h"
#include "skilldb/status.h"

namespace skilldb::testing {

// The scripted model behind a reranker.
enum class ScriptedModel {
  kNone,        // BM25 alone (no reranker)
  kOracle,      // ranks by judged grade (ties: the order shown)
  kAntiOracle,  // ranks by judged grade, lowest first: the worst model
  kReverse,     // reverses the order shown (BM25's, in one window)
  kRandom,      // a seeded random order per query
};
std::string ScriptedModelName(ScriptedModel model);

struct RerankEvalConfig {
  std::string mode = "listwise";  // "listwise" or "pointwise"
  ScriptedModel model = ScriptedModel::kNone;
  rerank::FusionOptions fusion;
  size_t candidates = 20;  // BM25 depth reranked
  size_t k = 10;           // hits scored (nDCG@k, recall@k)
  uint64_t seed = 1;       // kRandom's stream
};

struct RerankEvalResult {
  double ndcg = 0.0;                   // mean nDCG@k over the queries
  double recall = 0.0;                 // mean recall@k
  size_t applied = 0;                  // queries whose order the model shaped
  size_t strong_signal = 0;            // queries the strong-signal test skipped
  std::vector<double> per_query_ndcg;  // in query order
};

// Mean and 95% half-width (normal approximation) of the paired per-query
// difference a - b (0 and 0 for fewer than two queries).
std::pair<double, double> PairedDelta(const std::vector<double>& a,
                                      const std::vector<double>& b);

// Owns a library built once from the seed (the default library's
// configuration: code analyzer, kSkillLibraryWeights) in a temporary
// directory, removed with the evaluator.
class RerankEvaluator {
 public:
  // Errors: reading the seed or the judgments, building the library.
  static Result<std::unique_ptr<RerankEvaluator>> Create(
      const std::string& seed_dir, const std::string& queries_path);
  ~RerankEvaluator();

  // Runs every judged query through the configuration. Errors: a query
  // that fails (the reranker never fails for its model; see reranker.h).
  Result<RerankEvalResult> Run(const RerankEvalConfig& config);

  const std::vector<RelevanceQuery>& queries() const { return queries_; }
  // The seed library (for benchmarks that bring their own reranker).
  Library* library() const { return library_.get(); }

 private:
  RerankEvaluator() = default;
  std::string dir_;
  std::unique_ptr<Library> library_;
  std::vector<RelevanceQuery> queries_;
};

}  // namespace skilldb::testing

#endif  // SKILLDB_TESTS_RERANK_RERANK_EVAL_H_
