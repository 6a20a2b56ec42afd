// Reference (baseline) for conv2d_fp32: direct convolution, one thread per
// output element, inputs and weights read from global memory.
#include <cuda_runtime.h>

__global__ void conv2d_direct(const float* x, const float* w, float* y, int64_t n,
                              int64_t c, int64_t k, int64_t h, int64_t wd) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n * k * h * wd) return;
  const int64_t ow = i % wd, oh = (i / wd) % h, ok = (i / (wd * h)) % k,
                on = i / (wd * h * k);
  float acc = 0.f;
  for (int64_t ci = 0; ci < c; ++ci) {
    const float* xp = x + (on * c + ci) * h * wd;
    const float* wp = w + (ok * c + ci) * 9;
    for (int dy = 0; dy < 3; ++dy) {
      const int64_t ih = oh + dy - 1;
      if (ih < 0 || ih >= h) continue;
      for (int dx = 0; dx < 3; ++dx) {
        const int64_t iw = ow + dx - 1;
        if (iw < 0 || iw >= wd) continue;
        acc += xp[ih * wd + iw] * wp[dy * 3 + dx];
      }
    }
  }
  y[i] = acc;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1 || in[0].ndim != 4) return 1;
  const int64_t n = in[0].shape[0], c = in[0].shape[1], h = in[0].shape[2],
                wd = in[0].shape[3], k = in[1].shape[0];
  const int64_t total = n * k * h * wd;
  conv2d_direct<<<(total + 255) / 256, 256, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), n, c, k, h, wd);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
