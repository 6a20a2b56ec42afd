// float64 oracle for sum_dim1_fp32.
#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t b = in[0].shape[0], n = in[0].shape[1], m = in[0].shape[2];
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t mi = 0; mi < m; ++mi) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += in[0].data[(bi * n + k) * m + mi];
      out[0].data[bi * m + mi] = s;
    }
  }
  return 0;
}
