// Skill fuse-layernorm-welford: one block of 256 threads per row; the
// statistics come from ONE pass with Welford's update per element
// (n += 1; delta = x - mean; mean += delta / n; M2 += delta * (x - mean)),
// per-thread states merged with Chan's formula through warp shuffles and one
// shared-memory step; a second pass normalizes and applies gamma and beta.
// The baseline reads the row three times (mean, variance, output) with two
// shared-memory tree reductions. float4 accesses when the row length is a
// multiple of 4.
#include <cuda_runtime.h>

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr float kEps = 1e-5f;

struct Welford {
  float n, mean, m2;
};

__device__ __forceinline__ void Push(Welford& w, float x) {
  w.n += 1.f;
  const float delta = x - w.mean;
  w.mean += delta / w.n;
  w.m2 += delta * (x - w.mean);
}

// Chan et al.: combine two partial states.
__device__ __forceinline__ Welford Combine(Welford a, Welford b) {
  const float n = a.n + b.n;
  if (n == 0.f) return a;
  const float delta = b.mean - a.mean;
  const float fb = b.n / n;
  return {n, a.mean + delta * fb, a.m2 + b.m2 + delta * delta * a.n * fb};
}

__device__ __forceinline__ Welford WarpCombine(Welford w) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Welford other{__shfl_xor_sync(0xffffffffu, w.n, o), __shfl_xor_sync(0xffffffffu, w.mean, o),
                  __shfl_xor_sync(0xffffffffu, w.m2, o)};
    w = Combine(w, other);
  }
  return w;
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads)
layernorm_welford(const float* __restrict__ x, const float* __restrict__ gamma,
                  const float* __restrict__ beta, float* __restrict__ y, int64_t d) {
  __shared__ Welford slots[kWarps];
  const float* row = x + blockIdx.x * d;
  float* out = y + blockIdx.x * d;
  Welford w{0.f, 0.f, 0.f};
  if (kVec) {
    const float4* r4 = reinterpret_cast<const float4*>(row);
    for (int64_t j = threadIdx.x; j < d / 4; j += kThreads) {
      const float4 v = r4[j];
      Push(w, v.x);
      Push(w, v.y);
      Push(w, v.z);
      Push(w, v.w);
    }
  } else {
    for (int64_t j = threadIdx.x; j < d; j += kThreads) Push(w, row[j]);
  }
  w = WarpCombine(w);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) slots[warp] = w;
  __syncthreads();
  w = lane < kWarps ? slots[lane] : Welford{0.f, 0.f, 0.f};
  w = WarpCombine(w);  // every warp computes the row's statistics
  const float mean = w.mean;
  const float rstd = rsqrtf(w.m2 / static_cast<float>(d) + kEps);  // biased variance
  if (kVec) {
    const float4* r4 = reinterpret_cast<const float4*>(row);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);
    float4* o4 = reinterpret_cast<float4*>(out);
    for (int64_t j = threadIdx.x; j < d / 4; j += kThreads) {
      const float4 v = r4[j], g = g4[j], b = b4[j];
      o4[j] = make_float4((v.x - mean) * rstd * g.x + b.x, (v.y - mean) * rstd * g.y + b.y,
                          (v.z - mean) * rstd * g.z + b.z, (v.w - mean) * rstd * g.w + b.w);
    }
  } else {
    for (int64_t j = threadIdx.x; j < d; j += kThreads) {
      out[j] = (row[j] - mean) * rstd * gamma[j] + beta[j];
    }
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  const float* x = static_cast<const float*>(in[0].data);
  const float* g = static_cast<const float*>(in[1].data);
  const float* b = static_cast<const float*>(in[2].data);
  float* y = static_cast<float*>(out[0].data);
  if (d % 4 == 0) {  // 256-byte aligned bases: every row is 16-byte aligned
    layernorm_welford<true><<<rows, kThreads, 0, stream>>>(x, g, b, y, d);
  } else {
    layernorm_welford<false><<<rows, kThreads, 0, stream>>>(x, g, b, y, d);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
