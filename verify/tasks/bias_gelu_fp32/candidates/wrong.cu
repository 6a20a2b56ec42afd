// Wrong bias+GELU: the tanh approximation of GELU, which differs from the
// exact (erf) GELU the task asks for by up to ~3e-4.
#include <cuda_runtime.h>
#include <math.h>

__global__ void bias_gelu_tanh(const float* x, const float* b, float* y,
                               int64_t n, int64_t d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float v = x[i] + b[i % d];
    y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

extern "C" int launch(const Tensor* in, int, Tensor* out, int,
                      cudaStream_t stream) {
  const int64_t n = in[0].numel, d = in[1].numel;
  bias_gelu_tanh<<<(n + 255) / 256, 256, 0, stream>>>(
      static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
      static_cast<float*>(out[0].data), n, d);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
