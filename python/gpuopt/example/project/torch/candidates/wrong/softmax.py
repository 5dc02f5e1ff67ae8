"""Candidate: one fused kernel, but over the wrong dimension (columns instead of rows)."""

import torch


def run(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=0)
