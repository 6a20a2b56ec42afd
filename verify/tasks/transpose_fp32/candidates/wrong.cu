// Wrong transpose: assumes a square matrix (uses the row count for both).
#include <cuda_runtime.h>

__global__ void transpose_square(const float* x, float* y, int64_t n) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t i = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y;
  if (i < n && j < n) y[j * n + i] = x[i * n + j];
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t n = in[0].shape[0];
  const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((n + 7) / 8));
  transpose_square<<<grid, dim3(32, 8), 0, stream>>>(static_cast<const float*>(in[0].data),
                                                     static_cast<float*>(out[0].data), n);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
