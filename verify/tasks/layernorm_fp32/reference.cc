// Host reference (baseline) for layernorm_fp32: mean, variance, normalise.
#include <cmath>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  const float* x = static_cast<const float*>(in[0].data);
  const float* g = static_cast<const float*>(in[1].data);
  const float* b = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = x + i * d;
    float s = 0.f;
    for (int64_t j = 0; j < d; ++j) s += row[j];
    const float mean = s / d;
    float v = 0.f;
    for (int64_t j = 0; j < d; ++j) v += (row[j] - mean) * (row[j] - mean);
    const float rstd = 1.f / std::sqrt(v / d + 1e-5f);
    for (int64_t j = 0; j < d; ++j) y[i * d + j] = (row[j] - mean) * rstd * g[j] + b[j];
  }
  return 0;
}
