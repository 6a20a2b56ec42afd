// Skill par-grid-reduction-single-pass-last-block: the whole MSE in one
// launch and deterministic. Each block reduces its grid-stride share of
// (a - b)^2 (float4 loads when n % 4 == 0) and writes a partial; thread 0
// then issues __threadfence() (the partial is visible device-wide before the
// ticket) and takes a ticket with atomicAdd. The block that draws the last
// ticket adds all partials in a fixed order (L1-bypassing loads) and writes
// the mean. The ticket counter is zeroed on the stream before every launch.
#include <cuda_runtime.h>

constexpr int kThreads = 256, kWarps = kThreads / 32;

__device__ __forceinline__ float BlockSum(float v, float* slots) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) slots[warp] = v;
  __syncthreads();
  v = lane < kWarps ? slots[lane] : 0.f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // slots may be reused
  return v;
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads)
mse_last_block(const float* __restrict__ a, const float* __restrict__ b, int64_t n,
               float* partial, unsigned* ticket, float inv_n, float* __restrict__ out) {
  __shared__ float slots[kWarps];
  __shared__ bool last;
  float s = 0.f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t first = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (kVec) {
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    for (int64_t i = first; i < n / 4; i += stride) {
      const float4 u = a4[i], v = b4[i];
      const float d0 = u.x - v.x, d1 = u.y - v.y, d2 = u.z - v.z, d3 = u.w - v.w;
      s += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
    }
  } else {
    for (int64_t i = first; i < n; i += stride) {
      const float d = a[i] - b[i];
      s += d * d;
    }
  }
  s = BlockSum(s, slots);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s;
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;  // block-uniform
  float t = 0.f;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kThreads) t += __ldcg(partial + i);
  t = BlockSum(t, slots);
  if (threadIdx.x == 0) out[0] = t * inv_n;
}

extern "C" int launch(const Tensor* in, int n_in, Tensor* out, int n_out,
                      cudaStream_t stream) {
  if (n_in != 2 || n_out != 1) return 1;
  const int64_t n = in[0].numel;
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (sms <= 0) sms = 132;
  const bool vec = n % 4 == 0;  // 256-byte aligned bases
  const int64_t work = vec ? n / 4 : n;
  int64_t blocks = (work + kThreads - 1) / kThreads;
  if (blocks > 8LL * sms) blocks = 8LL * sms;
  if (blocks < 1) blocks = 1;
  // One allocation: [ticket (padded to 16 bytes)][partials]
  void* scratch = nullptr;
  if (cudaMallocAsync(&scratch, 16 + static_cast<size_t>(blocks) * sizeof(float), stream) !=
      cudaSuccess) {
    return 2;
  }
  unsigned* ticket = static_cast<unsigned*>(scratch);
  float* partial = reinterpret_cast<float*>(static_cast<char*>(scratch) + 16);
  cudaMemsetAsync(ticket, 0, sizeof(unsigned), stream);
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* o = static_cast<float*>(out[0].data);
  const float inv_n = static_cast<float>(1.0 / static_cast<double>(n));
  if (vec) {
    mse_last_block<true><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        a, b, n, partial, ticket, inv_n, o);
  } else {
    mse_last_block<false><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        a, b, n, partial, ticket, inv_n, o);
  }
  cudaFreeAsync(scratch, stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
