import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """No kernel of its own: PyTorch does the work."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return (A.unsqueeze(1) * B).contiguous()
