// Faster host matmul: i-k-j order, so the inner loop runs over contiguous
// rows of B and C (the compiler vectorizes it) instead of striding B.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const float* __restrict__ a = static_cast<const float*>(in[0].data);
  const float* __restrict__ b = static_cast<const float*>(in[1].data);
  float* __restrict__ c = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < m; ++i) {
    float* crow = c + i * n;
    for (int64_t j = 0; j < n; ++j) crow[j] = 0.f;
    for (int64_t q = 0; q < k; ++q) {
      const float av = a[i * k + q];
      const float* brow = b + q * n;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
  return 0;
}
