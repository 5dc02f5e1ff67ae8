"""Candidate: the same normalization, vectorized over all rows at once."""

import numpy as np


def run(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=1, keepdims=True)
    return centered / np.sqrt(var + eps)
