// Reference (baseline) for gemm_bias_gelu_fp32, as eager code runs it: a
// 16x16 tiled GEMM into a temporary, then a bias + GELU kernel.
#include <cuda_runtime.h>
#include <math.h>

constexpr int kTile = 16;

__global__ void gemm_xwt(const float* x, const float* w, float* c, int64_t m, int64_t n,
                         int64_t k) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = blockIdx.y * static_cast<int64_t>(kTile) + ty;
  const int64_t col = blockIdx.x * static_cast<int64_t>(kTile) + tx;
  const int64_t wrow = blockIdx.x * static_cast<int64_t>(kTile) + ty;
  float acc = 0.f;
  for (int64_t t = 0; t < k; t += kTile) {
    as[ty][tx] = (row < m && t + tx < k) ? x[row * k + t + tx] : 0.f;
    bs[tx][ty] = (wrow < n && t + tx < k) ? w[wrow * k + t + tx] : 0.f;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kTile; ++q) acc += as[ty][q] * bs[q][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

__global__ void bias_gelu(const float* c, const float* b, float* y, int64_t total, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < total) {
    const float v = c[i] + b[i % n];
    y[i] = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[0];
  float* c = nullptr;
  if (cudaMallocAsync(&c, m * n * sizeof(float), stream) != cudaSuccess) return 2;
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
                  static_cast<unsigned>((m + kTile - 1) / kTile));
  gemm_xwt<<<grid, dim3(kTile, kTile), 0, stream>>>(static_cast<const float*>(in[0].data),
                                                   static_cast<const float*>(in[1].data), c,
                                                   m, n, k);
  bias_gelu<<<(m * n + 255) / 256, 256, 0, stream>>>(
      c, static_cast<const float*>(in[2].data), static_cast<float*>(out[0].data), m * n, n);
  cudaFreeAsync(c, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
