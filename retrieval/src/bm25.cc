#include "skilldb/retrieval/bm25.h"

#include <string>

namespace skilldb::retrieval {

Status ValidateBm25Params(const Bm25Params& params) {
  if (!std::isfinite(params.k1) || params.k1 < 0) {
    return Status::InvalidArgument("k1 must be a finite number >= 0, got " +
                                   std::to_string(params.k1));
  }
  if (!(params.b >= 0.0 && params.b <= 1.0)) {
    return Status::InvalidArgument("b must be in [0, 1], got " +
                                   std::to_string(params.b));
  }
  return Status::Ok();
}

}  // namespace skilldb::retrieval
