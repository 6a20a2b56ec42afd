// Skill tc-tf32-3x-error-compensation: an fp32 GEMM on TF32 tensor cores
// with fp32-level accuracy. Every operand x is split into big = tf32(x) and
// small = tf32(x - big) (x - big is exact in fp32), and
// a*b ~ a_big*b_big + a_big*b_small + a_small*b_big (the dropped
// a_small*b_small term is below fp32 rounding). The big product and the two
// correction products go to separate WMMA accumulators, and after every K
// tile of 32 both are added into plain fp32 fragments with ordinary FADDs and
// restarted, so the tensor cores never accumulate a long K on their own.
// Plain TF32 (one product) would miss the task's 1e-4 tolerance.
// Block: 8 warps, 64x64 tile of C (each warp 16x32 = 1x2 m16n16k8
// fragments); operand tiles staged in shared memory with zero-filled edges.
// 32-bit index math (operands up to 2^31 elements).
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int BM = 64, BN = 64, BK = 32, kThreads = 256;
constexpr int LDA = BK + 4, LDB = BN + 4, LDC = BN + 4;  // multiples of 4 floats (16 bytes)

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 8, float>;

template <class Frag>
__device__ __forceinline__ void Split(Frag& big, Frag& small) {
#pragma unroll
  for (int t = 0; t < big.num_elements; ++t) {
    const float v = big.x[t];
    const float hi = wmma::__float_to_tf32(v);
    big.x[t] = hi;
    small.x[t] = wmma::__float_to_tf32(v - hi);
  }
}

__global__ void __launch_bounds__(kThreads, 2)
sgemm_3xtf32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
             int m, int n, int k) {
  __shared__ __align__(32) float as[BM][LDA];
  __shared__ __align__(32) float bs[BK][LDB];
  __shared__ __align__(32) float cs[BM][LDC];
  const int tid = threadIdx.x, warp = tid / 32, wm = warp / 2, wn = warp % 2;  // 4 x 2 warps
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  FragC total[2], big[2], corr[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    wmma::fill_fragment(total[j], 0.f);
    wmma::fill_fragment(big[j], 0.f);
    wmma::fill_fragment(corr[j], 0.f);
  }
  for (int k0 = 0; k0 < k; k0 += BK) {
#pragma unroll
    for (int p = 0; p < BM * BK / kThreads; ++p) {
      const int e = tid + p * kThreads, row = e / BK, kk = e % BK;
      const int gr = m0 + row, gk = k0 + kk;
      as[row][kk] = (gr < m && gk < k) ? a[gr * k + gk] : 0.f;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / kThreads; ++p) {
      const int e = tid + p * kThreads, kk = e / BN, col = e % BN;
      const int gk = k0 + kk, gc = n0 + col;
      bs[kk][col] = (gk < k && gc < n) ? b[gk * n + gc] : 0.f;
    }
    __syncthreads();
#pragma unroll 1
    for (int ks = 0; ks < BK; ks += 8) {
      FragA a_big, a_small;
      wmma::load_matrix_sync(a_big, &as[wm * 16][ks], LDA);
      Split(a_big, a_small);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        FragB b_big, b_small;
        wmma::load_matrix_sync(b_big, &bs[ks][wn * 32 + j * 16], LDB);
        Split(b_big, b_small);
        wmma::mma_sync(corr[j], a_big, b_small, corr[j]);
        wmma::mma_sync(corr[j], a_small, b_big, corr[j]);
        wmma::mma_sync(big[j], a_big, b_big, big[j]);
      }
    }
    // Promote: fold the tensor-core partial sums into fp32 registers.
#pragma unroll
    for (int j = 0; j < 2; ++j) {
#pragma unroll
      for (int t = 0; t < total[j].num_elements; ++t) total[j].x[t] += big[j].x[t] + corr[j].x[t];
      wmma::fill_fragment(big[j], 0.f);
      wmma::fill_fragment(corr[j], 0.f);
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    wmma::store_matrix_sync(&cs[wm * 16][wn * 32 + j * 16], total[j], LDC, wmma::mem_row_major);
  }
  __syncthreads();
#pragma unroll
  for (int p = 0; p < BM * BN / kThreads; ++p) {
    const int e = tid + p * kThreads, row = e / BN, col = e % BN;
    const int gr = m0 + row, gc = n0 + col;
    if (gr < m && gc < n) c[gr * n + gc] = cs[row][col];
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const dim3 grid(static_cast<unsigned>((n + BN - 1) / BN), static_cast<unsigned>((m + BM - 1) / BM));
  const int64_t lim = int64_t{1} << 31;
  if (grid.y > 65535u || m * k >= lim || k * n >= lim || m * n >= lim) return 1;
  sgemm_3xtf32<<<grid, kThreads, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), static_cast<int>(m), static_cast<int>(n),
      static_cast<int>(k));
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
