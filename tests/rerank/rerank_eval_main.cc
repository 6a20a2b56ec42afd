// rerank_eval: reranking quality on the seed library (data/relevance) with
// scripted models, through the real selection path. Prints markdown: the
// main table (BM25 alone; listwise and pointwise with an oracle and with
// deliberately bad models, each with the default fusion and without
// fusion), and with --grid the fusion-weight grid the defaults were chosen
// from.
//
// Usage: rerank_eval [--grid] [--candidates N] [--seed DIR] [--queries FILE]
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "rerank_eval.h"
#include "seed_data.h"
#include "build_paths.h"

namespace skilldb::testing {
namespace {

struct Row {
  std::string mode, model, fusion;
  RerankEvalResult r;
};

rerank::FusionOptions ModelOnly() {
  rerank::FusionOptions f;
  f.top_bm25_weight = f.middle_bm25_weight = f.tail_bm25_weight = 0.0;
  f.guard_ranks = 0;
  f.min_agreement = -1.0;
  f.strong_signal_margin = 2.0;  // never skip
  return f;
}

int Main(int argc, char** argv) {
  std::string seed = SeedDir(SKILLDB_SEED_DIR);
  std::string queries = SKILLDB_RELEVANCE_QUERIES;
  bool grid = false;
  size_t candidates = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--grid") {
      grid = true;
    } else if (a == "--candidates" && i + 1 < argc) {
      candidates = std::stoul(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = argv[++i];
    } else if (a == "--queries" && i + 1 < argc) {
      queries = argv[++i];
    } else {
      std::cerr << "usage: rerank_eval [--grid] [--candidates N] [--seed DIR] "
                   "[--queries FILE]\n";
      return 1;
    }
  }
  auto eval = RerankEvaluator::Create(seed, queries);
  if (!eval.ok()) {
    std::cerr << eval.status().ToString() << "\n";
    return 2;
  }
  auto run = [&](const RerankEvalConfig& c) {
    auto r = (*eval)->Run(c);
    if (!r.ok()) {
      std::cerr << r.status().ToString() << "\n";
      std::exit(2);
    }
    return std::move(r).value();
  };
  RerankEvalConfig base;
  base.candidates = candidates;
  const RerankEvalResult bm25 = run(base);
  std::vector<Row> rows;
  rows.push_back({"-", "none (BM25 alone)", "-", bm25});
  for (const std::string mode : {"listwise", "pointwise"}) {
    for (ScriptedModel m : {ScriptedModel::kOracle, ScriptedModel::kAntiOracle,
                            ScriptedModel::kReverse, ScriptedModel::kRandom}) {
      if (mode == "pointwise" && m == ScriptedModel::kReverse) continue;
      for (bool fused : {true, false}) {
        RerankEvalConfig c = base;
        c.mode = mode;
        c.model = m;
        if (!fused) c.fusion = ModelOnly();
        rows.push_back({mode, ScriptedModelName(m),
                        fused ? "default" : "none (model only)", run(c)});
      }
      if (m == ScriptedModel::kOracle) {
        // What the strong-signal skip costs a good model.
        RerankEvalConfig c = base;
        c.mode = mode;
        c.model = m;
        c.fusion.strong_signal_margin = 2.0;
        rows.push_back(
            {mode, ScriptedModelName(m), "default, no skip", run(c)});
      }
    }
  }
  std::printf("%zu queries, %zu BM25 candidates, nDCG@10 and recall@10\n\n",
              (*eval)->queries().size(), candidates);
  std::printf(
      "| mode | scripted model | fusion | nDCG@10 | vs BM25 (95%% CI) "
      "| recall@10 | applied | strong-signal skips |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|\n");
  for (const Row& row : rows) {
    const auto [d, h] = PairedDelta(row.r.per_query_ndcg, bm25.per_query_ndcg);
    std::printf("| %s | %s | %s | %.4f | %+.4f ± %.4f | %.4f | %zu | %zu |\n",
                row.mode.c_str(), row.model.c_str(), row.fusion.c_str(),
                row.r.ndcg, d, h, row.r.recall, row.r.applied,
                row.r.strong_signal);
  }
  if (!grid) return 0;
  std::printf(
      "\nFusion grid (strong-signal margin 0.5): nDCG@10 change vs "
      "BM25 alone\n\n");
  std::printf(
      "| BM25 scale | top w | middle w | tail w | guard ranks | "
      "max guard drop | min agreement | listwise oracle | listwise anti-oracle "
      "| "
      "listwise reverse | listwise random | pointwise oracle | "
      "pointwise anti-oracle | pointwise random |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      "---:|---:|\n");
  const std::pair<rerank::Bm25Scale, const char*> scales[] = {
      {rerank::Bm25Scale::kTopScore, "top score"},
      {rerank::Bm25Scale::kMinMax, "min-max"}};
  const double weights[][3] = {{0.75, 0.6, 0.4}, {0.9, 0.7, 0.5}};
  const size_t guards[][2] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {3, 1}};
  for (const auto& [scale, scale_name] : scales) {
    for (const auto& w : weights) {
      for (const auto& g : guards) {
        for (double agreement : {-1.0, 0.0, 0.2}) {
          RerankEvalConfig c = base;
          c.fusion.scale = scale;
          c.fusion.top_bm25_weight = w[0];
          c.fusion.middle_bm25_weight = w[1];
          c.fusion.tail_bm25_weight = w[2];
          c.fusion.guard_ranks = g[0];
          c.fusion.max_guard_drop = g[1];
          c.fusion.min_agreement = agreement;
          std::printf("| %s | %.2f | %.2f | %.2f | %zu | %zu | %.1f |",
                      scale_name, w[0], w[1], w[2], g[0], g[1], agreement);
          for (const char* mode : {"listwise", "pointwise"}) {
            c.mode = mode;
            for (ScriptedModel m :
                 {ScriptedModel::kOracle, ScriptedModel::kAntiOracle,
                  ScriptedModel::kReverse, ScriptedModel::kRandom}) {
              if (c.mode == "pointwise" && m == ScriptedModel::kReverse) {
                continue;
              }
              c.model = m;
              std::printf(" %+.4f |", run(c).ndcg - bm25.ndcg);
            }
          }
          std::printf("\n");
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace skilldb::testing

int main(int argc, char** argv) { return skilldb::testing::Main(argc, argv); }
