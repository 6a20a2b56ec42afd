// Faster softmax: each row lives in registers (float4 loads, VEC vectors per
// thread), so x is read once and exp computed once per element; max and sum
// use warp shuffles plus one shared-memory step across warps. Rows whose
// length is not a multiple of 4 or too long fall back to a generic kernel.
#include <cuda_runtime.h>
#include <math.h>

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Reduces across the block's warps; every thread gets the result.
template <bool kMax>
__device__ float BlockReduce(float v, float* smem) {
  v = kMax ? WarpMax(v) : WarpSum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = lane < kWarps ? smem[lane] : (kMax ? -INFINITY : 0.f);
  v = kMax ? WarpMax(v) : WarpSum(v);
  __syncthreads();
  return v;
}

template <int VEC>
__global__ void __launch_bounds__(kThreads)
softmax_rows_vec(const float4* __restrict__ x, float4* __restrict__ y, int d4) {
  __shared__ float smem[kWarps];
  const float4* row = x + static_cast<int64_t>(blockIdx.x) * d4;
  float4* out = y + static_cast<int64_t>(blockIdx.x) * d4;
  float4 v[VEC];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    const int j = threadIdx.x + k * kThreads;
    v[k] = j < d4 ? __ldg(row + j) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  }
  m = BlockReduce<true>(m, smem);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    v[k].x = __expf(v[k].x - m);
    v[k].y = __expf(v[k].y - m);
    v[k].z = __expf(v[k].z - m);
    v[k].w = __expf(v[k].w - m);
    s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  s = BlockReduce<false>(s, smem);
  const float inv = 1.f / s;
#pragma unroll
  for (int k = 0; k < VEC; ++k) {
    const int j = threadIdx.x + k * kThreads;
    if (j < d4) out[j] = make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
  }
}

__global__ void softmax_rows_generic(const float* x, float* y, int64_t d) {
  __shared__ float smem[kWarps];
  const float* row = x + blockIdx.x * d;
  float* out = y + blockIdx.x * d;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < d; j += kThreads) m = fmaxf(m, row[j]);
  m = BlockReduce<true>(m, smem);
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < d; j += kThreads) s += expf(row[j] - m);
  s = BlockReduce<false>(s, smem);
  const float inv = 1.f / s;
  for (int64_t j = threadIdx.x; j < d; j += kThreads) out[j] = expf(row[j] - m) * inv;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t d = in[0].shape[in[0].ndim - 1];
  const int64_t rows = in[0].numel / d;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t d4 = d / 4;
  if (d % 4 != 0 || d4 > 8 * kThreads) {
    softmax_rows_generic<<<rows, kThreads, 0, stream>>>(x, y, d);
  } else if (d4 <= kThreads) {
    softmax_rows_vec<1><<<rows, kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), static_cast<int>(d4));
  } else if (d4 <= 2 * kThreads) {
    softmax_rows_vec<2><<<rows, kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), static_cast<int>(d4));
  } else if (d4 <= 4 * kThreads) {
    softmax_rows_vec<4><<<rows, kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), static_cast<int>(d4));
  } else {
    softmax_rows_vec<8><<<rows, kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), static_cast<int>(d4));
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
