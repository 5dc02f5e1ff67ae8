"""Candidate: the original row loop with its temporaries renamed; the work done is the same."""

import numpy as np


def run(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    result = np.empty_like(x)
    for index in range(x.shape[0]):
        values = x[index]
        mu = values.mean()
        sigma2 = ((values - mu) ** 2).mean()
        result[index] = (values - mu) / np.sqrt(sigma2 + eps)
    return result
