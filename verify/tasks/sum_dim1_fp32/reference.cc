// Host reference (baseline) for sum_dim1_fp32: one output at a time, walking
// the reduced dimension with stride m.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 3) return 1;
  const int64_t b = in[0].shape[0], n = in[0].shape[1], m = in[0].shape[2];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t mi = 0; mi < m; ++mi) {
      float s = 0.f;
      for (int64_t k = 0; k < n; ++k) s += x[(bi * n + k) * m + mi];
      y[bi * m + mi] = s;
    }
  }
  return 0;
}
