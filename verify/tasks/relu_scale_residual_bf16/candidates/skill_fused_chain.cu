// Skill fuse-elementwise-chain: y = relu(x * s + r) as one kernel. The
// baseline runs three kernels (x * s into a float32 temporary, + r in place,
// relu and round) and so moves 22 bytes per element through memory; the
// fused kernel reads x, s and r once and writes y once (6 bytes per element
// plus the small broadcast s). The intermediate stays in float32 registers
// and is rounded to bfloat16 once, as in the baseline.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(256)
relu_scale_residual_fused(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ s,
                          const __nv_bfloat16* __restrict__ r, __nv_bfloat16* __restrict__ y,
                          int64_t n, int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float t = __bfloat162float(x[i]) * __bfloat162float(s[i % d]) + __bfloat162float(r[i]);
  y[i] = __float2bfloat16(fmaxf(t, 0.f));
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t n = in[0].numel, d = in[1].numel;
  relu_scale_residual_fused<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(in[0].data), static_cast<const __nv_bfloat16*>(in[1].data),
      static_cast<const __nv_bfloat16*>(in[2].data), static_cast<__nv_bfloat16*>(out[0].data), n, d);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
