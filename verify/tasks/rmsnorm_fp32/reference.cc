// Host reference (baseline) for rmsnorm_fp32: per-row 1/rms, then scale.
#include <cmath>
#include <vector>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t n = in[0].numel, rows = n / d;
  const float* x = static_cast<const float*>(in[0].data);
  const float* w = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  std::vector<float> inv(rows);
  for (int64_t i = 0; i < rows; ++i) {
    float s = 0.f;
    for (int64_t j = 0; j < d; ++j) s += x[i * d + j] * x[i * d + j];
    inv[i] = 1.f / std::sqrt(s / d + 1e-6f);
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * inv[i / d] * w[i % d];
  return 0;
}
