// Wrong host sum: divides by n (a mean, not a sum).
extern "C" int launch(const Tensor* in, int, Tensor* out, int, void*) {
  const int64_t b = in[0].shape[0], n = in[0].shape[1], m = in[0].shape[2];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t mi = 0; mi < m; ++mi) {
      float s = 0.f;
      for (int64_t k = 0; k < n; ++k) s += x[(bi * n + k) * m + mi];
      y[bi * m + mi] = s / n;
    }
  }
  return 0;
}
