// Reference (baseline) for attention_fp32, as the math backend runs it:
// scores = Q K^T * scale into an S x S buffer (16x16 tiled kernel), a
// row softmax (block per row), then O = P V (16x16 tiled kernel).
#include <cuda_runtime.h>
#include <math.h>

constexpr int kTile = 16;

__global__ void scores_qkt(const float* q, const float* k, float* p, int64_t s,
                           int64_t d, float scale) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  q += blockIdx.z * s * d;
  k += blockIdx.z * s * d;
  p += blockIdx.z * s * s;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = blockIdx.y * static_cast<int64_t>(kTile) + ty;
  const int64_t col = blockIdx.x * static_cast<int64_t>(kTile) + tx;
  const int64_t krow = blockIdx.x * static_cast<int64_t>(kTile) + ty;
  float acc = 0.f;
  for (int64_t t = 0; t < d; t += kTile) {
    as[ty][tx] = (row < s && t + tx < d) ? q[row * d + t + tx] : 0.f;
    bs[tx][ty] = (krow < s && t + tx < d) ? k[krow * d + t + tx] : 0.f;
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kTile; ++c) acc += as[ty][c] * bs[c][tx];
    __syncthreads();
  }
  if (row < s && col < s) p[row * s + col] = acc * scale;
}

__global__ void softmax_rows(float* p, int64_t s) {
  __shared__ float red[256];
  float* row = p + blockIdx.x * s;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x) m = fmaxf(m, row[j]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.f;
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x) sum += expf(row[j] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  sum = red[0];
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x) row[j] = expf(row[j] - m) / sum;
}

__global__ void pv(const float* p, const float* v, float* o, int64_t s, int64_t d) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  p += blockIdx.z * s * s;
  v += blockIdx.z * s * d;
  o += blockIdx.z * s * d;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = blockIdx.y * static_cast<int64_t>(kTile) + ty;
  const int64_t col = blockIdx.x * static_cast<int64_t>(kTile) + tx;
  float acc = 0.f;
  for (int64_t t = 0; t < s; t += kTile) {
    as[ty][tx] = (row < s && t + tx < s) ? p[row * s + t + tx] : 0.f;
    bs[ty][tx] = (t + ty < s && col < d) ? v[(t + ty) * d + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kTile; ++c) acc += as[ty][c] * bs[c][tx];
    __syncthreads();
  }
  if (row < s && col < d) o[row * d + col] = acc;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 3 || n_out != 1 || in[0].ndim != 4) return 1;
  const int64_t bh = in[0].shape[0] * in[0].shape[1], s = in[0].shape[2], d = in[0].shape[3];
  float* p = nullptr;
  if (cudaMallocAsync(&p, bh * s * s * sizeof(float), stream) != cudaSuccess) return 2;
  const float scale = 1.f / sqrtf(static_cast<float>(d));
  const dim3 block(kTile, kTile);
  const dim3 g1(static_cast<unsigned>((s + kTile - 1) / kTile),
                static_cast<unsigned>((s + kTile - 1) / kTile), static_cast<unsigned>(bh));
  scores_qkt<<<g1, block, 0, stream>>>(static_cast<const float*>(in[0].data),
                                       static_cast<const float*>(in[1].data), p, s, d, scale);
  softmax_rows<<<bh * s, 256, 0, stream>>>(p, s);
  const dim3 g3(static_cast<unsigned>((d + kTile - 1) / kTile),
                static_cast<unsigned>((s + kTile - 1) / kTile), static_cast<unsigned>(bh));
  pv<<<g3, block, 0, stream>>>(p, static_cast<const float*>(in[2].data),
                               static_cast<float*>(out[0].data), s, d);
  cudaFreeAsync(p, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
