// float64 oracle for mse_loss_fp32.
#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t n = in[0].numel;
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = in[0].data[i] - in[1].data[i];
    s += d * d;
  }
  out[0].data[0] = s / n;
  return 0;
}
