// Host reference (baseline) for softmax_rows_fp32: three passes per row.
#include <cmath>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = x + i * d;
    float m = -INFINITY;
    for (int64_t j = 0; j < d; ++j) m = std::fmax(m, row[j]);
    float sum = 0.f;
    for (int64_t j = 0; j < d; ++j) sum += std::exp(row[j] - m);
    for (int64_t j = 0; j < d; ++j) y[i * d + j] = std::exp(row[j] - m) / sum;
  }
  return 0;
}
