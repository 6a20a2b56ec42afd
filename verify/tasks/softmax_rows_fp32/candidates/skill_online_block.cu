// Skill op-softmax-online-long-rows: one block of 256 threads per row, as in
// the baseline, but the max pass and the sum pass are merged into one online
// pass: each thread folds its elements into a (max m, sum s) state, rescaling
// s when the max grows; states merge across the warp with shuffles and
// across warps through shared memory with the same rescaling rule. A second
// pass writes exp(x - M) / S. Two reads of the row instead of three.
// Rows whose length is a multiple of 4 use float4 loads and stores.
#include <cuda_runtime.h>
#include <math.h>

constexpr int kThreads = 256, kWarps = kThreads / 32;

struct State {
  float m, s;
};

// Merge two (max, sum) states; an empty state has m = -inf and s = 0.
__device__ __forceinline__ State Merge(State a, State b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};
  const float sa = a.m == -INFINITY ? 0.f : a.s * expf(a.m - m);
  const float sb = b.m == -INFINITY ? 0.f : b.s * expf(b.m - m);
  return {m, sa + sb};
}

// Folds four values into a state with one rescale.
__device__ __forceinline__ State Fold4(State st, float a, float b, float c, float d) {
  const float m = fmaxf(st.m, fmaxf(fmaxf(a, b), fmaxf(c, d)));
  const float scale = st.m == -INFINITY ? 0.f : expf(st.m - m);
  st.s = st.s * scale + ((expf(a - m) + expf(b - m)) + (expf(c - m) + expf(d - m)));
  st.m = m;
  return st;
}

__device__ __forceinline__ State Fold1(State st, float a) {
  if (a > st.m) {
    st.s = (st.m == -INFINITY ? 0.f : st.s * expf(st.m - a)) + 1.f;
    st.m = a;
  } else {
    st.s += expf(a - st.m);
  }
  return st;
}

// Block-wide merge; every thread gets the row's (M, S).
__device__ __forceinline__ State BlockMerge(State st, State* smem) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    State other{__shfl_xor_sync(0xffffffffu, st.m, o), __shfl_xor_sync(0xffffffffu, st.s, o)};
    st = Merge(st, other);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) smem[warp] = st;
  __syncthreads();
  st = lane < kWarps ? smem[lane] : State{-INFINITY, 0.f};
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    State other{__shfl_xor_sync(0xffffffffu, st.m, o), __shfl_xor_sync(0xffffffffu, st.s, o)};
    st = Merge(st, other);
  }
  return st;
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads)
softmax_online(const float* __restrict__ x, float* __restrict__ y, int64_t d) {
  __shared__ State smem[kWarps];
  const float* row = x + blockIdx.x * d;
  float* out = y + blockIdx.x * d;
  State st{-INFINITY, 0.f};
  if (kVec) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    for (int64_t j = threadIdx.x; j < d / 4; j += kThreads) {
      const float4 v = row4[j];
      st = Fold4(st, v.x, v.y, v.z, v.w);
    }
  } else {
    for (int64_t j = threadIdx.x; j < d; j += kThreads) st = Fold1(st, row[j]);
  }
  st = BlockMerge(st, smem);
  const float m = st.m, inv = 1.f / st.s;
  if (kVec) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    float4* out4 = reinterpret_cast<float4*>(out);
    for (int64_t j = threadIdx.x; j < d / 4; j += kThreads) {
      const float4 v = row4[j];
      out4[j] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv,
                            expf(v.w - m) * inv);
    }
  } else {
    for (int64_t j = threadIdx.x; j < d; j += kThreads) out[j] = expf(row[j] - m) * inv;
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  // Base pointers are 256-byte aligned: with d % 4 == 0 every row is 16-byte aligned.
  if (d % 4 == 0) {
    softmax_online<true><<<rows, kThreads, 0, stream>>>(x, y, d);
  } else {
    softmax_online<false><<<rows, kThreads, 0, stream>>>(x, y, d);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
