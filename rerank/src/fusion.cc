#include "skilldb/rerank/fusion.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
  if (o.max_guard_drop > kMaxQueryK) {
    return Status::InvalidArgument("max_guard_drop must be at most kMaxQueryK");
  }
  if (!(o.min_agreement >= -1.0 && o.min_agreement <= 1.0)) {
    return Status::InvalidArgument("min_agreement must be in [-1, 1]");
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

namespace {

// Places BM25's top hits no lower than their deadline (BM25 rank +
// max_guard_drop): position by position, the guarded hit due there if any,
// else the best remaining hit of the blend. Deadlines are distinct, so at
// most one is due at a time and every one is met.
std::vector<RankedHit> Guard(std::vector<RankedHit> blended,
                             const FusionOptions& o) {
  if (o.guard_ranks == 0) return blended;
  const size_t n = blended.size();
  std::vector<RankedHit> out;
  out.reserve(n);
  std::vector<bool> placed(n, false);
  size_t next = 0;  // first unplaced index in blend order
  for (size_t position = 1; position <= n; ++position) {
    size_t pick = n;
    for (size_t i = 0; i < n && pick == n; ++i) {
      const size_t r = blended[i].bm25_rank;
      if (!placed[i] && r <= o.guard_ranks &&
          r + o.max_guard_drop == position) {
        pick = i;
      }
    }
    if (pick == n) {
      while (placed[next]) ++next;
      pick = next;
    }
    placed[pick] = true;
    out.push_back(std::move(blended[pick]));
  }
  return out;
}

}  // namespace

double Bm25Agreement(const std::vector<double>& model_scores) {
  const size_t n = model_scores.size();
  if (n < 2) return 0.0;
  // Ranks of the model scores, best first (rank 1 = highest score), ties
  // sharing their mean rank; BM25's ranks are 1..n.
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  auto clean = [&](size_t i) {
    return std::isfinite(model_scores[i]) ? model_scores[i] : 0.0;
  };
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return clean(a) > clean(b); });
  std::vector<double> rank(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && clean(idx[j + 1]) == clean(idx[i])) ++j;
    const double mean = (i + j) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) rank[idx[k]] = mean;
    i = j + 1;
  }
  // Pearson correlation of the two rank vectors.
  const double mean = (n + 1) / 2.0;
  double cov = 0.0, var_bm25 = 0.0, var_model = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double a = (i + 1) - mean, b = rank[i] - mean;
    cov += a * b;
    var_bm25 += a * a;
    var_model += b * b;
  }
  if (var_model <= 0.0) return 0.0;
  return cov / std::sqrt(var_bm25 * var_model);
}

std::vector<double> Bm25OnScale(const std::vector<Hit>& candidates,
                                Bm25Scale scale) {
  const size_t n = candidates.size();
  std::vector<double> out(n, 0.0);
  if (scale == Bm25Scale::kRank) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(n - i) / n;
    return out;
  }
  double top = -std::numeric_limits<double>::infinity();
  double low = std::numeric_limits<double>::infinity();
  for (const Hit& h : candidates) {
    if (!std::isfinite(h.score)) continue;
    top = std::max(top, h.score);
    low = std::min(low, h.score);
  }
  // qmd normalizes its retrieval score by the best one: the top hit counts
  // 1, the others their share of it.
  if (scale == Bm25Scale::kTopScore) low = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double range = top - low;
    out[i] = range > 0.0 ? Clamp01((candidates[i].score - low) / range)
                         : (candidates[i].score == top ? 1.0 : 0.0);
  }
  return out;
}

std::vector<RankedHit> Fuse(const std::vector<Hit>& candidates,
                            const std::vector<double>& model_scores,
                            const FusionOptions& o) {
  const std::vector<double> bm25 = Bm25OnScale(candidates, o.scale);
  std::vector<RankedHit> out(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    RankedHit& r = out[i];
    r.hit = candidates[i];
    r.bm25_rank = i + 1;
    r.rerank_score = Clamp01(model_scores[i]);
    const double w = Bm25Weight(o, i + 1);
    r.score = w * bm25[i] + (1.0 - w) * r.rerank_score;
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const RankedHit& a, const RankedHit& b) { return a.score > b.score; });
  return Guard(std::move(out), o);
}

}  // namespace skilldb::rerank
