// float64 oracle for relu_scale_residual_bf16.
#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t n = in[0].numel, d = in[1].numel;
  for (int64_t i = 0; i < n; ++i) {
    const double v = in[0].data[i] * in[1].data[i % d] + in[2].data[i];
    out[0].data[i] = v > 0 ? v : 0;
  }
  return 0;
}
