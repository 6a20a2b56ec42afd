// Host reference (baseline) for gemm_bias_gelu_fp32: naive GEMM, then the
// bias + GELU epilogue.
#include <cmath>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[0];
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  const float* b = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int64_t q = 0; q < k; ++q) acc += x[i * k + q] * w[j * k + q];
      y[i * n + j] = acc;
    }
  }
  for (int64_t i = 0; i < m * n; ++i) {
    const float v = y[i] + b[i % n];
    y[i] = 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f));
  }
  return 0;
}
