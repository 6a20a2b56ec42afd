// Skill tc-wmma-fragment-basics: tensor cores through the WMMA API in their
// simplest form. Each warp owns a 32x32 tile of C as 2x2 accumulator
// fragments (16x16, float32); for every 16-wide step of K it loads two A
// fragments (16x16 bf16, row-major, leading dimension K) and two B fragments
// (leading dimension N) straight from global memory with load_matrix_sync,
// and issues four mma_sync. No shared-memory staging (the L1/L2 caches serve
// the reuse between warps); the float32 accumulators go through a per-warp
// shared scratch once at the end to be rounded to bfloat16. Requirements of
// the fragment loads: 32-byte aligned pointers and leading dimensions that
// are multiples of 8 elements, hence the path for M, N % 64 == 0 and
// K % 16 == 0.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int kWarps = 4, kThreads = 32 * kWarps, BM = 64, BN = 64, LDS = 32 + 4;

__global__ void __launch_bounds__(kThreads)
gemm_wmma_direct(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                 __nv_bfloat16* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(32) float scratch[kWarps][32][LDS];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * BM + (warp / 2) * 32;
  const int col0 = blockIdx.x * BN + (warp % 2) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);
  }
  for (int kk = 0; kk < k; kk += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      wmma::load_matrix_sync(fa[i], a + static_cast<int64_t>(row0 + i * 16) * k + kk, k);
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wmma::load_matrix_sync(fb[j], b + static_cast<int64_t>(kk) * n + col0 + j * 16, n);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wmma::store_matrix_sync(&scratch[warp][i * 16][j * 16], acc[i][j], LDS, wmma::mem_row_major);
    }
  }
  __syncwarp();
  // 32x32 floats -> bfloat16 pairs: lane writes pairs (r, 2p), 16 pairs per row.
#pragma unroll
  for (int q = 0; q < 16; ++q) {
    const int idx = q * 32 + lane, r = idx / 16, p = idx % 16;
    *reinterpret_cast<__nv_bfloat162*>(c + static_cast<int64_t>(row0 + r) * n + col0 + 2 * p) =
        __floats2bfloat162_rn(scratch[warp][r][2 * p], scratch[warp][r][2 * p + 1]);
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
  if (m % BM == 0 && n % BN == 0 && k % 16 == 0 && m * k < lim && k * n < lim && m * n < lim &&
      m / BM <= 65535) {
    const dim3 grid(static_cast<unsigned>(n / BN), static_cast<unsigned>(m / BM));
    gemm_wmma_direct<<<grid, kThreads, 0, stream>>>(a, b, c, static_cast<int>(m),
                                                    static_cast<int>(n), static_cast<int>(k));
  } else {
    LaunchSimt(a, b, c, m, n, k, stream);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
