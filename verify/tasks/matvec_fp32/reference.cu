// Reference (baseline) for matvec_fp32: one block of 256 threads per row,
// strided dot product, shared-memory tree reduction.
#include <cuda_runtime.h>

__global__ void matvec_reference(const float* a, const float* x, float* y, int64_t k) {
  __shared__ float red[256];
  const float* row = a + blockIdx.x * k;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < k; j += blockDim.x) s += row[j] * x[j];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = red[0];
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1];
  matvec_reference<<<m, 256, 0, stream>>>(static_cast<const float*>(in[0].data),
                                          static_cast<const float*>(in[1].data),
                                          static_cast<float*>(out[0].data), k);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
