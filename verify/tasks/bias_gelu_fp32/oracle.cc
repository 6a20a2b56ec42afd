// float64 oracle for bias_gelu_fp32.
#include <cmath>

#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t n = in[0].numel, d = in[1].numel;
  for (int64_t i = 0; i < n; ++i) {
    const double v = in[0].data[i] + in[1].data[i % d];
    out[0].data[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  }
  return 0;
}
