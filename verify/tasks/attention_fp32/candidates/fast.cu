// Faster attention: one fused kernel in the style of FlashAttention, on CUDA
// cores. A block of 256 threads owns 64 queries of one (batch, head) and
// walks the keys in tiles of 64: S = Q K^T (each thread a 4x4 register
// block, operands stored d-major in shared memory and read as float4),
// online softmax (running max and sum per row, reduced across the 16 lanes
// that share a row with shuffles), then O += P V with P staged in the
// shared memory K used. The S x S score matrix never reaches global
// memory. Head sizes other than 64 use a simple per-query kernel.
#include <cuda_runtime.h>
#include <math.h>

constexpr int D = 64, BQ = 64, BKV = 64, LD = 68, kThreads = 256;
constexpr size_t kSmemBytes = 3 * D * LD * sizeof(float);

__global__ void __launch_bounds__(kThreads)
attention_fused(const float* __restrict__ q, const float* __restrict__ k,
                const float* __restrict__ v, float* __restrict__ o, int s, float scale) {
  extern __shared__ __align__(16) float smem[];
  float* qt = smem;               // qt[d * LD + query]
  float* kt = smem + D * LD;      // kt[d * LD + key], then P[query * LD + key]
  float* vs = smem + 2 * D * LD;  // vs[key * LD + d]
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t base = static_cast<int64_t>(blockIdx.y) * s * D;
  const int q0 = blockIdx.x * BQ;
  for (int e = tid; e < BQ * D; e += kThreads) {
    const int qi = e / D, d = e % D;
    qt[d * LD + qi] = q0 + qi < s ? q[base + static_cast<int64_t>(q0 + qi) * D + d] : 0.f;
  }
  float m[4], l[4], acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
  }
  for (int k0 = 0; k0 < s; k0 += BKV) {
    __syncthreads();  // the previous tile's P and V are no longer read
    for (int e = tid; e < BKV * D; e += kThreads) {
      const int kj = e / D, d = e % D;
      const bool ok = k0 + kj < s;
      const int64_t g = base + static_cast<int64_t>(k0 + kj) * D + d;
      kt[d * LD + kj] = ok ? k[g] : 0.f;
      vs[kj * LD + d] = ok ? v[g] : 0.f;
    }
    __syncthreads();
    float sc[4][4] = {};
#pragma unroll 8
    for (int d = 0; d < D; ++d) {
      const float4 a = *reinterpret_cast<const float4*>(&qt[d * LD + ty * 4]);
      const float4 b = *reinterpret_cast<const float4*>(&kt[d * LD + tx * 4]);
      const float ra[4] = {a.x, a.y, a.z, a.w}, rb[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) sc[i][j] = fmaf(ra[i], rb[j], sc[i][j]);
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        sc[i][j] = k0 + tx * 4 + j < s ? sc[i][j] * scale : -INFINITY;
        tile_max = fmaxf(tile_max, sc[i][j]);
      }
#pragma unroll
      for (int off = 8; off > 0; off >>= 1) {
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
      }
      const float m_new = fmaxf(m[i], tile_max);
      const float corr = expf(m[i] - m_new);
      float row_sum = 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        sc[i][j] = expf(sc[i][j] - m_new);
        row_sum += sc[i][j];
      }
#pragma unroll
      for (int off = 8; off > 0; off >>= 1) {
        row_sum += __shfl_xor_sync(0xffffffffu, row_sum, off);
      }
      l[i] = l[i] * corr + row_sum;
      m[i] = m_new;
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] *= corr;
    }
    __syncthreads();  // everyone is done reading kt
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      *reinterpret_cast<float4*>(&kt[(ty * 4 + i) * LD + tx * 4]) =
          make_float4(sc[i][0], sc[i][1], sc[i][2], sc[i][3]);
    }
    __syncthreads();
#pragma unroll 8
    for (int kj = 0; kj < BKV; ++kj) {
      const float4 vv = *reinterpret_cast<const float4*>(&vs[kj * LD + tx * 4]);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float p = kt[(ty * 4 + i) * LD + kj];
        acc[i][0] = fmaf(p, vv.x, acc[i][0]);
        acc[i][1] = fmaf(p, vv.y, acc[i][1]);
        acc[i][2] = fmaf(p, vv.z, acc[i][2]);
        acc[i][3] = fmaf(p, vv.w, acc[i][3]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = q0 + ty * 4 + i;
    if (row < s) {
      const float inv = 1.f / l[i];
      *reinterpret_cast<float4*>(&o[base + static_cast<int64_t>(row) * D + tx * 4]) =
          make_float4(acc[i][0] * inv, acc[i][1] * inv, acc[i][2] * inv, acc[i][3] * inv);
    }
  }
}

// Any head size: one thread per query, three passes over the keys.
__global__ void attention_simple(const float* q, const float* k, const float* v, float* o,
                                 int64_t bh, int64_t s, int64_t d, float scale) {
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= bh * s) return;
  const int64_t z = idx / s, i = idx % s;
  const float* qq = q + (z * s + i) * d;
  const float* kk = k + z * s * d;
  const float* vv = v + z * s * d;
  float m = -INFINITY;
  for (int64_t j = 0; j < s; ++j) {
    float a = 0.f;
    for (int64_t c = 0; c < d; ++c) a += qq[c] * kk[j * d + c];
    m = fmaxf(m, a * scale);
  }
  float sum = 0.f;
  for (int64_t j = 0; j < s; ++j) {
    float a = 0.f;
    for (int64_t c = 0; c < d; ++c) a += qq[c] * kk[j * d + c];
    sum += expf(a * scale - m);
  }
  for (int64_t c = 0; c < d; ++c) o[(z * s + i) * d + c] = 0.f;
  for (int64_t j = 0; j < s; ++j) {
    float a = 0.f;
    for (int64_t c = 0; c < d; ++c) a += qq[c] * kk[j * d + c];
    const float p = expf(a * scale - m) / sum;
    for (int64_t c = 0; c < d; ++c) o[(z * s + i) * d + c] += p * vv[j * d + c];
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1 || in[0].ndim != 4) return 1;
  const int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  const float scale = 1.f / sqrtf(static_cast<float>(d));
  const auto* q = static_cast<const float*>(in[0].data);
  const auto* k = static_cast<const float*>(in[1].data);
  const auto* v = static_cast<const float*>(in[2].data);
  auto* o = static_cast<float*>(out[0].data);
  if (d == D && s < (1 << 30) && bh < 65536) {
    cudaFuncSetAttribute(attention_fused, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(kSmemBytes));
    const dim3 grid(static_cast<unsigned>((s + BQ - 1) / BQ), static_cast<unsigned>(bh));
    attention_fused<<<grid, kThreads, kSmemBytes, stream>>>(q, k, v, o, static_cast<int>(s),
                                                            scale);
  } else {
    attention_simple<<<(bh * s + 127) / 128, 128, 0, stream>>>(q, k, v, o, bh, s, d, scale);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
