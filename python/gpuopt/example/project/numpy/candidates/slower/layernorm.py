"""Candidate (SLOWER ON PURPOSE, for the regression gate's recipes): the original row loop, run twice.

The first pass's result is thrown away, so the output is the original's exactly and correctness passes;
the time per call roughly doubles. `gpuopt gate check` must fail on it with the regression exit code (10).
"""

import numpy as np


def _normalize(x: np.ndarray, eps: float) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        row = x[i]
        mean = row.mean()
        var = ((row - mean) ** 2).mean()
        out[i] = (row - mean) / np.sqrt(var + eps)
    return out


def run(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    _normalize(x, eps)  # redundant work: the regression the gate must catch
    return _normalize(x, eps)
