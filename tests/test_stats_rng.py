"""``gpuopt.rng/v1`` and determinism: the engine agrees bit for bit with an independent Python
implementation of the documented generator, schedule and resampling, and gives identical results on
1, 2 and 16 threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import stats_oracle as oracle
from gpuopt import _native, stats


@pytest.mark.parametrize(
    ("tag", "parts"),
    [
        ("bootstrap", [0, "", "value", 0]),
        ("bootstrap", [2**53 - 1, "a" * 64, 'lat"ency\\ms\n\u00e9\u0001', 9999]),
        ("schedule", [7]),
        ("input", [42, 3, "case-a"]),
        ("simulate", []),
    ],
)
def test_streams_match_an_independent_implementation(tag: str, parts: list[int | str]) -> None:
    doc = json.loads(_native.stats_rng_draws(tag, json.dumps(parts).encode(), 20))
    assert doc["rng"] == "gpuopt.rng/v1"
    assert doc["key"] == oracle.stream_key(tag, parts)
    stream = oracle.Stream(doc["key"])
    assert doc["draws"] == [stream.next() for _ in range(20)]


def test_schedules_match_an_independent_implementation() -> None:
    for pairs, seed in [(7, 42), (8, 0), (1, 5), (31, 2**40), (0, 1)]:
        assert stats.schedule(pairs, seed).orders == oracle.schedule(pairs, seed)


@pytest.mark.parametrize("estimator", ["median", "mean"])
def test_percentile_interval_is_reproduced_from_the_documented_resampling(estimator: str) -> None:
    """Parity mode's CI on a fixed replicate set: replicate b redraws n pairs from its own stream."""
    rng = np.random.default_rng(10)
    base = 10 * np.exp(rng.normal(0, 0.03, 25))
    cand = base * np.exp(rng.normal(-0.01, 0.02, 25))
    out = stats.compare(
        base, cand, estimator=estimator, ci_method="percentile", resamples=300, seed=77, metric="step_ms"
    )
    effects = out.pairs["effect_log"].to_list()
    reps = oracle.replicates(effects, estimator, seed=77, scope="", metric="step_ms", count=300)
    low, high = oracle.percentile_interval(reps, 0.95)
    assert (out.result.ci_low_log, out.result.ci_high_log) == (low, high)
    if estimator == "median":
        parity = stats.compare(
            base, cand, effect_scale="arithmetic_pct", ci_method="percentile", resamples=300, seed=77
        )
        pct = parity.pairs["effect_pct"].to_list()
        reps = oracle.replicates(pct, "median", seed=77, scope="", metric="value", count=300)
        assert (parity.result.ci_low_pct, parity.result.ci_high_pct) == oracle.percentile_interval(reps, 0.95)


def test_type7_quantile() -> None:
    assert oracle.type7([1.0, 2.0, 3.0, 4.0], 0.25) == 1.75
    # The engine's percentile interval at 50 % on replicates 1..4 is (Q(0.25), Q(0.75)).
    out = stats.compare([4.0, 4.0], [4.0, 4.0], resamples=4, confidence=0.5, ci_method="percentile")
    assert (out.result.ci_low_log, out.result.ci_high_log) == (0.0, 0.0)


_SCRIPT = """
import json, sys
import numpy as np
from gpuopt import stats
rng = np.random.default_rng(3)
base = 10 * np.exp(rng.normal(0, 0.05, 400))
cand = base * np.exp(rng.normal(-0.01, 0.03, 400))
out = []
for est in ("median", "mean"):
    for ci in ("bca", "percentile"):
        r = stats.compare(base, cand, estimator=est, ci_method=ci, resamples=3000, seed=5).result
        out.append([r.ci_low_log.hex(), r.ci_high_log.hex(), r.estimate_log.hex()])
cases = ["a", "b", "c", "d"] * 100
weights = {"a": 1, "b": 2, "c": 3, "d": 4}
r = stats.compare(base, cand, cases=cases, case_weights=weights, resamples=2000).result
out.append([r.ci_low_log.hex(), r.ci_high_log.hex()] + [c.ci_low_log.hex() for c in r.per_case])
u = stats.compare_unpaired(base, cand, resamples=2000).result
out.append([u.ci_low_log.hex(), u.ci_high_log.hex()])
s = stats.simulate(simulations=64, pairs=12, seed=9)
out.append([s.improved, s.regressed, s.coverage.hex(), s.pooled_sd_log.hex()])
print(json.dumps(out))
"""


def _run_with_threads(threads: int) -> str:
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def test_results_are_bit_identical_on_1_2_and_16_threads() -> None:
    one = _run_with_threads(1)
    assert len(json.loads(one)) == 7
    assert _run_with_threads(2) == one
    assert _run_with_threads(16) == one
