#include "skilldb/rerank/fusion.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace skilldb::rerank {
namespace {

Status CheckWeight(double w, const char* name) {
  if (!std::isfinite(w) || w < 0.0 || w > 1.0) {
    return Status::InvalidArgument(std::string(name) + " must be in [0, 1]");
  }
  return Status::Ok();
}

double Clamp01(double v) {
  if (!std::isfinite(v)) return 0.0;
  return std::clamp(v, 0.0, 1.0);
}

}  // namespace

Status ValidateFusionOptions(const FusionOptions& o) {
  SKILLDB_RETURN_IF_ERROR(CheckWeight(o.top_bm25_weight, "top_bm25_weight"));
  SKILLDB_RETURN_IF_ERROR(
      CheckWeight(o.middle_bm25_weight, "middle_bm25_weight"));
  SKILLDB_RETURN_IF_ERROR(CheckWeight(o.tail_bm25_weight, "tail_bm25_weight"));
  if (o.middle_ranks < o.top_ranks) {
    return Status::InvalidArgument("middle_ranks must be >= top_ranks");
  }
  if (std::isnan(o.strong_signal_margin) || o.strong_signal_margin < 0.0) {
    return Status::InvalidArgument("strong_signal_margin must be >= 0");
  }
  return Status::Ok();
}

double Bm25Weight(const FusionOptions& o, size_t bm25_rank) {
  if (bm25_rank <= o.top_ranks) return o.top_bm25_weight;
  if (bm25_rank <= o.middle_ranks) return o.middle_bm25_weight;
  return o.tail_bm25_weight;
}

bool StrongBm25Signal(const std::vector<Hit>& candidates,
                      const FusionOptions& o) {
  if (candidates.size() < 2) return false;
  const double s1 = candidates[0].score, s2 = candidates[1].score;
  if (!(s1 > 0.0) || !std::isfinite(s1) || !std::isfinite(s2)) return false;
  return (s1 - s2) / s1 >= o.strong_signal_margin;
}

std::vector<RankedHit> Fuse(const std::vector<Hit>& candidates,
                            const std::vector<double>& model_scores,
                            const FusionOptions& o) {
  // BM25 normalized by the top score, as qmd normalizes its retrieval score
  // by the best one: the top hit counts 1, the others their share of it.
  double top = 0.0;
  for (const Hit& h : candidates) {
    if (std::isfinite(h.score)) top = std::max(top, h.score);
  }
  std::vector<RankedHit> out(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    RankedHit& r = out[i];
    r.hit = candidates[i];
    r.bm25_rank = i + 1;
    r.rerank_score = Clamp01(model_scores[i]);
    const double bm25 = top > 0.0 ? Clamp01(candidates[i].score / top) : 0.0;
    const double w = Bm25Weight(o, i + 1);
    r.score = w * bm25 + (1.0 - w) * r.rerank_score;
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const RankedHit& a, const RankedHit& b) { return a.score > b.score; });
  return out;
}

}  // namespace skilldb::rerank
