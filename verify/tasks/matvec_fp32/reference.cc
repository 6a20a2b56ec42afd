// Host reference (baseline) for matvec_fp32: one dot product per row.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1];
  const float* a = static_cast<const float*>(in[0].data);
  const float* x = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < m; ++i) {
    float s = 0.f;
    for (int64_t j = 0; j < k; ++j) s += a[i * k + j] * x[j];
    y[i] = s;
  }
  return 0;
}
