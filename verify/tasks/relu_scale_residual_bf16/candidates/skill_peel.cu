// Skill mem-misaligned-vector-peeling: rows of an odd length (D = 1001 bf16)
// start at addresses that are not 16-byte aligned, so a per-row kernel peels
// a short scalar prologue until x + row * D + j is 16-byte aligned, runs the
// body on 8-element (16-byte) chunks of x, r and y (which share the row's
// alignment), and finishes with a scalar tail. The broadcast s is read at the
// same column offsets; when those are 16-byte aligned too (peel % 8 == 0,
// always for D % 8 == 0) s is loaded as uint4, otherwise element by element.
// Fused y = relu(x * s + r) with float32 math, one rounding.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__device__ __forceinline__ float One(__nv_bfloat16 x, __nv_bfloat16 s, __nv_bfloat16 r) {
  return fmaxf(__bfloat162float(x) * __bfloat162float(s) + __bfloat162float(r), 0.f);
}

__device__ __forceinline__ unsigned Pair(unsigned xv, float s0, float s1, unsigned rv) {
  const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&xv));
  const float2 c = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&rv));
  const __nv_bfloat162 o = __floats2bfloat162_rn(fmaxf(a.x * s0 + c.x, 0.f), fmaxf(a.y * s1 + c.y, 0.f));
  return *reinterpret_cast<const unsigned*>(&o);
}

__global__ void __launch_bounds__(kThreads)
relu_scale_residual_peeled(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ s,
                           const __nv_bfloat16* __restrict__ r, __nv_bfloat16* __restrict__ y,
                           int64_t rows, int64_t d) {
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const __nv_bfloat16* xr = x + row * d;
    const __nv_bfloat16* rr = r + row * d;
    __nv_bfloat16* yr = y + row * d;
    // Elements before the first 16-byte boundary (x, r and y share it).
    const int64_t mis = (reinterpret_cast<uintptr_t>(xr) & 15) / 2;
    int64_t peel = mis == 0 ? 0 : 8 - mis;
    if (peel > d) peel = d;
    const int64_t chunks = (d - peel) / 8;
    const int64_t body_end = peel + chunks * 8;
    const int64_t t = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
    const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
    // Scalar prologue and tail.
    if (t < peel) yr[t] = __float2bfloat16(One(xr[t], s[t], rr[t]));
    if (t < d - body_end) {
      const int64_t j = body_end + t;
      yr[j] = __float2bfloat16(One(xr[j], s[j], rr[j]));
    }
    // Aligned 16-byte body.
    const uint4* x8 = reinterpret_cast<const uint4*>(xr + peel);
    const uint4* r8 = reinterpret_cast<const uint4*>(rr + peel);
    uint4* y8 = reinterpret_cast<uint4*>(yr + peel);
    const bool s_aligned = (peel & 7) == 0;  // s itself is 256-byte aligned
    for (int64_t c = t; c < chunks; c += step) {
      const uint4 xv = x8[c], rv = r8[c];
      const int64_t j = peel + c * 8;
      float sv[8];
      if (s_aligned) {
        const uint4 q = *reinterpret_cast<const uint4*>(s + j);
        const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int p = 0; p < 4; ++p) {
          const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[p]));
          sv[2 * p] = f.x;
          sv[2 * p + 1] = f.y;
        }
      } else {
#pragma unroll
        for (int p = 0; p < 8; ++p) sv[p] = __bfloat162float(s[j + p]);
      }
      y8[c] = make_uint4(Pair(xv.x, sv[0], sv[1], rv.x), Pair(xv.y, sv[2], sv[3], rv.y),
                         Pair(xv.z, sv[4], sv[5], rv.z), Pair(xv.w, sv[6], sv[7], rv.w));
    }
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t d = in[1].numel, rows = in[0].numel / d;
  // Enough threads per row for its 8-element chunks (and the <= 14 edge elements).
  int64_t gx = (d / 8 + kThreads - 1) / kThreads;
  if (gx < 1) gx = 1;
  const unsigned gy = static_cast<unsigned>(rows < 65535 ? rows : 65535);
  relu_scale_residual_peeled<<<dim3(static_cast<unsigned>(gx), gy), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(in[0].data), static_cast<const __nv_bfloat16*>(in[1].data),
      static_cast<const __nv_bfloat16*>(in[2].data), static_cast<__nv_bfloat16*>(out[0].data), rows, d);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
