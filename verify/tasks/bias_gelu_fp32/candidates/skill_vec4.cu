// Skill mem-vectorized-16byte-access: y = gelu(x + b) with 16-byte loads and
// stores: each thread moves one float4 of x and y and reads the matching
// float4 of b (the bias add fused into the GELU kernel, one pass over x
// instead of the baseline's two kernels and temporary). With D % 4 == 0 and
// 256-byte aligned tensors every float4 of x lies inside one row and starts
// at a multiple of 4 columns, so the bias float4 is aligned too. Other row
// lengths use the same fused kernel with scalar accesses.
#include <cuda_runtime.h>
#include <math.h>

__device__ __forceinline__ float GeluErf(float v) {
  return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
}

__global__ void __launch_bounds__(256)
bias_gelu_vec4(const float4* __restrict__ x, const float4* __restrict__ b, float4* __restrict__ y,
               int64_t n4, int64_t d4) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  const float4 v = x[i], bb = b[i % d4];
  y[i] = make_float4(GeluErf(v.x + bb.x), GeluErf(v.y + bb.y), GeluErf(v.z + bb.z),
                     GeluErf(v.w + bb.w));
}

__global__ void __launch_bounds__(256)
bias_gelu_scalar(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y,
                 int64_t n, int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = GeluErf(x[i] + b[i % d]);
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t n = in[0].numel, d = in[1].numel;
  const float* x = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out[0].data);
  if (d % 4 == 0) {
    const int64_t n4 = n / 4;
    bias_gelu_vec4<<<static_cast<unsigned>((n4 + 255) / 256), 256, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(b),
        reinterpret_cast<float4*>(y), n4, d / 4);
  } else {
    bias_gelu_scalar<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, b, y, n, d);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
