// Reference (baseline) for rmsnorm_fp32, unfused as eager code runs it: a
// block-per-row reduction writes 1/rms per row, an elementwise kernel scales.
#include <cuda_runtime.h>

__global__ void row_inv_rms(const float* x, float* inv, int64_t d) {
  __shared__ float red[256];
  const float* row = x + blockIdx.x * d;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += row[j] * row[j];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) inv[blockIdx.x] = rsqrtf(red[0] / d + 1e-6f);
}

__global__ void scale(const float* x, const float* inv, const float* w, float* y,
                      int64_t n, int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i] * inv[i / d] * w[i % d];
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t n = in[0].numel, rows = n / d;
  float* inv = nullptr;
  if (cudaMallocAsync(&inv, rows * sizeof(float), stream) != cudaSuccess) return 2;
  const float* x = static_cast<const float*>(in[0].data);
  row_inv_rms<<<rows, 256, 0, stream>>>(x, inv, d);
  scale<<<(n + 255) / 256, 256, 0, stream>>>(x, inv, static_cast<const float*>(in[1].data),
                                             static_cast<float*>(out[0].data), n, d);
  cudaFreeAsync(inv, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
