// Skill op-conv2d-implicit-gemm: the 3x3 convolution as a GEMM that is never
// materialized. Output pixels (n, oy, ox) are the GEMM rows (M = N*H*W),
// output channels the columns (N_gemm = K), and (c, dy, dx) the reduction
// (K_gemm = C*9, which is exactly the row-major layout of w[K][C][3][3]).
// Each block computes a 64x64 tile of that GEMM with 4x4 outputs per
// thread; the A tile is gathered on the fly from x (index decode per element,
// zero outside the image = the padding), the B tile is a plain slice of w.
// Tile loads are coalesced: consecutive threads take consecutive pixels for
// A and consecutive reduction indices for B.
#include <cuda_runtime.h>

constexpr int BM = 64, BN = 64, BK = 16, kDim = 16, TM = 4, TN = 4;

__global__ void __launch_bounds__(kDim * kDim)
conv_implicit_gemm(const float* __restrict__ x, const float* __restrict__ w,
                   float* __restrict__ y, int nimg, int c, int k, int h, int wd) {
  __shared__ float as[BK][BM];      // as[r][pixel]
  __shared__ float bs[BK][BN + 1];  // bs[r][out channel]
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kDim + tx;
  const int hw = h * wd, mtot = nimg * hw, ktot = c * 9;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  // The pixel this thread gathers for the A tile is fixed across K steps.
  const int am = tid % BM, ar0 = tid / BM;  // rows ar0, ar0 + 4, ... of the A tile
  const int gm = m0 + am;
  const bool m_ok = gm < mtot;
  const int img = m_ok ? gm / hw : 0, pix = m_ok ? gm % hw : 0;
  const int py = pix / wd, px = pix % wd;
  const float* ximg = x + static_cast<int64_t>(img) * c * hw;
  float acc[TM][TN] = {};
  for (int r0 = 0; r0 < ktot; r0 += BK) {
#pragma unroll
    for (int p = 0; p < BK * BM / (kDim * kDim); ++p) {  // gather A: 4 reduction rows
      const int rr = ar0 + p * (kDim * kDim / BM), r = r0 + rr;
      float v = 0.f;
      if (m_ok && r < ktot) {
        const int ci = r / 9, tap = r % 9;
        const int iy = py + tap / 3 - 1, ix = px + tap % 3 - 1;
        if (iy >= 0 && iy < h && ix >= 0 && ix < wd) v = ximg[static_cast<int64_t>(ci) * hw + iy * wd + ix];
      }
      as[rr][am] = v;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / (kDim * kDim); ++p) {  // B: w[oc][r]
      const int e = tid + p * kDim * kDim, oc = e / BK, rr = e % BK;
      const int goc = n0 + oc, r = r0 + rr;
      bs[rr][oc] = (goc < k && r < ktot) ? w[static_cast<int64_t>(goc) * ktot + r] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int rr = 0; rr < BK; ++rr) {
      float av[TM], bv[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) av[i] = as[rr][tx + kDim * i];  // pixels: consecutive per lane
#pragma unroll
      for (int j = 0; j < TN; ++j) bv[j] = bs[rr][ty + kDim * j];
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
  // y[n][oc][oy][ox]: consecutive lanes write consecutive pixels of one channel.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int om = m0 + tx + kDim * i;
    if (om >= mtot) continue;
    const int oimg = om / hw, opix = om % hw;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int oc = n0 + ty + kDim * j;
      if (oc < k) y[(static_cast<int64_t>(oimg) * k + oc) * hw + opix] = acc[i][j];
    }
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1 || in[0].ndim != 4 || in[1].ndim != 4) return 1;
  const int64_t n = in[0].shape[0], c = in[0].shape[1], h = in[0].shape[2], wd = in[0].shape[3];
  const int64_t k = in[1].shape[0];
  if (in[1].shape[2] != 3 || in[1].shape[3] != 3) return 1;
  const int64_t mtot = n * h * wd;
  if (mtot >= (1LL << 31) || c * 9 >= (1LL << 31) || (k + BN - 1) / BN > 65535) return 1;
  const dim3 grid(static_cast<unsigned>((mtot + BM - 1) / BM), static_cast<unsigned>((k + BN - 1) / BN));
  conv_implicit_gemm<<<grid, dim3(kDim, kDim), 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), static_cast<int>(n), static_cast<int>(c),
      static_cast<int>(k), static_cast<int>(h), static_cast<int>(wd));
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
