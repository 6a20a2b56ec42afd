// Wrong bmm: every batch multiplies by the first batch's B.
#include <cuda_runtime.h>

__global__ void bmm_shared_b(const float* a, const float* b, float* c, int64_t m,
                             int64_t n, int64_t k) {
  const int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= m || col >= n) return;
  a += blockIdx.z * m * k;
  c += blockIdx.z * m * n;
  float acc = 0.f;
  for (int64_t q = 0; q < k; ++q) acc += a[row * k + q] * b[q * n + col];
  c[row * n + col] = acc;
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t bt = in[0].shape[0], m = in[0].shape[1], k = in[0].shape[2];
  const int64_t n = in[1].shape[2];
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16),
                  static_cast<unsigned>(bt));
  bmm_shared_b<<<grid, dim3(16, 16), 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), m, n, k);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
