// Host reference (baseline) for matmul_bf16: naive loops, float32
// accumulation, one rounding to bfloat16.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const uint16_t* a = static_cast<const uint16_t*>(in[0].data);
  const uint16_t* b = static_cast<const uint16_t*>(in[1].data);
  uint16_t* c = static_cast<uint16_t*>(out[0].data);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int64_t q = 0; q < k; ++q) {
        acc += skdb_bf16_to_float(a[i * k + q]) * skdb_bf16_to_float(b[q * n + j]);
      }
      c[i * n + j] = skdb_float_to_bf16(acc);
    }
  }
  return 0;
}
