import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The GEMM stays PyTorch's (cuBLAS); only the bias + ReLU epilogue is fused
# into one kernel. Most of the device time is cuBLAS's.
source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void bias_relu_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                 long rows, long cols) {
  const long total = rows * cols;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total;
       i += (long)gridDim.x * blockDim.x) {
    const float v = y[i] + bias[i % cols];
    y[i] = v > 0.f ? v : 0.f;
  }
}

torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias) {
  const long cols = bias.numel(), rows = y.numel() / cols;
  const long want = (rows * cols + 255) / 256;
  bias_relu_kernel<<<(unsigned)(want < 1048576 ? want : 1048576), 256, 0,
                     at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(),
                                                         bias.data_ptr<float>(), rows, cols);
  return y;
}
"""
cpp_source = "torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias);"
epi = load_inline(name="bias_relu_epilogue", cpp_sources=cpp_source, cuda_sources=source,
                  functions=["bias_relu_"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = torch.matmul(x, self.gemm.weight.t()).contiguous()
        return epi.bias_relu_(y, self.bias.contiguous())
