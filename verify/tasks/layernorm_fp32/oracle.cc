// float64 oracle for layernorm_fp32 (eps = 1e-5, biased variance).
#include <cmath>

#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  for (int64_t i = 0; i < rows; ++i) {
    const double* x = in[0].data + i * d;
    double mean = 0;
    for (int64_t j = 0; j < d; ++j) mean += x[j];
    mean /= d;
    double var = 0;
    for (int64_t j = 0; j < d; ++j) var += (x[j] - mean) * (x[j] - mean);
    var /= d;
    const double rstd = 1.0 / std::sqrt(var + 1e-5);
    for (int64_t j = 0; j < d; ++j) {
      out[0].data[i * d + j] = (x[j] - mean) * rstd * in[1].data[j] + in[2].data[j];
    }
  }
  return 0;
}
