// Host reference (baseline) for conv2d_fp32: direct convolution.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1 || in[0].ndim != 4) return 1;
  const int64_t n = in[0].shape[0], c = in[0].shape[1], h = in[0].shape[2],
                wd = in[0].shape[3], k = in[1].shape[0];
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t on = 0; on < n; ++on) {
    for (int64_t ok = 0; ok < k; ++ok) {
      for (int64_t oh = 0; oh < h; ++oh) {
        for (int64_t ow = 0; ow < wd; ++ow) {
          float acc = 0.f;
          for (int64_t ci = 0; ci < c; ++ci) {
            for (int dy = 0; dy < 3; ++dy) {
              for (int dx = 0; dx < 3; ++dx) {
                const int64_t ih = oh + dy - 1, iw = ow + dx - 1;
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                acc += x[((on * c + ci) * h + ih) * wd + iw] * w[(ok * c + ci) * 9 + dy * 3 + dx];
              }
            }
          }
          y[((on * k + ok) * h + oh) * wd + ow] = acc;
        }
      }
    }
  }
  return 0;
}
