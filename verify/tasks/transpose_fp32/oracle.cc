// float64 oracle for transpose_fp32.
#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t r = in[0].shape[0], c = in[0].shape[1];
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) out[0].data[j * r + i] = in[0].data[i * c + j];
  }
  return 0;
}
