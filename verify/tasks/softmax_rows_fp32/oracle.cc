// float64 oracle for softmax_rows_fp32.
#include <cmath>

#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  for (int64_t i = 0; i < rows; ++i) {
    const double* x = in[0].data + i * d;
    double* y = out[0].data + i * d;
    double m = -INFINITY;
    for (int64_t j = 0; j < d; ++j) m = std::fmax(m, x[j]);
    double sum = 0;
    for (int64_t j = 0; j < d; ++j) sum += std::exp(x[j] - m);
    for (int64_t j = 0; j < d; ++j) y[j] = std::exp(x[j] - m) / sum;
  }
  return 0;
}
