// dense_eval: BM25 alone, the dense ranking alone and their fusions on the
// seed library's judgments (data/relevance), with the real
// all-MiniLM-L6-v2 on the CPU; nDCG@10, recall@10, the paired difference
// against BM25 with a 95% interval, and latency per query (p50, p99) of
// each beside BM25's, measured in the same run. Prints markdown
// (rerank/RESULTS.md's dense section; scripts/rerank_bench.sh dense).
//
// Usage: dense_eval [--model DIR] [--seed DIR] [--queries FILE]
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "dense_eval.h"
#include "seed_data.h"
#include "build_paths.h"

namespace skilldb::testing {
namespace {

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  return v[i];
}

int Main(int argc, char** argv) {
  std::string seed = SeedDir(SKILLDB_SEED_DIR);
  std::string queries = SKILLDB_RELEVANCE_QUERIES;
  std::string model = SKILLDB_MINILM_DIR;
  if (const char* env = std::getenv("SKILLDB_MINILM_DIR")) model = env;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--model" && i + 1 < argc) {
      model = argv[++i];
    } else if (a == "--seed" && i + 1 < argc) {
      seed = argv[++i];
    } else if (a == "--queries" && i + 1 < argc) {
      queries = argv[++i];
    } else {
      std::cerr << "usage: dense_eval [--model DIR] [--seed DIR] "
                   "[--queries FILE]\n";
      return 1;
    }
  }
  auto eval = DenseEvaluator::Create(seed, queries, model);
  if (!eval.ok()) {
    std::cerr << eval.status().ToString() << "\n";
    return 2;
  }
  auto check = [](auto r) {
    if (!r.ok()) {
      std::cerr << r.status().ToString() << "\n";
      std::exit(2);
    }
    return std::move(r).value();
  };
  struct Row {
    std::string name;
    DenseEvalResult r;
  };
  std::vector<Row> rows;
  // BM25 twice, first and last, so latency drift in the run shows.
  rows.push_back({"BM25 alone", check((*eval)->RunBm25())});
  auto dense = [&](const std::string& name, rerank::DenseFusion f,
                   size_t candidates, double w) {
    rerank::DenseOptions o;
    o.fusion = f;
    o.candidates = candidates;
    o.dense_weight = w;
    rows.push_back({name, check((*eval)->RunDense(o))});
  };
  dense("dense alone", rerank::DenseFusion::kNone, 50, 0.5);
  dense("hybrid rrf (k=60, depth 20)", rerank::DenseFusion::kRrf, 20, 0.5);
  dense("hybrid rrf (k=60, depth 50)", rerank::DenseFusion::kRrf, 50, 0.5);
  for (double w : {0.3, 0.5, 0.7}) {
    char name[64];
    std::snprintf(name, sizeof name, "hybrid blend (w=%.1f, depth 50)", w);
    dense(name, rerank::DenseFusion::kBlend, 50, w);
  }
  rows.push_back({"BM25 alone (again)", check((*eval)->RunBm25())});
  const auto& bm25 = rows.front().r;
  const auto& p = (*eval)->pass();
  std::printf(
      "%zu queries; %s (%d dims, weights %.12s...); background pass: %zu "
      "revisions embedded in %.2f s\n\n",
      (*eval)->queries().size(), p.model.model_id.c_str(), p.model.dimension,
      p.model.weights_sha256.c_str(), p.embedded, p.seconds);
  std::printf(
      "| retrieval | nDCG@10 | vs BM25 (95%% CI) | recall@10 | p50 ms | p99 ms "
      "|\n|---|---:|---:|---:|---:|---:|\n");
  for (const Row& row : rows) {
    const auto [d, h] = PairedDelta(row.r.per_query_ndcg, bm25.per_query_ndcg);
    std::printf("| %s | %.4f | %+.4f ± %.4f | %.4f | %.3f | %.3f |\n",
                row.name.c_str(), row.r.ndcg, d, h, row.r.recall,
                Percentile(row.r.latency_ms, 0.5),
                Percentile(row.r.latency_ms, 0.99));
  }
  return 0;
}

}  // namespace
}  // namespace skilldb::testing

int main(int argc, char** argv) { return skilldb::testing::Main(argc, argv); }
