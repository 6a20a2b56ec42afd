// Wrong linear + GELU: gelu(x W^T) + b (activation before the bias).
#include <cuda_runtime.h>
#include <math.h>

__global__ void linear_gelu_wrong(const float* x, const float* w, const float* bias, float* y,
                                  int64_t m, int64_t n, int64_t k) {
  const int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (int64_t q = 0; q < k; ++q) acc += x[row * k + q] * w[col * k + q];
  y[row * n + col] = 0.5f * acc * (1.f + erff(acc * 0.70710678118654752f)) + bias[col];
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[0];
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16));
  linear_gelu_wrong<<<grid, dim3(16, 16), 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<const float*>(in[2].data), static_cast<float*>(out[0].data), m, n, k);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
