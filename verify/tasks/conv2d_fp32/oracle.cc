// float64 oracle for conv2d_fp32 (3x3, stride 1, zero padding 1).
#include "skilldb_oracle.h"

extern "C" int oracle(const OracleTensor* in, int, OracleTensor* out, int) {
  const int64_t n = in[0].shape[0], c = in[0].shape[1], h = in[0].shape[2],
                wd = in[0].shape[3], k = in[1].shape[0];
  const double* x = in[0].data;
  const double* w = in[1].data;
  for (int64_t on = 0; on < n; ++on) {
    for (int64_t ok = 0; ok < k; ++ok) {
      for (int64_t oh = 0; oh < h; ++oh) {
        for (int64_t ow = 0; ow < wd; ++ow) {
          double acc = 0;
          for (int64_t ci = 0; ci < c; ++ci) {
            for (int dy = 0; dy < 3; ++dy) {
              for (int dx = 0; dx < 3; ++dx) {
                const int64_t ih = oh + dy - 1, iw = ow + dx - 1;
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                acc += x[((on * c + ci) * h + ih) * wd + iw] * w[(ok * c + ci) * 9 + dy * 3 + dx];
              }
            }
          }
          out[0].data[((on * k + ok) * h + oh) * wd + ow] = acc;
        }
      }
    }
  }
  return 0;
}
