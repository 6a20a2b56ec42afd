// Wrong GEMV: a float4 loop that silently drops the last K % 4 columns.
#include <cuda_runtime.h>

__global__ void gemv_no_tail(const float* a, const float* x, float* y, int64_t m, int64_t k) {
  const int lane = threadIdx.x & 31;
  const int64_t row = blockIdx.x * 8 + (threadIdx.x >> 5);
  if (row >= m) return;
  float s = 0.f;
  for (int64_t j = lane * 4; j + 3 < k; j += 128) {
    s += a[row * k + j] * x[j] + a[row * k + j + 1] * x[j + 1] +
         a[row * k + j + 2] * x[j + 2] + a[row * k + j + 3] * x[j + 3];
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) y[row] = s;
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int, cudaStream_t stream) {
  const int64_t m = in[0].shape[0], k = in[0].shape[1];
  gemv_no_tail<<<(m + 7) / 8, 256, 0, stream>>>(static_cast<const float*>(in[0].data),
                                                static_cast<const float*>(in[1].data),
                                                static_cast<float*>(out[0].data), m, k);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
