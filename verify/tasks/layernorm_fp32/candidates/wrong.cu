// Wrong LayerNorm: no eps, so a constant row computes 0 / 0.
#include <cuda_runtime.h>

__global__ void layernorm_no_eps(const float* x, const float* g, const float* b,
                                 float* y, int64_t d) {
  __shared__ float red[256];
  const float* row = x + blockIdx.x * d;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += row[j];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  const float mean = red[0] / d;
  __syncthreads();
  float q = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) q += (row[j] - mean) * (row[j] - mean);
  red[threadIdx.x] = q;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  const float rstd = rsqrtf(red[0] / d);
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
    y[blockIdx.x * d + j] = (row[j] - mean) * rstd * g[j] + b[j];
  }
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t d = in[0].shape[in[0].ndim - 1];
  layernorm_no_eps<<<in[0].numel / d, 256, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<const float*>(in[2].data), static_cast<float*>(out[0].data), d);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
