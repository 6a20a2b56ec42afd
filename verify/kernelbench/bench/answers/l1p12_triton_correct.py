import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def diag_scale_kernel(a_ptr, b_ptr, out_ptr, N, M, BLOCK_M: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = cols < M
    a = tl.load(a_ptr + row)
    b = tl.load(b_ptr + row * M + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * M + cols, a * b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A = A.contiguous()
        B = B.contiguous()
        out = torch.empty_like(B)
        N, M = B.shape
        grid = (N, triton.cdiv(M, 1024))
        diag_scale_kernel[grid](A, B, out, N, M, BLOCK_M=1024)
        return out
