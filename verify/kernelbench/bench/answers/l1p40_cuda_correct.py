import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# LayerNorm over the last three dimensions (64 x 256 x 256 = 4M elements per
# row, 16 rows). PyTorch gives each row to one block; here every row is cut
# into 256 chunks: partial sums (in double), then the statistics, then one
# elementwise pass.
source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int kThreads = 256;
constexpr int kChunks = 256;

__global__ void partial_sums(const float* __restrict__ x, double* __restrict__ psum,
                             double* __restrict__ psq, long cols) {
  const int row = blockIdx.y, chunk = blockIdx.x;
  const long per = (cols + kChunks - 1) / kChunks;
  const long begin = chunk * per;
  const long end = begin + per < cols ? begin + per : cols;
  const float* r = x + row * cols;
  double s = 0, q = 0;
  for (long i = begin + threadIdx.x; i < end; i += kThreads) {
    const double v = r[i];
    s += v;
    q += v * v;
  }
  __shared__ double ss[kThreads], sq[kThreads];
  ss[threadIdx.x] = s;
  sq[threadIdx.x] = q;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) {
      ss[threadIdx.x] += ss[threadIdx.x + w];
      sq[threadIdx.x] += sq[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    psum[row * kChunks + chunk] = ss[0];
    psq[row * kChunks + chunk] = sq[0];
  }
}

__global__ void row_stats(const double* __restrict__ psum, const double* __restrict__ psq,
                          float* __restrict__ mean, float* __restrict__ rstd, long cols,
                          double eps) {
  const int row = blockIdx.x;
  __shared__ double ss[kChunks], sq[kChunks];
  ss[threadIdx.x] = psum[row * kChunks + threadIdx.x];
  sq[threadIdx.x] = psq[row * kChunks + threadIdx.x];
  __syncthreads();
  for (int w = kChunks / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) {
      ss[threadIdx.x] += ss[threadIdx.x + w];
      sq[threadIdx.x] += sq[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double mu = ss[0] / cols;
    const double var = sq[0] / cols - mu * mu;
    mean[row] = (float)mu;
    rstd[row] = (float)(1.0 / sqrt(var + eps));
  }
}

__global__ void normalize(const float* __restrict__ x, const float* __restrict__ w,
                          const float* __restrict__ b, const float* __restrict__ mean,
                          const float* __restrict__ rstd, float* __restrict__ y, long rows,
                          long cols) {
  const long total = rows * cols;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total;
       i += (long)gridDim.x * blockDim.x) {
    const long r = i / cols, c = i - r * cols;
    y[i] = (x[i] - mean[r]) * rstd[r] * w[c] + b[c];
  }
}

torch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  auto xc = x.contiguous();
  const long cols = w.numel();
  const long rows = xc.numel() / cols;
  auto y = torch::empty_like(xc);
  auto opts = xc.options();
  auto psum = torch::empty({rows * kChunks}, opts.dtype(torch::kFloat64));
  auto psq = torch::empty({rows * kChunks}, opts.dtype(torch::kFloat64));
  auto mean = torch::empty({rows}, opts);
  auto rstd = torch::empty({rows}, opts);
  auto stream = at::cuda::getCurrentCUDAStream();
  partial_sums<<<dim3(kChunks, rows), kThreads, 0, stream>>>(
      xc.data_ptr<float>(), psum.data_ptr<double>(), psq.data_ptr<double>(), cols);
  row_stats<<<rows, kChunks, 0, stream>>>(psum.data_ptr<double>(), psq.data_ptr<double>(),
                                          mean.data_ptr<float>(), rstd.data_ptr<float>(), cols,
                                          eps);
  const long want = (rows * cols + 255) / 256;
  normalize<<<(unsigned)(want < 1048576 ? want : 1048576), 256, 0, stream>>>(
      xc.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), mean.data_ptr<float>(),
      rstd.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
  return y;
}
"""
cpp_source = "torch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"
ln = load_inline(name="ln_chunked", cpp_sources=cpp_source, cuda_sources=source,
                 functions=["layer_norm"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        return ln.layer_norm(x, self.weight.contiguous(), self.bias.contiguous(), self.eps)
