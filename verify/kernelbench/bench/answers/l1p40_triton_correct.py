import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNKS = 256


@triton.jit
def partial_sums(x_ptr, psum_ptr, psq_ptr, cols, per, CHUNKS: tl.constexpr, BLOCK: tl.constexpr):
    chunk = tl.program_id(0)
    row = tl.program_id(1)
    begin = chunk * per
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    q = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in range(0, per, BLOCK):
        idx = begin + off + tl.arange(0, BLOCK)
        mask = (idx < begin + per) & (idx < cols)
        v = tl.load(x_ptr + row * cols + idx, mask=mask, other=0.0)
        s += v
        q += v * v
    tl.store(psum_ptr + row * CHUNKS + chunk, tl.sum(s, axis=0))
    tl.store(psq_ptr + row * CHUNKS + chunk, tl.sum(q, axis=0))


@triton.jit
def row_stats(psum_ptr, psq_ptr, mean_ptr, rstd_ptr, cols, eps, CHUNKS: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, CHUNKS)
    s = tl.sum(tl.load(psum_ptr + row * CHUNKS + i), axis=0)
    q = tl.sum(tl.load(psq_ptr + row * CHUNKS + i), axis=0)
    mu = s / cols
    var = q / cols - mu * mu
    tl.store(mean_ptr + row, mu)
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(var + eps))


@triton.jit
def normalize(x_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(1)
    c = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = c < cols
    mu = tl.load(mean_ptr + row)
    rs = tl.load(rstd_ptr + row)
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    tl.store(y_ptr + row * cols + c, (x - mu) * rs * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        x = x.contiguous()
        cols = self.weight.numel()
        rows = x.numel() // cols
        psum = torch.empty(rows * CHUNKS, device=x.device, dtype=torch.float32)
        psq = torch.empty_like(psum)
        mean = torch.empty(rows, device=x.device, dtype=torch.float32)
        rstd = torch.empty_like(mean)
        y = torch.empty_like(x)
        per = triton.cdiv(cols, CHUNKS)
        partial_sums[(CHUNKS, rows)](x, psum, psq, cols, per, CHUNKS=CHUNKS, BLOCK=1024)
        row_stats[(rows,)](psum, psq, mean, rstd, cols, self.eps, CHUNKS=CHUNKS)
        normalize[(triton.cdiv(cols, 1024), rows)](x, self.weight, self.bias, mean, rstd, y, cols,
                                                  BLOCK=1024)
        return y
