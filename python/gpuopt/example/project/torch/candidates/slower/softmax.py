"""Candidate (SLOWER ON PURPOSE, for the regression gate's recipes): the original per-row softmax, run
twice; the first result is thrown away, so the output is the original's exactly and the time per call
roughly doubles. `gpuopt gate check` must fail on it with the regression exit code (10)."""

import torch


def _softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        row = x[i]
        e = torch.exp(row - row.max())
        out[i] = e / e.sum()
    return out


def run(x: torch.Tensor) -> torch.Tensor:
    _softmax(x)  # redundant work: the regression the gate must catch
    return _softmax(x)
