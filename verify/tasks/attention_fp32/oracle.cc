// float64 oracle for attention_fp32.
#include <cmath>
#include <vector>

#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> p(s);
  for (int64_t z = 0; z < bh; ++z) {
    const double* q = in[0].data + z * s * d;
    const double* k = in[1].data + z * s * d;
    const double* v = in[2].data + z * s * d;
    double* o = out[0].data + z * s * d;
    for (int64_t i = 0; i < s; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < s; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < d; ++c) acc += q[i * d + c] * k[j * d + c];
        p[j] = acc * scale;
        m = std::fmax(m, p[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < s; ++j) sum += (p[j] = std::exp(p[j] - m));
      for (int64_t c = 0; c < d; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j) acc += p[j] * v[j * d + c];
        o[i * d + c] = acc / sum;
      }
    }
  }
  return 0;
}
