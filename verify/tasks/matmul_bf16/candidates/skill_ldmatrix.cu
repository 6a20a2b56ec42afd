// Skill tc-ldmatrix-fragment-loads: the mma.sync m16n8k16 bf16 GEMM with its
// operand fragments loaded by ldmatrix instead of per-lane 32-bit loads:
// one ldmatrix.x4 gives a warp the four A registers of a 16x16 tile (lane l
// supplies the address of row l % 16, column block l / 16), and one
// ldmatrix.x4.trans gives the B registers of two n8 tiles straight from a
// row-major (k, n) tile (lane l: row k0 + l % 16, column n0 + 8 (l / 16)),
// so B needs no transposing copy into shared memory; both tiles are staged
// with plain 16-byte copies. Row strides of 80 and 144 bytes keep the eight
// 16-byte row reads of each 8x8 matrix in distinct bank groups. Block: 4
// warps, 64x64 tile, BK = 32; each warp computes 32x32 (2 x 4 mma tiles).
// Zero-filled edges need K, N % 8 == 0.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

constexpr int BM = 64, BN = 64, BK = 32, kThreads = 128, LDA = BK + 8, LDB = BN + 8;

__device__ __forceinline__ void MmaBf16(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                        unsigned a3, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(d[0]), "f"(d[1]), "f"(d[2]),
        "f"(d[3]));
}

__device__ __forceinline__ unsigned SmemAddr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void LdMatrixX4(unsigned (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddr(row_addr)));
}
__device__ __forceinline__ void LdMatrixX4Trans(unsigned (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddr(row_addr)));
}

__device__ __forceinline__ unsigned PackBf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

__global__ void __launch_bounds__(kThreads)
gemm_ldmatrix(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
              __nv_bfloat16* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(16) __nv_bfloat16 as[BM][LDA];  // as[m][k]
  __shared__ __align__(16) __nv_bfloat16 bs[BK][LDB];  // bs[k][n], row-major like B
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm = warp / 2, wn = warp % 2;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[2][4][4] = {};
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  for (int k0 = 0; k0 < k; k0 += BK) {
#pragma unroll
    for (int p = 0; p < BM * BK / 8 / kThreads; ++p) {  // A: 256 chunks of 8
      const int ch = tid + p * kThreads, row = ch / (BK / 8), kc = (ch % (BK / 8)) * 8;
      const int gr = m0 + row, gk = k0 + kc;
      *reinterpret_cast<uint4*>(&as[row][kc]) =
          (gr < m && gk < k) ? *reinterpret_cast<const uint4*>(a + static_cast<int64_t>(gr) * k + gk)
                             : zero;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / 8 / kThreads; ++p) {  // B: 256 chunks of 8
      const int ch = tid + p * kThreads, kk = ch / (BN / 8), nc = (ch % (BN / 8)) * 8;
      const int gk = k0 + kk, gc = n0 + nc;
      *reinterpret_cast<uint4*>(&bs[kk][nc]) =
          (gk < k && gc < n) ? *reinterpret_cast<const uint4*>(b + static_cast<int64_t>(gk) * n + gc)
                             : zero;
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < BK; ks += 16) {
      unsigned fa[2][4], fb[4][2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        LdMatrixX4(fa[i], &as[wm * 32 + i * 16 + (lane % 16)][ks + (lane / 16) * 8]);
      }
#pragma unroll
      for (int jj = 0; jj < 2; ++jj) {  // two n8 tiles per ldmatrix.x4.trans
        unsigned r[4];
        LdMatrixX4Trans(r, &bs[ks + (lane % 16)][wn * 32 + jj * 16 + (lane / 16) * 8]);
        fb[2 * jj][0] = r[0];
        fb[2 * jj][1] = r[1];
        fb[2 * jj + 1][0] = r[2];
        fb[2 * jj + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          MmaBf16(acc[i][j], fa[i][0], fa[i][1], fa[i][2], fa[i][3], fb[j][0], fb[j][1]);
        }
      }
    }
    __syncthreads();
  }
  // c0,c1 -> (row g, cols 2t, 2t+1); c2,c3 -> (row g + 8, same cols).
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int col = n0 + wn * 32 + j * 8 + 2 * t;
      const int r = m0 + wm * 32 + i * 16 + g;
      if (col < n) {  // n is even, so col + 1 < n too
        if (r < m) {
          *reinterpret_cast<unsigned*>(c + static_cast<int64_t>(r) * n + col) =
              PackBf16x2(acc[i][j][0], acc[i][j][1]);
        }
        if (r + 8 < m) {
          *reinterpret_cast<unsigned*>(c + static_cast<int64_t>(r + 8) * n + col) =
              PackBf16x2(acc[i][j][2], acc[i][j][3]);
        }
      }
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
  // 16-byte chunks of A and B rows are aligned when K and N are multiples of 8.
  if (k % 8 == 0 && n % 8 == 0 && m * k < lim && k * n < lim && m * n < lim &&
      (m + BM - 1) / BM <= 65535) {
    const dim3 grid(static_cast<unsigned>((n + BN - 1) / BN), static_cast<unsigned>((m + BM - 1) / BM));
    gemm_ldmatrix<<<grid, kThreads, 0, stream>>>(a, b, c, static_cast<int>(m), static_cast<int>(n),
                                                 static_cast<int>(k));
  } else {
    LaunchSimt(a, b, c, m, n, k, stream);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
