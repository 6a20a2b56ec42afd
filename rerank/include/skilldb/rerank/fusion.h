// Fusion of BM25 and a reranking model's judgment, shaped so that a model
// cannot easily push BM25's best hits down: position-aware blending (as qmd
// does) gives BM25 its heaviest weight on its own top ranks, and a
// strong-signal test skips the model when BM25's top hit dominates.
//
// Pure functions over plain values: safe to call from any thread.
#ifndef SKILLDB_RERANK_FUSION_H_
#define SKILLDB_RERANK_FUSION_H_

#include <cstddef>
#include <string>
#include <vector>

#include "skilldb/library.h"
#include "skilldb/reranker.h"
#include "skilldb/status.h"

namespace skilldb::rerank {

// How BM25 scores are put on the model's [0, 1] scale.
enum class Bm25Scale {
  kTopScore,  // score / top score (qmd's normalization of its retrieval
              // score)
  kMinMax,    // (score - lowest) / (top - lowest) over the candidates
  kRank,      // (n - r + 1) / n at BM25 rank r of n: a weighted Borda count
};

// The final score of the candidate at BM25 rank r (1-based) is
//   w(r) * bm25(r) + (1 - w(r)) * model
// where bm25(r) is its BM25 score on the `scale`, model is the model's
// relevance in [0, 1] and w(r) is BM25's weight: top_bm25_weight for
// r <= top_ranks, middle_bm25_weight for r <= middle_ranks,
// tail_bm25_weight after. Ties keep BM25 order.
struct FusionOptions {
  Bm25Scale scale = Bm25Scale::kTopScore;  // Default: qmd's, kTopScore.
  size_t top_ranks = 3;                    // Default: 3.
  double top_bm25_weight = 0.75;           // in [0, 1]. Default: 0.75.
  size_t middle_ranks = 10;                // >= top_ranks. Default: 10.
  double middle_bm25_weight = 0.6;         // in [0, 1]. Default: 0.6.
  double tail_bm25_weight = 0.4;           // in [0, 1]. Default: 0.4.
  // A guard after blending: the hit at BM25 rank r <= guard_ranks ends at
  // final position r + max_guard_drop at the latest, whatever the model
  // says, so a wrong model cannot bury BM25's best hits. guard_ranks 0
  // turns it off. Default: 1 and 0, BM25's top hit stays first (chosen
  // from the grid in rerank/RESULTS.md: it halves what the worst scripted
  // model costs for a sixth of what the oracle gains).
  size_t guard_ranks = 1;
  size_t max_guard_drop = 0;  // at most kMaxQueryK
  // Distrust a model whose judgment runs against BM25 over the whole list
  // (a model ranking least relevant first, a broken prompt): when the
  // Spearman correlation between BM25 order and the model's scores is
  // below this, BM25 order is kept (applied == false). In [-1, 1]; -1
  // never distrusts. Default: 0.2 (rerank/RESULTS.md: it stops a reversed
  // or random ranking at almost no cost to the oracle).
  double min_agreement = 0.2;
  // Skip the model (BM25 order, applied == false) when the top hit's score
  // exceeds the second's by at least this fraction of the top score:
  // (s1 - s2) / s1 >= margin. Values > 1 never skip. In [0, inf).
  // Default: 0.5 (the top hit scores at least twice the second).
  double strong_signal_margin = 0.5;
};

// InvalidArgument naming the field when a weight is outside [0, 1] or not
// finite, middle_ranks < top_ranks, or the margin is negative or NaN.
Status ValidateFusionOptions(const FusionOptions& options);

// BM25's weight w(r) at 1-based BM25 rank r.
double Bm25Weight(const FusionOptions& options, size_t bm25_rank);

// True when candidates[0] dominates candidates[1] by options'
// strong_signal_margin (false for fewer than two candidates).
bool StrongBm25Signal(const std::vector<Hit>& candidates,
                      const FusionOptions& options);

// Spearman's rank correlation between BM25 order (candidates[i] is BM25
// rank i + 1) and `model_scores` (ties share their mean rank), in [-1, 1];
// 0 when either side is constant or there are fewer than two scores.
double Bm25Agreement(const std::vector<double>& model_scores);

// BM25 scores of the candidates (best first) on `scale`, in [0, 1].
// Non-finite scores read as 0; when all scores are equal every hit is 1.
std::vector<double> Bm25OnScale(const std::vector<Hit>& candidates,
                                Bm25Scale scale);

// The candidates (BM25 order, best first) reordered by fused score.
// model_scores[i] is the model's relevance of candidates[i]; values outside
// [0, 1] are clamped and non-finite ones read as 0 (untrusted). Each
// RankedHit carries its bm25_rank, rerank_score (the clamped model score)
// and score (the blend). The order is the blend's, best first, with the
// guard applied: a hit the guard holds up may score below hits after it.
// REQUIRES: model_scores.size() == candidates.size().
std::vector<RankedHit> Fuse(const std::vector<Hit>& candidates,
                            const std::vector<double>& model_scores,
                            const FusionOptions& options);

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_FUSION_H_
