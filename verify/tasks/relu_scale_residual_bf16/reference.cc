// Host reference (baseline) for relu_scale_residual_bf16: three passes
// over a float32 temporary, rounding to bfloat16 at the end.
#include <vector>

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      void*) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t n = in[0].numel, d = in[1].numel;
  const uint16_t* x = static_cast<const uint16_t*>(in[0].data);
  const uint16_t* s = static_cast<const uint16_t*>(in[1].data);
  const uint16_t* r = static_cast<const uint16_t*>(in[2].data);
  uint16_t* y = static_cast<uint16_t*>(out[0].data);
  std::vector<float> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = skdb_bf16_to_float(x[i]) * skdb_bf16_to_float(s[i % d]);
  for (int64_t i = 0; i < n; ++i) t[i] += skdb_bf16_to_float(r[i]);
  for (int64_t i = 0; i < n; ++i) y[i] = skdb_float_to_bf16(t[i] > 0.f ? t[i] : 0.f);
  return 0;
}
