"""Candidate: the original row loop with its temporaries renamed; the work done is the same."""

import torch


def run(x: torch.Tensor) -> torch.Tensor:
    result = torch.empty_like(x)
    for index in range(x.shape[0]):
        values = x[index]
        exps = torch.exp(values - values.max())
        result[index] = exps / exps.sum()
    return result
