"""Honesty, measured: simulated experiments (drift, heavy tails, per-call noise) through the real
comparison, with fixed seeds and enough simulations that the figures are stable (binomial SE shown).

Default comparison: median of pair log ratios, BCa 95 %, 1 000 resamples per simulation, 5 samples per
call (within-call median), 2 % call outliers and 5 % sample outliers (x(1 + 0.5*Exp)), interleaved AB/BA.
``benchmarks/stats_honesty.py`` prints the wider table (other pair counts, percentile, mean).
"""

from __future__ import annotations

import math

from gpuopt import stats
from gpuopt.models.stats import CompareOptions, SimulationReport

DEFAULT = CompareOptions(resamples=1000)


def _se(r: SimulationReport) -> float:
    return math.sqrt(r.decisive_rate * (1 - r.decisive_rate) / r.simulations)


def test_aa_false_positive_rate_is_between_3_and_6_pct() -> None:
    r = stats.simulate(simulations=8000, pairs=100, seed=2026, statistics=DEFAULT)
    figure = f"A/A false improved/regressed: {100 * r.decisive_rate:.2f} % ± {100 * _se(r):.2f} (100 pairs)"
    print(figure)
    assert 0.03 <= r.decisive_rate <= 0.06, figure
    assert r.improved > 0 and r.regressed > 0  # both tails, not one
    assert abs(r.improved - r.regressed) < 4 * math.sqrt(r.improved + r.regressed)
    assert r.equivalent == 0  # m = 0: nothing is equivalent


def test_power_at_twice_the_mde_is_at_least_80_pct() -> None:
    aa = stats.simulate(simulations=2000, pairs=30, seed=7, statistics=DEFAULT)
    # Both MDE bases: the SD one (the specification's) and the robust-SD one (calibrated for a median).
    for basis, mde in (("sd", aa.mde_pct), ("robust_sd", aa.robust_mde_pct)):
        ab = stats.simulate(simulations=2000, pairs=30, seed=8, true_effect_pct=2 * mde, statistics=DEFAULT)
        print(f"power at 2 x MDE ({basis}, {2 * mde:.3f} %): {100 * ab.improved_rate:.2f} %")
        assert ab.improved_rate >= 0.8, (basis, mde, ab.improved_rate)
        assert ab.regressed == 0
    at_one = stats.simulate(
        simulations=2000, pairs=30, seed=9, true_effect_pct=aa.robust_mde_pct, statistics=DEFAULT
    )
    print(f"power at 1 x MDE (robust_sd, {aa.robust_mde_pct:.3f} %): {100 * at_one.improved_rate:.2f} %")
    assert 0.7 <= at_one.improved_rate <= 0.9  # the normal approximation is calibrated for the median


def test_interleaving_cancels_a_drift_that_a_fixed_order_turns_into_a_false_win() -> None:
    drift = {"pairs": 30, "drift_pct_per_call": -0.5, "statistics": DEFAULT}
    fixed = stats.simulate(simulations=2000, seed=11, design="fixed_ab", **drift)  # type: ignore[arg-type]
    mixed = stats.simulate(simulations=4000, seed=11, design="interleaved", **drift)  # type: ignore[arg-type]
    print(
        f"A/A with -0.5 %/call drift: fixed AB false wins {100 * fixed.improved_rate:.2f} %, "
        f"mean estimate {fixed.mean_estimate_pct:+.3f} %; interleaved false improved/regressed "
        f"{100 * mixed.decisive_rate:.2f} % ± {100 * _se(mixed):.2f}, "
        f"mean estimate {mixed.mean_estimate_pct:+.3f} %"
    )
    assert fixed.improved_rate >= 0.15 and fixed.improved > 20 * fixed.regressed
    assert fixed.mean_estimate_pct is not None and fixed.mean_estimate_pct > 0.4
    assert 0.03 <= mixed.decisive_rate <= 0.06
    assert mixed.mean_estimate_pct is not None and abs(mixed.mean_estimate_pct) < 0.05
    assert mixed.coverage > 0.94 > fixed.coverage
