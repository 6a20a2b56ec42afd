// Wrong bf16 GEMM: the running sum is kept in bfloat16 (rounded after every
// product), which loses several digits over K.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void gemm_bf16_acc(const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, int64_t m, int64_t n, int64_t k) {
  const int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= m || col >= n) return;
  __nv_bfloat16 acc = __float2bfloat16(0.f);
  for (int64_t q = 0; q < k; ++q) {
    acc = __float2bfloat16(__bfloat162float(acc) +
                           __bfloat162float(a[row * k + q]) * __bfloat162float(b[q * n + col]));
  }
  c[row * n + col] = acc;
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16));
  gemm_bf16_acc<<<grid, dim3(16, 16), 0, stream>>>(
      static_cast<const __nv_bfloat16*>(in[0].data),
      static_cast<const __nv_bfloat16*>(in[1].data),
      static_cast<__nv_bfloat16*>(out[0].data), m, n, k);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
