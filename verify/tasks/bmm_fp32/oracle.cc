// float64 oracle for bmm_fp32.
#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t bt = in[0].shape[0], m = in[0].shape[1], k = in[0].shape[2];
  const int64_t n = in[1].shape[2];
  for (int64_t z = 0; z < bt; ++z) {
    const double* a = in[0].data + z * m * k;
    const double* b = in[1].data + z * k * n;
    double* c = out[0].data + z * m * n;
    for (int64_t i = 0; i < m * n; ++i) c[i] = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t q = 0; q < k; ++q) {
        for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + q] * b[q * n + j];
      }
    }
  }
  return 0;
}
