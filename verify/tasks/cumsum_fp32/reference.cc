// Host reference (baseline) for cumsum_fp32: a running sum per row.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < rows; ++i) {
    float s = 0.f;
    for (int64_t j = 0; j < d; ++j) y[i * d + j] = (s += x[i * d + j]);
  }
  return 0;
}
