// ModelReranker: a Reranker (skilldb/reranker.h) built from a Judge (one
// mode's use of a model) and what every mode shares: it checks the
// request, skips the model when BM25's top hit dominates, answers from the
// cache when it can, fuses the model's judgment with BM25 (fusion.h), and
// keeps BM25 order, flagged with the reason, whenever the model fails.
//
// A ModelReranker is safe for concurrent use by multiple threads when its
// Judge is (every Judge of this module is, over a thread-safe backend).
#ifndef SKILLDB_RERANK_MODEL_RERANKER_H_
#define SKILLDB_RERANK_MODEL_RERANKER_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "skilldb/rerank/cache.h"
#include "skilldb/rerank/fusion.h"
#include "skilldb/rerank/judge.h"
#include "skilldb/reranker.h"
#include "skilldb/status.h"

namespace skilldb::rerank {

struct RerankerOptions {
  FusionOptions fusion;
  // Only the first max_candidates candidates are judged; the rest follow
  // them in BM25 order (>= 2). Default: 100.
  size_t max_candidates = 100;
  // Judgments are looked up and kept here when set. Not owned; must
  // outlive the reranker. Default: none.
  RerankCache* cache = nullptr;
};

// InvalidArgument naming the field for bad fusion options or
// max_candidates < 2.
Status ValidateRerankerOptions(const RerankerOptions& options);

class ModelReranker final : public Reranker {
 public:
  // Errors: InvalidArgument for a null judge or bad options.
  static Result<std::unique_ptr<ModelReranker>> Create(
      std::unique_ptr<Judge> judge, const RerankerOptions& options);

  std::string_view Mode() const override { return judge_->Mode(); }

  // Reorders request.candidates (see reranker.h): applied == true when the
  // model's judgment shaped the order (reason: the judge's note, e.g. ids
  // appended); otherwise BM25 order with the reason: "no candidates", "one
  // candidate", "strong BM25 top hit ...", the model's failure, a model
  // that scored every candidate alike, or one that disagrees with BM25
  // (fusion.min_agreement); the generations of a model that answered are
  // kept in every case. Errors: InvalidArgument for duplicate candidate ids
  // or an empty id.
  Result<RerankResult> Rerank(const RerankRequest& request) override;

  Judge& judge() { return *judge_; }

 private:
  ModelReranker(std::unique_ptr<Judge> judge, const RerankerOptions& options)
      : judge_(std::move(judge)), options_(options) {}

  const std::unique_ptr<Judge> judge_;
  const RerankerOptions options_;
};

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_MODEL_RERANKER_H_
