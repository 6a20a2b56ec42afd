// Skill tc-register-tiling-outer-product: the baseline computes one output
// per thread from 16x16 shared tiles, i.e. one FMA per two shared-memory
// loads. Here a block of 256 threads computes a 128x128 tile of C; each
// thread owns an 8x8 accumulator block in registers, and for every k it loads
// 8 values of A's column and 8 values of B's row from shared memory and does
// their 8x8 outer product: 64 FMAs per 16 shared loads. A is stored
// transposed in shared memory (As[k][m], rows padded by 4 floats so the
// transposing stores do not conflict); thread (ty, tx) owns rows ty + 16 i
// and columns tx + 16 j, so shared reads are broadcasts or consecutive words
// and global stores stay coalesced. Edges are zero-filled on load and
// guarded on store. 32-bit index math (shapes up to 2^31 elements per
// operand).
#include <cuda_runtime.h>

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, kDim = 16;  // 16x16 threads

__global__ void __launch_bounds__(kDim * kDim, 2)
sgemm_reg_tile(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
               int m, int n, int k) {
  __shared__ float as[BK][BM + 4];  // transposed A tile: as[kk][row]
  __shared__ float bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kDim + tx;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  }
  for (int k0 = 0; k0 < k; k0 += BK) {
#pragma unroll
    for (int p = 0; p < BM * BK / (kDim * kDim); ++p) {  // 4 elements of A per thread
      const int e = tid + p * kDim * kDim, row = e / BK, kk = e % BK;
      const int gr = m0 + row, gk = k0 + kk;
      as[kk][row] = (gr < m && gk < k) ? a[gr * k + gk] : 0.f;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / (kDim * kDim); ++p) {  // 4 elements of B per thread
      const int e = tid + p * kDim * kDim, kk = e / BN, col = e % BN;
      const int gk = k0 + kk, gc = n0 + col;
      bs[kk][col] = (gk < k && gc < n) ? b[gk * n + gc] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float av[TM], bv[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) av[i] = as[kk][ty + kDim * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) bv[j] = bs[kk][tx + kDim * j];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = m0 + ty + kDim * i;
    if (r >= m) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int col = n0 + tx + kDim * j;
      if (col < n) c[r * n + col] = acc[i][j];
    }
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const dim3 grid(static_cast<unsigned>((n + BN - 1) / BN), static_cast<unsigned>((m + BM - 1) / BM));
  const int64_t lim = int64_t{1} << 31;
  if (grid.y > 65535u || m * k >= lim || k * n >= lim || m * n >= lim) return 1;
  sgemm_reg_tile<<<grid, dim3(kDim, kDim), 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), static_cast<int>(m), static_cast<int>(n),
      static_cast<int>(k));
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
