"""Candidate: the row loop, reorganised (a helper function per row); the work done is unchanged."""

import numpy as np


def _normalize(row: np.ndarray, eps: float) -> np.ndarray:
    mean = row.mean()
    var = ((row - mean) ** 2).mean()
    return (row - mean) / np.sqrt(var + eps)


def run(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = _normalize(x[i], eps)
    return out
