// Reference (baseline) for mse_loss_fp32, as eager code runs it: squared
// differences into a temporary, a shared-memory tree reduction to one
// partial sum per block, and a last single-block reduction that divides.
#include <cuda_runtime.h>

__global__ void squared_diff(const float* a, const float* b, float* t, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float d = a[i] - b[i];
    t[i] = d * d;
  }
}

__global__ void block_sums(const float* t, float* partial, int64_t n) {
  __shared__ float red[256];
  float s = 0.f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    s += t[i];
  }
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = red[0];
}

__global__ void finish(const float* partial, int count, float* out, float inv_n) {
  __shared__ float red[256];
  float s = 0.f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = red[0] * inv_n;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t n = in[0].numel;
  constexpr int kBlocks = 1024;
  float* t = nullptr;
  if (cudaMallocAsync(&t, (n + kBlocks) * sizeof(float), stream) != cudaSuccess) return 2;
  float* partial = t + n;
  squared_diff<<<(n + 255) / 256, 256, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data), t, n);
  block_sums<<<kBlocks, 256, 0, stream>>>(t, partial, n);
  finish<<<1, 256, 0, stream>>>(partial, kBlocks, static_cast<float*>(out[0].data),
                                1.f / static_cast<float>(n));
  cudaFreeAsync(t, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
