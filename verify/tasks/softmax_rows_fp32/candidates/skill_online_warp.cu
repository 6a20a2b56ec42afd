// Skill fuse-online-softmax: one warp per row and no block synchronization.
// Each lane folds its strided elements into a running (max m, sum d) state:
// when the max grows, d is rescaled by exp(m_old - m_new); the 32 lane
// states are merged with __shfl_xor_sync using the same rule
// (m = max(m1, m2), d = d1 exp(m1 - m) + d2 exp(m2 - m)). Max and sum come
// from one read of the row; the output pass reads it again: 2 reads + 1 write
// instead of 3 reads + 1 write. float4 accesses when the row length is a
// multiple of 4.
#include <cuda_runtime.h>
#include <math.h>

constexpr int kWarps = 8, kThreads = 32 * kWarps;

__device__ __forceinline__ void Merge(float& m, float& d, float m2, float d2) {
  const float mm = fmaxf(m, m2);
  if (mm == -INFINITY) return;  // both empty
  d = (m == -INFINITY ? 0.f : d * expf(m - mm)) + (m2 == -INFINITY ? 0.f : d2 * expf(m2 - mm));
  m = mm;
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads)
softmax_warp_online(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t d) {
  const int lane = threadIdx.x & 31;
  const int64_t row = blockIdx.x * static_cast<int64_t>(kWarps) + (threadIdx.x >> 5);
  if (row >= rows) return;  // uniform per warp
  const float* xr = x + row * d;
  float* yr = y + row * d;
  float m = -INFINITY, s = 0.f;
  if (kVec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    for (int64_t j = lane; j < d / 4; j += 32) {
      const float4 v = x4[j];
      const float mm = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
      s = (m == -INFINITY ? 0.f : s * expf(m - mm)) +
          ((expf(v.x - mm) + expf(v.y - mm)) + (expf(v.z - mm) + expf(v.w - mm)));
      m = mm;
    }
  } else {
    for (int64_t j = lane; j < d; j += 32) {
      const float v = xr[j];
      if (v > m) {
        s = (m == -INFINITY ? 0.f : s * expf(m - v)) + 1.f;
        m = v;
      } else {
        s += expf(v - m);
      }
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    Merge(m, s, m2, s2);
  }
  const float inv = 1.f / s;
  if (kVec) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (int64_t j = lane; j < d / 4; j += 32) {
      const float4 v = x4[j];
      y4[j] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv,
                          expf(v.w - m) * inv);
    }
  } else {
    for (int64_t j = lane; j < d; j += 32) yr[j] = expf(xr[j] - m) * inv;
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const unsigned blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  if (d % 4 == 0) {  // 256-byte aligned base: every row is 16-byte aligned
    softmax_warp_online<true><<<blocks, kThreads, 0, stream>>>(x, y, rows, d);
  } else {
    softmax_warp_online<false><<<blocks, kThreads, 0, stream>>>(x, y, rows, d);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
