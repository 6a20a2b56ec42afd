// BM25 as Lucene computes it (Lucene 8+: no (k1 + 1) factor in the numerator),
// with exact document lengths:
//
//   idf(t)      = ln(1 + (N - n + 0.5) / (n + 0.5))
//   score(t, d) = idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))
//
// N is the number of live documents, n the number of live documents holding
// t, dl the document's length in terms and avgdl the mean dl over live
// documents. A query's score is the sum over its distinct terms.
//
// Every scorer in skilldb (exhaustive, block-max, the bounds) evaluates the
// formula through Bm25::TermScore so equal inputs give bit-equal scores.
// All functions are pure and thread-safe.
#ifndef SKILLDB_RETRIEVAL_BM25_H_
#define SKILLDB_RETRIEVAL_BM25_H_

#include <cmath>
#include <cstdint>

#include "skilldb/status.h"

namespace skilldb::retrieval {

struct Bm25Params {
  double k1 = 1.2;  // term-frequency saturation. Default: 1.2.
  double b = 0.75;  // length normalization, in [0, 1]. Default: 0.75.
};

// Returns InvalidArgument unless k1 is finite and >= 0 and b is in [0, 1].
Status ValidateBm25Params(const Bm25Params& params);

// The scoring context of one collection state (parameters and avgdl).
class Bm25 {
 public:
  // REQUIRES: avgdl > 0.
  Bm25(const Bm25Params& params, double avgdl)
      : params_(params), avgdl_(avgdl) {
    // Length normalizations of short documents, computed once: the same
    // expression TermScore would evaluate, so scores stay bit-identical.
    for (uint32_t dl = 0; dl < kNormCacheSize; ++dl) norm_[dl] = Norm(dl);
  }

  static double Idf(uint64_t num_docs, uint64_t doc_freq) {
    const double n = static_cast<double>(doc_freq);
    const double big_n = static_cast<double>(num_docs);
    return std::log(1.0 + (big_n - n + 0.5) / (n + 0.5));
  }

  // Score of one term occurrence count `tf` in a document of length `dl`.
  // Monotone: non-decreasing in tf, non-increasing in dl (also in floating
  // point, since +, * and / are correctly rounded), which makes a score
  // computed from (max tf, min dl) a true upper bound.
  double TermScore(double idf, uint32_t tf, uint32_t dl) const {
    const double f = static_cast<double>(tf);
    return idf * f / (f + (dl < kNormCacheSize ? norm_[dl] : Norm(dl)));
  }

  const Bm25Params& params() const { return params_; }
  double avgdl() const { return avgdl_; }

 private:
  static constexpr uint32_t kNormCacheSize = 1024;

  // k1 * (1 - b + b * dl / avgdl)
  double Norm(uint32_t dl) const {
    return params_.k1 *
           (1.0 - params_.b + params_.b * static_cast<double>(dl) / avgdl_);
  }

  Bm25Params params_;
  double avgdl_;
  double norm_[kNormCacheSize];
};

}  // namespace skilldb::retrieval

#endif  // SKILLDB_RETRIEVAL_BM25_H_
