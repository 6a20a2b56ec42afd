// Skill mem-cp-async-multistage-pipeline: a WMMA bf16 GEMM (128x128 block
// tile, 8 warps, each 32x64 = 2x4 fragments, K step 32) whose operand tiles
// arrive through a 3-stage cp.async ring in dynamic shared memory: while the
// warps multiply tile t, the copies of tiles t+1 and t+2 are in flight
// (cp.async.cg, 16 bytes, straight to shared memory without registers).
// Per iteration: wait until at most one copy group is pending (tile t has
// landed), __syncthreads (everyone's copies are visible and everyone is done
// with the stage about to be refilled), issue tile t+2 into the stage tile
// t-1 used, commit (an empty group at the end keeps the count uniform), then
// compute. Edge chunks are zero-filled by the copy's src-size operand (needs
// K, N % 8 == 0); 56 KB of shared memory needs the opt-in attribute.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int BM = 128, BN = 128, BK = 32, kStages = 3, kWarps = 8, kThreads = 32 * kWarps;
constexpr int LDA = BK + 8, LDB = BN + 8;  // skewed rows (bf16 elements), 16-byte multiples
constexpr int kStageA = BM * LDA, kStageB = BK * LDB;  // elements per stage
constexpr int kSmemBytes = kStages * (kStageA + kStageB) * 2;

__device__ __forceinline__ unsigned SmemAddr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void CpAsync16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SmemAddr(dst)), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void CpCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void CpWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ unsigned PackBf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

// Issues the 16-byte copies of K tile k0 into one stage (512 + 512 chunks).
__device__ __forceinline__ void IssueTile(__nv_bfloat16* as, __nv_bfloat16* bs,
                                          const __nv_bfloat16* a, const __nv_bfloat16* b, int m,
                                          int n, int k, int m0, int n0, int k0, int tid) {
#pragma unroll
  for (int p = 0; p < BM * BK / 8 / kThreads; ++p) {
    const int ch = tid + p * kThreads, row = ch / (BK / 8), kc = (ch % (BK / 8)) * 8;
    const int gr = m0 + row, gk = k0 + kc;
    const bool ok = gr < m && gk < k;
    CpAsync16(as + row * LDA + kc, ok ? a + static_cast<int64_t>(gr) * k + gk : a, ok ? 16 : 0);
  }
#pragma unroll
  for (int p = 0; p < BK * BN / 8 / kThreads; ++p) {
    const int ch = tid + p * kThreads, kk = ch / (BN / 8), nc = (ch % (BN / 8)) * 8;
    const int gk = k0 + kk, gc = n0 + nc;
    const bool ok = gk < k && gc < n;
    CpAsync16(bs + kk * LDB + nc, ok ? b + static_cast<int64_t>(gk) * n + gc : b, ok ? 16 : 0);
  }
}

__global__ void __launch_bounds__(kThreads)
gemm_wmma_cp_async(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                   __nv_bfloat16* __restrict__ c, int m, int n, int k) {
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* as = reinterpret_cast<__nv_bfloat16*>(smem);  // [kStages][BM][LDA]
  __nv_bfloat16* bs = as + kStages * kStageA;                  // [kStages][BK][LDB]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / 2, wn = warp % 2;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tiles = (k + BK - 1) / BK;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][4];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) wmma::fill_fragment(acc[i][j], 0.f);
  }
  // Prologue: tiles 0 and 1 in flight.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) IssueTile(as + s * kStageA, bs + s * kStageB, a, b, m, n, k, m0, n0, s * BK, tid);
    CpCommit();
  }
  for (int t = 0; t < tiles; ++t) {
    CpWait<kStages - 2>();  // tile t complete
    __syncthreads();
    const int next = t + kStages - 1;
    if (next < tiles) {
      const int s = next % kStages;
      IssueTile(as + s * kStageA, bs + s * kStageB, a, b, m, n, k, m0, n0, next * BK, tid);
    }
    CpCommit();
    const __nv_bfloat16* at = as + (t % kStages) * kStageA;
    const __nv_bfloat16* bt = bs + (t % kStages) * kStageB;
#pragma unroll
    for (int ks = 0; ks < BK; ks += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb[4];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], at + (wm * 32 + i * 16) * LDA + ks, LDA);
#pragma unroll
      for (int j = 0; j < 4; ++j) wmma::load_matrix_sync(fb[j], bt + ks * LDB + wn * 64 + j * 16, LDB);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
    }
  }
  CpWait<0>();
  __syncthreads();  // the stages are reused as per-warp epilogue scratch
  float* scratch = reinterpret_cast<float*>(smem) + warp * 256;  // 16x16 floats per warp
  const int r = lane / 2, cc = (lane % 2) * 8;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int gr = m0 + wm * 32 + i * 16 + r, gc = n0 + wn * 64 + j * 16 + cc;
      if (gr < m && gc < n) {
        const float* s = scratch + r * 16 + cc;
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
    if (cudaFuncSetAttribute(gemm_wmma_cp_async, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             kSmemBytes) != cudaSuccess) {
      return 2;
    }
    const dim3 grid(static_cast<unsigned>((n + BN - 1) / BN), static_cast<unsigned>((m + BM - 1) / BM));
    gemm_wmma_cp_async<<<grid, kThreads, kSmemBytes, stream>>>(
        a, b, c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
  } else {
    LaunchSimt(a, b, c, m, n, k, stream);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
