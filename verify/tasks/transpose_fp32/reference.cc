// Host reference (baseline) for transpose_fp32: row by row.
extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t r = in[0].shape[0], c = in[0].shape[1];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) y[j * r + i] = x[i * c + j];
  }
  return 0;
}
