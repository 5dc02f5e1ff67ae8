"""BCa and percentile intervals agree with ``scipy.stats.bootstrap`` on the same data, within
Monte-Carlo error: each side runs with several seeds, and the mean endpoints must agree within four
standard errors of their difference. The BCa acceleration is deterministic and is checked against a
numpy jackknife directly."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from gpuopt import stats

SEEDS_OURS = 12
SEEDS_SCIPY = 6
B = 10_000


@pytest.fixture(scope="module")
def scipy_stats() -> Any:
    """``scipy.stats``, imported when a test here runs (its import takes about a second, and every
    test worker collects this module)."""
    return pytest.importorskip("scipy.stats")


def _paired_data(n: int = 150) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2024)
    base = 10 * np.exp(rng.normal(0, 0.05, n))
    # A skewed effect distribution, so BCa's corrections matter.
    cand = base / np.exp(0.01 + rng.gamma(2.0, 0.01, n))
    return base, cand


def _agree(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Endpoints (rows: seeds, columns: low/high) agree within 4 SE of the difference of means."""
    se = np.sqrt(ours.var(axis=0, ddof=1) / len(ours) + theirs.var(axis=0, ddof=1) / len(theirs))
    diff = np.abs(ours.mean(axis=0) - theirs.mean(axis=0))
    assert np.all(diff <= 4 * se + 1e-12), (ours.mean(axis=0), theirs.mean(axis=0), se)


@pytest.mark.parametrize("estimator", ["median", "mean"])
@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_paired_interval_matches_scipy(scipy_stats: Any, estimator: str, method: str) -> None:
    base, cand = _paired_data()
    fn: Callable[..., np.ndarray] = np.median if estimator == "median" else np.mean

    def statistic(b: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
        return fn(np.log(b / c), axis=axis)  # type: ignore[no-any-return]

    ours = np.array(
        [
            [r.ci_low_log, r.ci_high_log]
            for r in (
                stats.compare(base, cand, estimator=estimator, ci_method=method, resamples=B, seed=s).result
                for s in range(SEEDS_OURS)
            )
        ]
    )
    theirs = np.array(
        [
            list(
                scipy_stats.bootstrap(
                    (base, cand),
                    statistic,
                    paired=True,
                    vectorized=True,
                    n_resamples=B,
                    method="BCa" if method == "bca" else "percentile",
                    random_state=np.random.default_rng(s),
                ).confidence_interval
            )
            for s in range(SEEDS_SCIPY)
        ]
    )
    _agree(ours, theirs)


@pytest.mark.parametrize("estimator", ["median", "mean"])
def test_bca_acceleration_is_the_jackknife_skewness(estimator: str) -> None:
    base, cand = _paired_data(61)
    logs = np.log(base / cand)
    fn: Callable[..., float] = np.median if estimator == "median" else np.mean
    jack = np.array([fn(np.delete(logs, i)) for i in range(len(logs))])
    d = jack.mean() - jack
    want = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    r = stats.compare(base, cand, estimator=estimator, resamples=2000).result
    assert r.bca is not None and r.bca.acceleration is not None
    assert r.bca.acceleration == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert r.ci_method_run == "bca"


def test_unpaired_interval_matches_scipy(scipy_stats: Any) -> None:
    rng = np.random.default_rng(31)
    base = 5 * np.exp(rng.normal(0, 0.08, 80))
    cand = 4.6 * np.exp(rng.gamma(2.0, 0.04, 70))

    def statistic(b: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
        # lower is better: effect = median(ln ref) - median(ln cand)
        return np.median(np.log(b), axis=axis) - np.median(np.log(c), axis=axis)  # type: ignore[no-any-return]

    ours = np.array(
        [
            [r.ci_low_log, r.ci_high_log]
            for r in (
                stats.compare_unpaired(base, cand, resamples=B, seed=s).result for s in range(SEEDS_OURS)
            )
        ]
    )
    theirs = np.array(
        [
            list(
                scipy_stats.bootstrap(
                    (base, cand),
                    statistic,
                    vectorized=True,
                    n_resamples=B,
                    method="BCa",
                    random_state=np.random.default_rng(s),
                ).confidence_interval
            )
            for s in range(SEEDS_SCIPY)
        ]
    )
    _agree(ours, theirs)
    r = stats.compare_unpaired(base, cand, resamples=B).result
    assert r.estimate_log == pytest.approx(
        float(np.median(np.log(base)) - np.median(np.log(cand))), abs=1e-15
    )
    assert (r.n_baseline, r.n_candidate, r.n) == (80, 70, 70)
    assert not math.isnan(r.ci_low_log or math.nan)
