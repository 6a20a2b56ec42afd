// Host reference (baseline) for attention_fp32: scores, softmax, P V.
#include <cmath>
#include <vector>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 3 || n_out != 1 || in[0].ndim != 4) return 1;
  const int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  std::vector<float> p(s * s);
  for (int64_t z = 0; z < bh; ++z) {
    const float* q = static_cast<const float*>(in[0].data) + z * s * d;
    const float* k = static_cast<const float*>(in[1].data) + z * s * d;
    const float* v = static_cast<const float*>(in[2].data) + z * s * d;
    float* o = static_cast<float*>(out[0].data) + z * s * d;
    for (int64_t i = 0; i < s; ++i) {
      float m = -INFINITY;
      for (int64_t j = 0; j < s; ++j) {
        float acc = 0.f;
        for (int64_t c = 0; c < d; ++c) acc += q[i * d + c] * k[j * d + c];
        p[i * s + j] = acc * scale;
        m = std::fmax(m, p[i * s + j]);
      }
      float sum = 0.f;
      for (int64_t j = 0; j < s; ++j) sum += std::exp(p[i * s + j] - m);
      for (int64_t j = 0; j < s; ++j) p[i * s + j] = std::exp(p[i * s + j] - m) / sum;
      for (int64_t c = 0; c < d; ++c) {
        float acc = 0.f;
        for (int64_t j = 0; j < s; ++j) acc += p[i * s + j] * v[j * d + c];
        o[i * d + c] = acc;
      }
    }
  }
  return 0;
}
