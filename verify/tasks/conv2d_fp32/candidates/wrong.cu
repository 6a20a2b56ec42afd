// Wrong convolution: clamps indices at the border (replicate padding)
// instead of treating the outside as zeros.
#include <cuda_runtime.h>

__global__ void conv2d_clamped(const float* x, const float* w, float* y, int64_t n,
                               int64_t c, int64_t k, int64_t h, int64_t wd) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n * k * h * wd) return;
  const int64_t ow = i % wd, oh = (i / wd) % h, ok = (i / (wd * h)) % k,
                on = i / (wd * h * k);
  float acc = 0.f;
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int dy = 0; dy < 3; ++dy) {
      for (int dx = 0; dx < 3; ++dx) {
        int64_t ih = oh + dy - 1, iw = ow + dx - 1;
        ih = ih < 0 ? 0 : (ih >= h ? h - 1 : ih);
        iw = iw < 0 ? 0 : (iw >= wd ? wd - 1 : iw);
        acc += x[((on * c + ci) * h + ih) * wd + iw] * w[(ok * c + ci) * 9 + dy * 3 + dx];
      }
    }
  }
  y[i] = acc;
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t n = in[0].shape[0], c = in[0].shape[1], h = in[0].shape[2],
                wd = in[0].shape[3], k = in[1].shape[0];
  const int64_t total = n * k * h * wd;
  conv2d_clamped<<<(total + 255) / 256, 256, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), n, c, k, h, wd);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
