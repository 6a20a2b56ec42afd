// Skill fuse-flash-attention-tiling: O = softmax(Q K^T / sqrt(D)) V in one
// kernel with no S x S score buffer. A block of 64 threads owns 64 queries of
// one (batch, head); each thread keeps its query row (pre-scaled by
// 1/sqrt(D)) and its output row in registers. K and V are streamed through
// shared memory in tiles of 64 keys; every thread reads the same key row at
// the same time (a broadcast). Keys are consumed 16 at a time: 16 scores,
// then the online-softmax update (new running max m, rescale of the running
// sum l and of the output row by exp(m_old - m_new), l += sum of
// exp(s - m_new), O += P V). Scores of keys past the sequence end are -inf.
// The division by l happens once at the end. D = 64 is compiled in; other
// head sizes use a simple per-query fallback.
#include <cuda_runtime.h>
#include <math.h>

constexpr int kD = 64, kD4 = kD / 4, kQ = 64, kKeys = 64, kChunk = 16;

__global__ void __launch_bounds__(kQ)
flash_attention_d64(const float* __restrict__ q, const float* __restrict__ k,
                    const float* __restrict__ v, float* __restrict__ o, int s, float scale) {
  __shared__ float4 ks[kKeys][kD4];
  __shared__ float4 vs[kKeys][kD4];
  const int64_t base = static_cast<int64_t>(blockIdx.y) * s * kD;  // this (batch, head)
  const int qi = blockIdx.x * kQ + threadIdx.x;
  const bool q_ok = qi < s;
  float qr[kD], acc[kD];
  {
    const float4* q4 = reinterpret_cast<const float4*>(q + base + static_cast<int64_t>(q_ok ? qi : 0) * kD);
#pragma unroll
    for (int d4 = 0; d4 < kD4; ++d4) {
      const float4 t = q4[d4];
      qr[4 * d4] = t.x * scale;
      qr[4 * d4 + 1] = t.y * scale;
      qr[4 * d4 + 2] = t.z * scale;
      qr[4 * d4 + 3] = t.w * scale;
    }
  }
#pragma unroll
  for (int d = 0; d < kD; ++d) acc[d] = 0.f;
  float m = -INFINITY, l = 0.f;
  const float4* k4 = reinterpret_cast<const float4*>(k + base);
  const float4* v4 = reinterpret_cast<const float4*>(v + base);
  for (int kt = 0; kt < s; kt += kKeys) {
    __syncthreads();  // the previous tile is no longer read
#pragma unroll 4
    for (int p = 0; p < kKeys * kD4 / kQ; ++p) {
      const int e = threadIdx.x + p * kQ, row = e / kD4, c4 = e % kD4;
      const bool ok = kt + row < s;
      const int64_t idx = static_cast<int64_t>(kt + row) * kD4 + c4;
      ks[row][c4] = ok ? k4[idx] : make_float4(0.f, 0.f, 0.f, 0.f);
      vs[row][c4] = ok ? v4[idx] : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    __syncthreads();
    const int nvalid = s - kt < kKeys ? s - kt : kKeys;
    for (int j0 = 0; j0 < nvalid; j0 += kChunk) {
      float sc[kChunk];
#pragma unroll
      for (int jj = 0; jj < kChunk; ++jj) sc[jj] = 0.f;
#pragma unroll
      for (int d4 = 0; d4 < kD4; ++d4) {
#pragma unroll
        for (int jj = 0; jj < kChunk; ++jj) {
          const float4 kk = ks[j0 + jj][d4];
          sc[jj] = fmaf(qr[4 * d4], kk.x, sc[jj]);
          sc[jj] = fmaf(qr[4 * d4 + 1], kk.y, sc[jj]);
          sc[jj] = fmaf(qr[4 * d4 + 2], kk.z, sc[jj]);
          sc[jj] = fmaf(qr[4 * d4 + 3], kk.w, sc[jj]);
        }
      }
      float mloc = m;
#pragma unroll
      for (int jj = 0; jj < kChunk; ++jj) {
        if (j0 + jj >= nvalid) sc[jj] = -INFINITY;  // past the sequence end
        mloc = fmaxf(mloc, sc[jj]);
      }
      const float corr = m == -INFINITY ? 0.f : expf(m - mloc);
      l *= corr;
#pragma unroll
      for (int d = 0; d < kD; ++d) acc[d] *= corr;
#pragma unroll
      for (int jj = 0; jj < kChunk; ++jj) {
        const float p = expf(sc[jj] - mloc);  // 0 for masked keys
        l += p;
#pragma unroll
        for (int d4 = 0; d4 < kD4; ++d4) {
          const float4 vv = vs[j0 + jj][d4];
          acc[4 * d4] = fmaf(p, vv.x, acc[4 * d4]);
          acc[4 * d4 + 1] = fmaf(p, vv.y, acc[4 * d4 + 1]);
          acc[4 * d4 + 2] = fmaf(p, vv.z, acc[4 * d4 + 2]);
          acc[4 * d4 + 3] = fmaf(p, vv.w, acc[4 * d4 + 3]);
        }
      }
      m = mloc;
    }
  }
  if (q_ok) {
    const float inv = 1.f / l;
    float4* o4 = reinterpret_cast<float4*>(o + base + static_cast<int64_t>(qi) * kD);
#pragma unroll
    for (int d4 = 0; d4 < kD4; ++d4) {
      o4[d4] = make_float4(acc[4 * d4] * inv, acc[4 * d4 + 1] * inv, acc[4 * d4 + 2] * inv,
                           acc[4 * d4 + 3] * inv);
    }
  }
}

// Any head size: one thread per query, online softmax one key at a time
// (the output row lives in local memory). Not used for the task's shapes.
__global__ void attention_generic(const float* __restrict__ q, const float* __restrict__ k,
                                  const float* __restrict__ v, float* __restrict__ o, int64_t bh,
                                  int64_t s, int64_t d, float scale) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= bh * s) return;
  const int64_t base = (i / s) * s * d;
  const float* qr = q + i * d;
  float* out = o + i * d;
  for (int64_t c = 0; c < d; ++c) out[c] = 0.f;
  float m = -INFINITY, l = 0.f;
  for (int64_t j = 0; j < s; ++j) {
    const float* kr = k + base + j * d;
    float sc = 0.f;
    for (int64_t c = 0; c < d; ++c) sc += qr[c] * kr[c];
    sc *= scale;
    const float mn = fmaxf(m, sc);
    const float corr = m == -INFINITY ? 0.f : expf(m - mn);
    const float p = expf(sc - mn);
    l = l * corr + p;
    const float* vr = v + base + j * d;
    for (int64_t c = 0; c < d; ++c) out[c] = out[c] * corr + p * vr[c];
    m = mn;
  }
  const float inv = 1.f / l;
  for (int64_t c = 0; c < d; ++c) out[c] *= inv;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1 || in[0].ndim != 4) return 1;
  const int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  const float scale = 1.f / sqrtf(static_cast<float>(d));
  const float* pq = static_cast<const float*>(in[0].data);
  const float* pk = static_cast<const float*>(in[1].data);
  const float* pv = static_cast<const float*>(in[2].data);
  float* po = static_cast<float*>(out[0].data);
  if (d == kD && bh <= 65535 && s < (1LL << 30)) {
    const dim3 grid(static_cast<unsigned>((s + kQ - 1) / kQ), static_cast<unsigned>(bh));
    flash_attention_d64<<<grid, kQ, 0, stream>>>(pq, pk, pv, po, static_cast<int>(s), scale);
  } else {
    attention_generic<<<static_cast<unsigned>((bh * s + 127) / 128), 128, 0, stream>>>(
        pq, pk, pv, po, bh, s, d, scale);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
