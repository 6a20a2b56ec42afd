// Reference (baseline) for matmul_fp32: the textbook 16x16 shared-memory
// tiled kernel, one output per thread.
#include <cuda_runtime.h>

constexpr int kTile = 16;

__global__ void matmul_tiled(const float* a, const float* b, float* c, int64_t m,
                             int64_t n, int64_t k) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = blockIdx.y * static_cast<int64_t>(kTile) + ty;
  const int64_t col = blockIdx.x * static_cast<int64_t>(kTile) + tx;
  float acc = 0.f;
  for (int64_t t = 0; t < k; t += kTile) {
    as[ty][tx] = (row < m && t + tx < k) ? a[row * k + t + tx] : 0.f;
    bs[ty][tx] = (t + ty < k && col < n) ? b[(t + ty) * n + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kTile; ++q) acc += as[ty][q] * bs[q][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
                  static_cast<unsigned>((m + kTile - 1) / kTile));
  matmul_tiled<<<grid, dim3(kTile, kTile), 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), m, n, k);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
