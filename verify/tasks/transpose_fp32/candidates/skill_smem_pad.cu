// Skill mem-smem-transpose-padding: the transpose goes through a 32x33 shared
// tile. A warp reads one 128-byte row segment of x (coalesced), the block
// synchronizes, and the warp then writes one 128-byte row segment of y
// (coalesced) by reading a *column* of the tile. The extra padding column
// makes the 33-float row stride shift every row by one bank, so the column
// read touches 32 different banks instead of one bank 32 times.
#include <cuda_runtime.h>

constexpr int kTile = 32;  // tile edge
constexpr int kRows = 8;   // thread rows: each thread moves kTile / kRows elements

__global__ void __launch_bounds__(kTile * kRows)
transpose_padded(const float* __restrict__ x, float* __restrict__ y, int64_t r, int64_t c) {
  __shared__ float tile[kTile][kTile + 1];  // +1: conflict-free column reads
  const int64_t col0 = blockIdx.x * static_cast<int64_t>(kTile);
  const int64_t row0 = blockIdx.y * static_cast<int64_t>(kTile);
  const int tx = threadIdx.x, ty = threadIdx.y;
  // Coalesced read of a 32x32 tile of x: lane tx walks along a row.
#pragma unroll
  for (int k = 0; k < kTile; k += kRows) {
    const int64_t i = row0 + ty + k, j = col0 + tx;
    if (i < r && j < c) tile[ty + k][tx] = x[i * c + j];
  }
  __syncthreads();
  // Coalesced write of the transposed tile: lane tx walks along a row of y,
  // which is a column of the tile.
#pragma unroll
  for (int k = 0; k < kTile; k += kRows) {
    const int64_t j = col0 + ty + k;  // row of y = column of x
    const int64_t i = row0 + tx;      // column of y = row of x
    if (i < r && j < c) y[j * r + i] = tile[tx][ty + k];
  }
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 2) return 1;
  const int64_t r = in[0].shape[0], c = in[0].shape[1];
  const dim3 grid(static_cast<unsigned>((c + kTile - 1) / kTile),
                  static_cast<unsigned>((r + kTile - 1) / kTile));
  if (grid.y > 65535u) return 1;
  transpose_padded<<<grid, dim3(kTile, kRows), 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), r, c);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
