// Wrong RMSNorm: divides by sqrt(sum of squares), not sqrt(mean of squares).
#include <cuda_runtime.h>

__global__ void rmsnorm_sum(const float* x, const float* w, float* y, int64_t d) {
  __shared__ float red[256];
  const float* row = x + blockIdx.x * d;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += row[j] * row[j];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int v = blockDim.x / 2; v > 0; v >>= 1) {
    if (threadIdx.x < v) red[threadIdx.x] += red[threadIdx.x + v];
    __syncthreads();
  }
  const float inv = rsqrtf(red[0] + 1e-6f);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) y[blockIdx.x * d + j] = row[j] * inv * w[j];
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t d = in[0].shape[in[0].ndim - 1];
  rmsnorm_sum<<<in[0].numel / d, 256, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), d);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
