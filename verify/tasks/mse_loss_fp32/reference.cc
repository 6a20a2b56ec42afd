// Host reference (baseline) for mse_loss_fp32: squared differences into a
// temporary, then a pairwise-blocked sum.
#include <vector>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t n = in[0].numel;
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  std::vector<float> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = (a[i] - b[i]) * (a[i] - b[i]);
  double total = 0;
  for (int64_t i = 0; i < n; i += 1024) {
    float s = 0.f;
    for (int64_t j = i; j < n && j < i + 1024; ++j) s += t[j];
    total += s;
  }
  static_cast<float*>(out[0].data)[0] = static_cast<float>(total / n);
  return 0;
}
