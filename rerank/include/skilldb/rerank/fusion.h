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

// The final score of the candidate at BM25 rank r (1-based) is
//   w(r) * bm25 / bm25_top + (1 - w(r)) * model
// where model is the model's relevance in [0, 1] and w(r) is BM25's weight:
// top_bm25_weight for r <= top_ranks, middle_bm25_weight for r <=
// middle_ranks, tail_bm25_weight after. Ties keep BM25 order.
struct FusionOptions {
  size_t top_ranks = 3;             // Default: 3.
  double top_bm25_weight = 0.75;    // in [0, 1]. Default: 0.75.
  size_t middle_ranks = 10;         // >= top_ranks. Default: 10.
  double middle_bm25_weight = 0.6;  // in [0, 1]. Default: 0.6.
  double tail_bm25_weight = 0.4;    // in [0, 1]. Default: 0.4.
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

// The candidates (BM25 order, best first) reordered by fused score.
// model_scores[i] is the model's relevance of candidates[i]; values outside
// [0, 1] are clamped and non-finite ones read as 0 (untrusted). Each
// RankedHit carries its bm25_rank, rerank_score (the clamped model score)
// and score (the fused one). REQUIRES: model_scores.size() ==
// candidates.size().
std::vector<RankedHit> Fuse(const std::vector<Hit>& candidates,
                            const std::vector<double>& model_scores,
                            const FusionOptions& options);

}  // namespace skilldb::rerank

#endif  // SKILLDB_RERANK_FUSION_H_
