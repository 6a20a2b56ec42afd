// Skill tc-wmma-smem-tiled-gemm: a block of 8 warps computes a 128x128 tile
// of C with WMMA (bf16 in, float32 accumulate). Per K step of 32, the block
// copies the 128x32 A tile and the 32x128 B tile into shared memory with
// 16-byte loads (each global element is read once per block instead of once
// per warp), then each warp (a 32x64 sub-tile: 2x4 fragments) loads its
// fragments from shared memory. Shared rows are skewed by 8 bf16 (16 bytes)
// so the fragment loads of consecutive rows do not fall into the same banks,
// while rows stay 16-byte aligned (and fragment pointers 32-byte aligned).
// Edge tiles are zero-filled in 16-byte chunks (needs K, N % 8 == 0); the
// epilogue rounds each 16x16 accumulator through a per-warp scratch to
// bfloat16 and stores 16-byte chunks.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int BM = 128, BN = 128, BK = 32, kWarps = 8, kThreads = 32 * kWarps;
constexpr int LDA = BK + 8, LDB = BN + 8;  // skewed rows (bf16 elements)

// Two floats -> one 32-bit word holding two bfloat16 (round to nearest even).
__device__ __forceinline__ unsigned PackBf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

__global__ void __launch_bounds__(kThreads)
gemm_wmma_smem(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
               __nv_bfloat16* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(32) __nv_bfloat16 as[BM][LDA];
  __shared__ __align__(32) __nv_bfloat16 bs[BK][LDB];
  __shared__ __align__(32) float scratch[kWarps][16][16];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / 2, wn = warp % 2;  // 4 x 2 warps, 32 x 64 each
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][4];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) wmma::fill_fragment(acc[i][j], 0.f);
  }
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  for (int k0 = 0; k0 < k; k0 += BK) {
#pragma unroll
    for (int p = 0; p < BM * BK / 8 / kThreads; ++p) {  // A: 512 chunks of 8
      const int ch = tid + p * kThreads, row = ch / (BK / 8), kc = (ch % (BK / 8)) * 8;
      const int gr = m0 + row, gk = k0 + kc;
      *reinterpret_cast<uint4*>(&as[row][kc]) =
          (gr < m && gk < k) ? *reinterpret_cast<const uint4*>(a + static_cast<int64_t>(gr) * k + gk)
                             : zero;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / 8 / kThreads; ++p) {  // B: 512 chunks of 8
      const int ch = tid + p * kThreads, kk = ch / (BN / 8), nc = (ch % (BN / 8)) * 8;
      const int gk = k0 + kk, gc = n0 + nc;
      *reinterpret_cast<uint4*>(&bs[kk][nc]) =
          (gk < k && gc < n) ? *reinterpret_cast<const uint4*>(b + static_cast<int64_t>(gk) * n + gc)
                             : zero;
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < BK; ks += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb[4];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &as[wm * 32 + i * 16][ks], LDA);
#pragma unroll
      for (int j = 0; j < 4; ++j) wmma::load_matrix_sync(fb[j], &bs[ks][wn * 64 + j * 16], LDB);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
  // Epilogue: each 16x16 accumulator -> scratch -> 16 rows x 2 chunks of 8 bf16.
  const int r = lane / 2, cc = (lane % 2) * 8;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      wmma::store_matrix_sync(&scratch[warp][0][0], acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int gr = m0 + wm * 32 + i * 16 + r, gc = n0 + wn * 64 + j * 16 + cc;
      if (gr < m && gc < n) {
        const float* s = &scratch[warp][r][cc];
        *reinterpret_cast<uint4*>(c + static_cast<int64_t>(gr) * n + gc) =
            make_uint4(PackBf16x2(s[0], s[1]), PackBf16x2(s[2], s[3]), PackBf16x2(s[4], s[5]),
                       PackBf16x2(s[6], s[7]));
      }
      __syncwarp();
    }
  }
}

// Shapes the tensor-core path does not take (dimensions not multiples of the
// required sizes) use a CUDA-core tiled kernel.
__global__ void gemm_bf16_simt(const __nv_bfloat16* __restrict__ a,
                               const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ c,
                               int64_t m, int64_t n, int64_t k) {
  __shared__ float as[16][16], bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = blockIdx.y * static_cast<int64_t>(16) + ty;
  const int64_t col = blockIdx.x * static_cast<int64_t>(16) + tx;
  float acc = 0.f;
  for (int64_t t = 0; t < k; t += 16) {
    as[ty][tx] = (row < m && t + tx < k) ? __bfloat162float(a[row * k + t + tx]) : 0.f;
    bs[ty][tx] = (t + ty < k && col < n) ? __bfloat162float(b[(t + ty) * n + col]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 16; ++q) acc += as[ty][q] * bs[q][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = __float2bfloat16(acc);
}

static void LaunchSimt(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                       int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16));
  gemm_bf16_simt<<<grid, dim3(16, 16), 0, stream>>>(a, b, c, m, n, k);
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  const auto* a = static_cast<const __nv_bfloat16*>(in[0].data);
  const auto* b = static_cast<const __nv_bfloat16*>(in[1].data);
  auto* c = static_cast<__nv_bfloat16*>(out[0].data);
  const int64_t lim = int64_t{1} << 31;
  // 16-byte chunks of A, B and C rows are aligned when K and N are multiples of 8.
  if (k % 8 == 0 && n % 8 == 0 && m * k < lim && k * n < lim && m * n < lim &&
      (m + BM - 1) / BM <= 65535) {
    const dim3 grid(static_cast<unsigned>((n + BN - 1) / BN), static_cast<unsigned>((m + BM - 1) / BM));
    gemm_wmma_smem<<<grid, kThreads, 0, stream>>>(a, b, c, static_cast<int>(m),
                                                  static_cast<int>(n), static_cast<int>(k));
  } else {
    LaunchSimt(a, b, c, m, n, k, stream);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
