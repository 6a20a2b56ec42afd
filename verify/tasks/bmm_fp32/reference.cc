// Host reference (baseline) for bmm_fp32: naive loops per batch.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t bt = in[0].shape[0], m = in[0].shape[1], k = in[0].shape[2];
  const int64_t n = in[1].shape[2];
  for (int64_t z = 0; z < bt; ++z) {
    const float* a = static_cast<const float*>(in[0].data) + z * m * k;
    const float* b = static_cast<const float*>(in[1].data) + z * k * n;
    float* c = static_cast<float*>(out[0].data) + z * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.f;
        for (int64_t q = 0; q < k; ++q) acc += a[i * k + q] * b[q * n + j];
        c[i * n + j] = acc;
      }
    }
  }
  return 0;
}
