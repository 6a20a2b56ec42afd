// The margins rerank/RESULTS.md states, on the seed library's judgments:
// with the default fusion, scripted bad models cost at most kBadMargin
// nDCG@10 against BM25 alone (a random one at most kRandomMargin), and the
// oracle gains at least kOracleGain, while without fusion the same bad
// models cost far more (so the guard is the fusion, not the data).
#include <doctest/doctest.h>

#include <memory>

#include "rerank_eval.h"
#include "seed_data.h"
#include "build_paths.h"

namespace skilldb::testing {
namespace {

constexpr double kBadMargin = 0.07;
constexpr double kRandomMargin = 0.02;
constexpr double kOracleGain = 0.02;

RerankEvaluator& Evaluator() {
  static std::unique_ptr<RerankEvaluator> e = [] {
    auto made = RerankEvaluator::Create(SeedDir(SKILLDB_SEED_DIR),
                                        SKILLDB_RELEVANCE_QUERIES);
    REQUIRE_MESSAGE(made.ok(), made.status().ToString());
    return std::move(made).value();
  }();
  return *e;
}

double Ndcg(const RerankEvalConfig& c) {
  auto r = Evaluator().Run(c);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return r->ndcg;
}

double Bm25Ndcg() {
  static const double ndcg = Ndcg(RerankEvalConfig());
  return ndcg;
}

RerankEvalConfig With(const char* mode, ScriptedModel model) {
  RerankEvalConfig c;
  c.mode = mode;
  c.model = model;
  return c;
}

TEST_CASE("BM25 alone scores what the relevance evaluation reports") {
  // data/relevance/README.md: the default library's configuration.
  CHECK(Bm25Ndcg() == doctest::Approx(0.8967).epsilon(0.001));
}

TEST_CASE("an oracle reranker lifts nDCG@10 above BM25 alone") {
  CHECK(Ndcg(With("listwise", ScriptedModel::kOracle)) >=
        Bm25Ndcg() + kOracleGain);
  CHECK(Ndcg(With("pointwise", ScriptedModel::kOracle)) >=
        Bm25Ndcg() + kOracleGain);
}

TEST_CASE(
    "with the default fusion a bad reranker costs at most the stated "
    "margin") {
  for (const char* mode : {"listwise", "pointwise"}) {
    for (ScriptedModel m : {ScriptedModel::kAntiOracle, ScriptedModel::kReverse,
                            ScriptedModel::kRandom}) {
      if (std::string(mode) == "pointwise" && m == ScriptedModel::kReverse) {
        continue;
      }
      CAPTURE(mode);
      CAPTURE(ScriptedModelName(m));
      const double margin =
          m == ScriptedModel::kRandom ? kRandomMargin : kBadMargin;
      CHECK(Ndcg(With(mode, m)) >= Bm25Ndcg() - margin);
    }
  }
}

TEST_CASE(
    "without fusion the same bad rerankers cost far more than the "
    "margin") {
  rerank::FusionOptions none;
  none.top_bm25_weight = none.middle_bm25_weight = none.tail_bm25_weight = 0;
  none.guard_ranks = 0;
  none.min_agreement = -1.0;
  none.strong_signal_margin = 2.0;
  for (ScriptedModel m : {ScriptedModel::kAntiOracle, ScriptedModel::kReverse,
                          ScriptedModel::kRandom}) {
    RerankEvalConfig c = With("listwise", m);
    c.fusion = none;
    CAPTURE(ScriptedModelName(m));
    CHECK(Ndcg(c) < Bm25Ndcg() - 5 * kBadMargin);
  }
}

}  // namespace
}  // namespace skilldb::testing
