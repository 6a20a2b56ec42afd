// Wrong: the loop stops one row early (k < n - 1).
#include <cuda_runtime.h>

__global__ void sum_dim1_off_by_one(const float* x, float* y, int64_t b,
                                    int64_t n, int64_t m) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= b * m) return;
  const float* p = x + (i / m) * n * m + i % m;
  float s = 0.f;
  for (int64_t k = 0; k < n - 1; ++k) s += p[k * m];
  y[i] = s;
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int,
                      cudaStream_t stream) {
  const int64_t b = in[0].shape[0], n = in[0].shape[1], m = in[0].shape[2];
  sum_dim1_off_by_one<<<(b * m + 255) / 256, 256, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), b, n, m);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
