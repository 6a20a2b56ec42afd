#include "skilldb/rerank/model_reranker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <utility>

namespace skilldb::rerank {
namespace {

Status CheckCandidates(const std::vector<Hit>& candidates) {
  std::unordered_set<std::string_view> ids;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& id = candidates[i].id;
    if (id.empty()) {
      return Status::InvalidArgument("candidate " + std::to_string(i + 1) +
                                     " has an empty id");
    }
    if (!ids.insert(id).second) {
      return Status::InvalidArgument("candidate id '" + id + "' appears twice");
    }
  }
  return Status::Ok();
}

std::string StrongSignalReason(const std::vector<Hit>& c,
                               const FusionOptions& o) {
  char buf[160];
  std::snprintf(buf, sizeof(buf),
                "strong BM25 top hit: %.4g leads the second (%.4g) by %.0f%% "
                "of its score (margin %.0f%%); model not asked",
                c[0].score, c[1].score,
                100.0 * (c[0].score - c[1].score) / c[0].score,
                100.0 * o.strong_signal_margin);
  return buf;
}

// Guards the fusion against a judge that breaks its contract.
Judgment Checked(Judgment j, size_t n) {
  if (j.status.ok() && j.scores.size() != n) {
    j.status = Status::Internal(
        "the judge returned " + std::to_string(j.scores.size()) +
        " scores for " + std::to_string(n) + " candidates");
  }
  return j;
}

}  // namespace

Status ValidateRerankerOptions(const RerankerOptions& options) {
  SKILLDB_RETURN_IF_ERROR(ValidateFusionOptions(options.fusion));
  if (options.max_candidates < 2) {
    return Status::InvalidArgument("max_candidates must be at least 2");
  }
  return Status::Ok();
}

Result<std::unique_ptr<ModelReranker>> ModelReranker::Create(
    std::unique_ptr<Judge> judge, const RerankerOptions& options) {
  if (judge == nullptr) return Status::InvalidArgument("no judge");
  SKILLDB_RETURN_IF_ERROR(ValidateRerankerOptions(options));
  return std::unique_ptr<ModelReranker>(
      new ModelReranker(std::move(judge), options));
}

Result<RerankResult> ModelReranker::Rerank(const RerankRequest& request) {
  SKILLDB_RETURN_IF_ERROR(CheckCandidates(request.candidates));
  const std::vector<Hit>& all = request.candidates;
  const std::string_view mode = Mode();
  if (all.empty()) return Bm25Order(request, mode, "no candidates");
  if (all.size() == 1) {
    return Bm25Order(request, mode, "one candidate: nothing to reorder");
  }
  if (StrongBm25Signal(all, options_.fusion)) {
    return Bm25Order(request, mode, StrongSignalReason(all, options_.fusion));
  }
  const size_t n = std::min(all.size(), options_.max_candidates);
  const std::vector<Hit> judged(all.begin(), all.begin() + n);
  auto compute = [&] {
    return Checked(request.seed ? judge_->AssessSeeded(request.query, judged,
                                                       *request.seed)
                                : judge_->Assess(request.query, judged),
                   n);
  };
  RerankCache::Lookup lookup;
  if (options_.cache != nullptr) {
    std::string fingerprint = judge_->Fingerprint();
    if (request.seed) fingerprint += "|request-seed" + std::to_string(*request.seed);
    const std::string key =
        CacheKey(mode, judge_->Model(), fingerprint, request.query, judged,
                 request.version);
    lookup = options_.cache->GetOrCompute(key, compute);
  } else {
    lookup.judgment = compute();
  }
  Judgment& j = lookup.judgment;
  if (!j.status.ok()) {
    RerankResult r =
        Bm25Order(request, mode,
                  std::string(mode) + " model failed: " + j.status.ToString());
    r.generations = std::move(j.generations);
    r.cached = lookup.from_cache;
    return r;
  }
  const auto [low, high] =
      std::minmax_element(j.scores.begin(), j.scores.end());
  if (*high - *low < 1e-12) {
    RerankResult r =
        Bm25Order(request, mode,
                  std::string(mode) +
                      " model scored every candidate alike: BM25 order kept");
    r.generations = std::move(j.generations);
    r.cached = lookup.from_cache;
    return r;
  }
  const double agreement = Bm25Agreement(j.scores);
  if (agreement < options_.fusion.min_agreement) {
    char reason[160];
    std::snprintf(reason, sizeof(reason),
                  "%s model disagrees with BM25 (Spearman %.2f below "
                  "min_agreement %.2f): BM25 order kept",
                  std::string(mode).c_str(), agreement,
                  options_.fusion.min_agreement);
    RerankResult r = Bm25Order(request, mode, reason);
    r.generations = std::move(j.generations);
    r.cached = lookup.from_cache;
    return r;
  }
  RerankResult r;
  r.applied = true;
  r.mode = std::string(mode);
  r.reason = std::move(j.note);
  r.cached = lookup.from_cache;
  r.generations = std::move(j.generations);
  r.hits = Fuse(judged, j.scores, options_.fusion);
  // Candidates beyond max_candidates were not judged: they follow, in BM25
  // order, with score 0.
  for (size_t i = n; i < all.size(); ++i) {
    r.hits.push_back(RankedHit{all[i], i + 1, 0.0, 0.0});
  }
  if (request.k != 0 && r.hits.size() > request.k) r.hits.resize(request.k);
  return r;
}

}  // namespace skilldb::rerank
