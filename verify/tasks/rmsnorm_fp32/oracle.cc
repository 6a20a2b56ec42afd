// float64 oracle for rmsnorm_fp32 (eps = 1e-6).
#include <cmath>

#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  for (int64_t i = 0; i < rows; ++i) {
    const double* x = in[0].data + i * d;
    double s = 0;
    for (int64_t j = 0; j < d; ++j) s += x[j] * x[j];
    const double inv = 1.0 / std::sqrt(s / d + 1e-6);
    for (int64_t j = 0; j < d; ++j) out[0].data[i * d + j] = x[j] * inv * in[1].data[j];
  }
  return 0;
}
