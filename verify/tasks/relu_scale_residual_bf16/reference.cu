// Reference (baseline) for relu_scale_residual_bf16, unfused as eager code
// runs it: t = x * s, t = t + r, y = relu(t), three kernels, with the
// intermediate kept in float32 (rounding to bfloat16 only at the end).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void mul_bcast(const __nv_bfloat16* x, const __nv_bfloat16* s,
                          float* t, int64_t n, int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) t[i] = __bfloat162float(x[i]) * __bfloat162float(s[i % d]);
}

__global__ void add(float* t, const __nv_bfloat16* r, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) t[i] += __bfloat162float(r[i]);
}

__global__ void relu(const float* t, __nv_bfloat16* y, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(fmaxf(t[i], 0.f));
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t n = in[0].numel, d = in[1].numel;
  float* t = nullptr;
  if (cudaMallocAsync(&t, n * sizeof(float), stream) != cudaSuccess) return 2;
  const int64_t blocks = (n + 255) / 256;
  const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
  const auto* s = static_cast<const __nv_bfloat16*>(in[1].data);
  const auto* r = static_cast<const __nv_bfloat16*>(in[2].data);
  auto* y = static_cast<__nv_bfloat16*>(out[0].data);
  mul_bcast<<<blocks, 256, 0, stream>>>(x, s, t, n, d);
  add<<<blocks, 256, 0, stream>>>(t, r, n);
  relu<<<blocks, 256, 0, stream>>>(t, y, n);
  cudaFreeAsync(t, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
