// Skill par-split-k-reduction: the output (B*M sums) has too few elements to
// fill the GPU when each thread walks the whole reduced dimension, so the
// reduced dimension N is split into S slices. Pass 1: block (column chunk,
// batch, slice) sums its slice for 256 adjacent columns (coalesced) and
// writes the partial to a workspace ws[s][b][m]. Pass 2 adds the S partials
// of each output in a fixed order (deterministic) and writes y.
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
sum_slices(const float* __restrict__ x, float* __restrict__ ws, int64_t b_count, int64_t n,
           int64_t m, int64_t slice) {
  const int64_t col = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  const int64_t b = blockIdx.y, s = blockIdx.z;
  if (col >= m) return;
  const int64_t k0 = s * slice;
  const int64_t k1 = k0 + slice < n ? k0 + slice : n;
  const float* p = x + b * n * m + col;
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
  int64_t k = k0;
  for (; k + 3 < k1; k += 4) {  // four independent loads in flight
    a0 += p[k * m];
    a1 += p[(k + 1) * m];
    a2 += p[(k + 2) * m];
    a3 += p[(k + 3) * m];
  }
  for (; k < k1; ++k) a0 += p[k * m];
  ws[(s * b_count + b) * m + col] = (a0 + a1) + (a2 + a3);
}

__global__ void __launch_bounds__(kThreads)
combine_slices(const float* __restrict__ ws, float* __restrict__ y, int64_t total, int slices) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (i >= total) return;
  float t = 0.f;
  for (int s = 0; s < slices; ++s) t += ws[s * total + i];
  y[i] = t;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 1 || n_out != 1 || in[0].ndim != 3) return 1;
  const int64_t b = in[0].shape[0], n = in[0].shape[1], m = in[0].shape[2];
  if (b > 65535) return 1;
  // Slices of at least 64 rows, at most 32 slices.
  int64_t slices = (n + 63) / 64;
  if (slices > 32) slices = 32;
  if (slices < 1) slices = 1;
  const int64_t slice = (n + slices - 1) / slices;
  slices = (n + slice - 1) / slice;
  float* ws = nullptr;
  if (cudaMallocAsync(&ws, static_cast<size_t>(slices * b * m) * sizeof(float), stream) !=
      cudaSuccess) {
    return 2;
  }
  const dim3 grid(static_cast<unsigned>((m + kThreads - 1) / kThreads), static_cast<unsigned>(b),
                  static_cast<unsigned>(slices));
  sum_slices<<<grid, kThreads, 0, stream>>>(static_cast<const float*>(in[0].data), ws, b, n, m,
                                            slice);
  combine_slices<<<static_cast<unsigned>((b * m + kThreads - 1) / kThreads), kThreads, 0,
                   stream>>>(ws, static_cast<float*>(out[0].data), b * m,
                             static_cast<int>(slices));
  cudaFreeAsync(ws, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
