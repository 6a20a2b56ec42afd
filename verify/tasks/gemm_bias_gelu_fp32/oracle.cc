// float64 oracle for gemm_bias_gelu_fp32.
#include <cmath>

#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[0];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q) acc += in[0].data[i * k + q] * in[1].data[j * k + q];
      const double v = acc + in[2].data[j];
      out[0].data[i * n + j] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    }
  }
  return 0;
}
