// Wrong scan: exclusive (y[j] = sum over k < j) instead of inclusive.
#include <cuda_runtime.h>

__global__ void cumsum_exclusive(const float* x, float* y, int64_t rows, int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows) return;
  float s = 0.f;
  for (int64_t j = 0; j < d; ++j) {
    y[i * d + j] = s;
    s += x[i * d + j];
  }
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t d = in[0].shape[in[0].ndim - 1], rows = in[0].numel / d;
  cumsum_exclusive<<<(rows + 127) / 128, 128, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), rows, d);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
