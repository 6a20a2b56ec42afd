// Skill mem-smem-xor-swizzle: a dense (unpadded) 32x32 shared tile with
// 128-byte rows, written row-wise and read column-wise in 16-byte chunks.
// Padding would break the 16-byte alignment of the chunks; instead the chunk
// index is XOR-swizzled with the row group: physical chunk = chunk ^ ((row >>
// 2) & 7). Writes (8 lanes = 8 chunks of one row) and reads (8 lanes = one
// chunk of rows 4a+i, a = 0..7) both hit 8 distinct 16-byte bank groups.
//
// Each of the 64 threads loads four float4 of x (coalesced 128-byte row
// segments), then reads a 4x4 block of the tile as four float4, transposes it
// in registers and stores four float4 of y (coalesced 128-byte segments).
// When a dimension is not a multiple of 4 the same kernel moves scalars.
#include <cuda_runtime.h>

constexpr int kTile = 32;              // tile edge (floats)
constexpr int kChunks = kTile / 4;     // 16-byte chunks per tile row: 8
constexpr int kThreads = 64;           // 8 x 8 blocks of 4x4 elements
constexpr int kLoadRows = kThreads / kChunks;  // rows loaded per pass: 8

__device__ __forceinline__ int Swizzle(int row, int chunk) { return chunk ^ ((row >> 2) & 7); }

template <bool kVec>
__global__ void __launch_bounds__(kThreads)
transpose_swizzled(const float* __restrict__ x, float* __restrict__ y, int64_t r, int64_t c) {
  __shared__ float4 tile[kTile * kChunks];  // 32 rows x 8 chunks, no padding
  const int t = threadIdx.x;
  const int64_t row0 = blockIdx.y * static_cast<int64_t>(kTile);
  const int64_t col0 = blockIdx.x * static_cast<int64_t>(kTile);
  const int ch = t % kChunks;
#pragma unroll
  for (int p = 0; p < kTile / kLoadRows; ++p) {
    const int row = t / kChunks + p * kLoadRows;
    const int64_t gi = row0 + row, gj = col0 + 4 * ch;
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (gi < r) {
      const float* src = x + gi * c + gj;
      if (kVec) {
        if (gj < c) v = *reinterpret_cast<const float4*>(src);  // c % 4 == 0: whole chunk in range
      } else {
        if (gj < c) v.x = src[0];
        if (gj + 1 < c) v.y = src[1];
        if (gj + 2 < c) v.z = src[2];
        if (gj + 3 < c) v.w = src[3];
      }
    }
    tile[row * kChunks + Swizzle(row, ch)] = v;
  }
  __syncthreads();
  const int a = t % kChunks;  // 4-row group of x = 16-byte chunk of the y row
  const int b = t / kChunks;  // 16-byte chunk of x = 4-row group of y
  float4 v[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = 4 * a + i;
    v[i] = tile[row * kChunks + Swizzle(row, b)];
  }
  const float4 o[4] = {make_float4(v[0].x, v[1].x, v[2].x, v[3].x),
                       make_float4(v[0].y, v[1].y, v[2].y, v[3].y),
                       make_float4(v[0].z, v[1].z, v[2].z, v[3].z),
                       make_float4(v[0].w, v[1].w, v[2].w, v[3].w)};
  const int64_t oi = row0 + 4 * a;  // first column of y written by this thread
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int64_t oj = col0 + 4 * b + k;  // row of y
    if (oj >= c) continue;
    float* dst = y + oj * r + oi;
    if (kVec) {
      if (oi < r) *reinterpret_cast<float4*>(dst) = o[k];  // r % 4 == 0
    } else {
      if (oi < r) dst[0] = o[k].x;
      if (oi + 1 < r) dst[1] = o[k].y;
      if (oi + 2 < r) dst[2] = o[k].z;
      if (oi + 3 < r) dst[3] = o[k].w;
    }
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 2) return 1;
  const int64_t r = in[0].shape[0], c = in[0].shape[1];
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const dim3 grid(static_cast<unsigned>((c + kTile - 1) / kTile),
                  static_cast<unsigned>((r + kTile - 1) / kTile));
  if (grid.y > 65535u) return 1;
  // Tensors are 256-byte aligned, so with both dims multiples of 4 every
  // 16-byte chunk of x and y is aligned.
  if (r % 4 == 0 && c % 4 == 0) {
    transpose_swizzled<true><<<grid, kThreads, 0, stream>>>(x, y, r, c);
  } else {
    transpose_swizzled<false><<<grid, kThreads, 0, stream>>>(x, y, r, c);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
