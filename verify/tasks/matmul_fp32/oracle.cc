// float64 oracle for matmul_fp32.
#include <vector>

#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const double* a = in[0].data;
  const double* b = in[1].data;
  double* c = out[0].data;
  for (int64_t i = 0; i < m * n; ++i) c[i] = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t q = 0; q < k; ++q) {
      const double av = a[i * k + q];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * b[q * n + j];
    }
  }
  return 0;
}
