// float64 oracle for matvec_fp32.
#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t m = in[0].shape[0], k = in[0].shape[1];
  for (int64_t i = 0; i < m; ++i) {
    double s = 0;
    for (int64_t j = 0; j < k; ++j) s += in[0].data[i * k + j] * in[1].data[j];
    out[0].data[i] = s;
  }
  return 0;
}
