// Host reference (baseline) for bias_gelu_fp32: add, then GELU.
#include <cmath>
#include <vector>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t n = in[0].numel, d = in[1].numel;
  const float* x = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  std::vector<float> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = x[i] + b[i % d];
  for (int64_t i = 0; i < n; ++i) {
    y[i] = 0.5f * t[i] * (1.f + std::erf(t[i] * 0.70710678118654752f));
  }
  return 0;
}
