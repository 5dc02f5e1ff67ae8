"""The statistics engine through its Python API: effect scale, verdict rules, errors, strata, tails.

Numbers are checked against independent computations (numpy) or the documented formulas, never against
values copied from the engine's own output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuopt import stats
from gpuopt.errors import InputError


def test_10_to_8_ms_is_a_25_pct_effect_and_a_minus_20_pct_change() -> None:
    out = stats.compare([10.0] * 12, [8.0] * 12, min_effect=5.0, resamples=1000)
    r = out.result
    assert r.estimate_log == pytest.approx(math.log(10 / 8), abs=1e-15)
    assert r.estimate_pct == pytest.approx(25.0, abs=1e-12)
    assert r.change_pct == pytest.approx(-20.0, abs=1e-12)
    assert r.threshold_log == pytest.approx(0.048790164169432, abs=1e-12)
    # Identical pairs: a point CI [x, x] without error, and the improvement clears 5 %.
    assert (r.ci_low_log, r.ci_high_log) == (r.estimate_log, r.estimate_log)
    assert r.verdict == "improved"
    assert r.rng == "gpuopt.rng/v1"
    assert out.pairs["effect_pct"].to_list() == pytest.approx([25.0] * 12)


def test_higher_is_better_mirrors_the_sign() -> None:
    r = stats.compare([100.0] * 12, [150.0] * 12, direction="higher", resamples=1000).result
    assert r.estimate_pct == pytest.approx(50.0)
    assert r.change_pct == pytest.approx(50.0)
    slower = stats.compare([100.0] * 12, [50.0] * 12, direction="higher", resamples=1000).result
    assert slower.estimate_log == pytest.approx(-math.log(2.0))
    assert slower.verdict == "regressed"


def _noisy(n: int, effect: float, sd: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = 10.0 * np.exp(rng.normal(0, 0.05, n))
    cand = base / np.exp(effect + rng.normal(0, sd, n))
    return base, cand


def test_estimate_is_the_median_of_the_pair_log_ratios() -> None:
    base, cand = _noisy(101, 0.03, 0.02, 1)
    r = stats.compare(base, cand, resamples=2000).result
    assert r.estimate_log == pytest.approx(float(np.median(np.log(base / cand))), abs=1e-15)
    r = stats.compare(base, cand, resamples=2000, estimator="mean").result
    assert r.estimate_log == pytest.approx(float(np.mean(np.log(base / cand))), abs=1e-14)
    assert r.ci_low_log is not None and r.ci_high_log is not None
    assert r.ci_low_log < r.estimate_log < r.ci_high_log


@pytest.mark.parametrize(
    ("effect", "min_effect", "verdict"),
    [
        (0.05, 1.0, "improved"),
        (-0.05, 1.0, "regressed"),
        (0.0, 2.0, "equivalent"),
        (0.0, 0.0, "inconclusive"),
        (0.012, 1.0, "inconclusive"),
    ],
)
def test_verdict_rules(effect: float, min_effect: float, verdict: str) -> None:
    base, cand = _noisy(60, effect, 0.01, 2)
    r = stats.compare(base, cand, min_effect=min_effect, resamples=4000, seed=3).result
    assert r.verdict == verdict
    assert r.ci_low_log is not None and r.ci_high_log is not None
    tau = math.log1p(min_effect / 100)
    if verdict == "improved":
        assert r.ci_low_log >= tau
    if verdict == "equivalent":
        assert -tau < r.ci_low_log and r.ci_high_log < tau
    if verdict == "inconclusive":
        # pairs_needed_estimate = ceil(n (h/d)^2), d to the nearest of +-tau (to 0 when m = 0).
        assert r.estimate_log is not None
        h = (r.ci_high_log - r.ci_low_log) / 2
        d = abs(r.estimate_log) if tau == 0 else min(abs(r.estimate_log - tau), abs(r.estimate_log + tau))
        assert r.pairs_needed_estimate == math.ceil(60 * (h / d) ** 2)
    else:
        assert r.pairs_needed_estimate is None


def test_fewer_than_the_minimum_pairs_is_inconclusive_never_a_rejection() -> None:
    base, cand = _noisy(6, -0.5, 0.01, 4)  # a huge, clear regression on 6 pairs
    r = stats.compare(base, cand, minimum_pairs=10, resamples=1000).result
    assert r.ci_high_log is not None and r.ci_high_log < 0
    assert (r.verdict, r.verdict_reason) == ("inconclusive", "too_few_pairs")
    assert r.pairs_needed_estimate == 10
    one = stats.compare([1.0], [2.0], resamples=1000).result
    assert one.ci_low_log is None and one.verdict == "inconclusive"


def test_a_ci_touching_zero_at_m_zero_is_inconclusive() -> None:
    r = stats.compare([5.0] * 20, [5.0] * 20, resamples=1000).result
    assert (r.ci_low_log, r.ci_high_log) == (0.0, 0.0)
    assert r.verdict == "inconclusive"
    assert r.pairs_needed_estimate is None  # d = 0: no projection


@pytest.mark.parametrize(
    ("baseline", "candidate", "code", "path"),
    [
        ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0], "nonpositive_metric_value", "pairs[1].candidate"),
        ([1.0, -2.0, 3.0], [1.0, 1.0, 3.0], "nonpositive_metric_value", "pairs[1].baseline"),
        ([1.0, 2.0, float("nan")], [1.0, 1.0, 3.0], "nonfinite_metric_value", "pairs[2].baseline"),
        ([1.0, 2.0], [1.0, float("inf")], "nonfinite_metric_value", "pairs[1].candidate"),
        ([[1.0, 2.0], [3.0, -1.0]], [1.0, 2.0], "nonpositive_metric_value", "pairs[1].baseline.samples[1]"),
        ([1.0, 2.0, 3.0], [1.0, 2.0], "pair_count_mismatch", None),
    ],
)
def test_bad_values_are_typed_errors_naming_the_pair(
    baseline: list[float], candidate: list[float], code: str, path: str | None
) -> None:
    with pytest.raises(InputError) as info:
        stats.compare(baseline, candidate, resamples=1000)
    assert info.value.code == code
    assert info.value.exit_code == 2
    if path is not None:
        assert info.value.path == path
        assert info.value.message.startswith(f"pair {path.split('[')[1].split(']')[0]}")


def test_invalid_options_are_statistics_invalid() -> None:
    with pytest.raises(InputError) as info:
        stats.compare([1.0] * 3, [1.0] * 3, effect_scale="arithmetic_pct")  # needs median + percentile
    assert info.value.code == "statistics_invalid"
    with pytest.raises(InputError) as info:
        stats.compare(["a", "b"], [1.0, 2.0])
    assert info.value.code == "value_invalid"


def test_calls_with_samples_use_the_within_call_summary() -> None:
    base = [[10.0, 11.0, 30.0], [10.0, 10.5, 9.5]]
    cand = [[8.0, 9.0, 8.5], [8.0, 8.0, 100.0]]
    out = stats.compare(base, cand, resamples=1000)
    assert out.pairs["baseline_value"].to_list() == [11.0, 10.0]
    assert out.pairs["candidate_value"].to_list() == [8.5, 8.0]
    assert out.pairs["baseline_samples"].to_list() == [3, 3]
    mean = stats.compare(base, cand, within_call="mean", resamples=1000)
    assert mean.pairs["baseline_value"].to_list() == pytest.approx([17.0, 10.0])
    with pytest.raises(InputError) as info:
        stats.compare(base, cand, within_call="p95", resamples=1000)
    assert info.value.code == "samples_too_few"
    assert info.value.expected == "≥ 200 samples"


def test_tails_report_p50_p95_p99_where_calls_allow() -> None:
    rng = np.random.default_rng(5)
    base = [10.0 * np.exp(rng.normal(0, 0.01, 300)) for _ in range(12)]
    # The candidate keeps its median but grows a tail: its p95 is 20 % higher.
    cand = []
    for call in base:
        c = call.copy()
        c[c > np.quantile(c, 0.9)] *= 1.2
        cand.append(c)
    r = stats.compare(base, cand, tails=True, resamples=2000).result
    quantiles = {t.quantile: t for t in r.tails}
    assert set(quantiles) == {"p50", "p95"}
    assert [u.quantile for u in r.tails_unavailable] == ["p99"]
    assert r.tails_unavailable[0].samples_min_per_call == 300
    assert quantiles["p50"].estimate_pct == pytest.approx(0.0, abs=1e-9)
    p95 = [math.log(np.quantile(b, 0.95) / np.quantile(c, 0.95)) for b, c in zip(base, cand, strict=True)]
    assert quantiles["p95"].estimate_log == pytest.approx(float(np.median(p95)), abs=1e-12)
    assert quantiles["p95"].verdict == "regressed"


def test_cases_stratify_and_weights_change_the_pooled_estimate() -> None:
    # Case "a": 6 pairs with effect ln 1.10, case "b": 2 pairs with effect ln 1.50 (equal in each case).
    base = [10.0] * 8
    cand = [10 / 1.1] * 6 + [10 / 1.5] * 2
    cases = ["a"] * 6 + ["b"] * 2
    plain = stats.compare(base, cand, cases=cases, resamples=1000, minimum_pairs=2).result
    assert plain.estimate_log == pytest.approx(math.log(1.1))
    # Stratified: every replicate keeps 6 "a" and 2 "b" pairs, so the median never moves.
    assert (plain.ci_low_log, plain.ci_high_log) == (plain.estimate_log, plain.estimate_log)
    assert [(c.case_id, c.n) for c in plain.per_case] == [("a", 6), ("b", 2)]
    assert plain.per_case[1].estimate_log == pytest.approx(math.log(1.5))
    weighted = stats.compare(
        base, cand, cases=cases, case_weights={"a": 1.0, "b": 3.0}, resamples=1000, minimum_pairs=2
    ).result
    assert weighted.estimate_log == pytest.approx(math.log(1.5))
    mean = stats.compare(
        base,
        cand,
        cases=cases,
        case_weights={"a": 1.0, "b": 3.0},
        estimator="mean",
        resamples=1000,
        minimum_pairs=2,
    ).result
    assert mean.estimate_log == pytest.approx((math.log(1.1) + 3 * math.log(1.5)) / 4)
    assert stats.compare(base, cand, cases=cases, resamples=1000).result.pairs_needed_estimate == 10


def test_orders_give_the_order_effect_and_invalid_pairs_are_excluded() -> None:
    # AB pairs favour the candidate by 2 %, BA pairs by 0 %: order effect = (ln 1.02 - 0)/2.
    base = [10.0] * 8
    cand = [10 / 1.02, 10.0] * 4
    orders = ["AB", "BA"] * 4
    r = stats.compare(base, cand, orders=orders, resamples=1000, minimum_pairs=2).result
    assert r.orders is not None
    assert (r.orders.ab_pairs, r.orders.ba_pairs) == (4, 4)
    assert r.orders.order_effect_pct == pytest.approx(100 * math.expm1(math.log(1.02) / 2))
    valid = [True] * 7 + [False]
    r = stats.compare([1.0] * 7 + [-1.0], [1.0] * 8, valid=valid, resamples=1000).result
    assert (r.n, r.n_invalid) == (7, 1)


def test_parity_mode_is_the_median_of_percent_improvements() -> None:
    base, cand = _noisy(40, 0.02, 0.02, 6)
    out = stats.compare(base, cand, effect_scale="arithmetic_pct", ci_method="percentile", resamples=1000)
    pct = 100 * (base - cand) / base
    assert out.result.estimate_pct == pytest.approx(float(np.median(pct)), abs=1e-12)
    assert out.result.estimate_log is None and out.result.spread is None
    assert out.pairs["effect_pct"].to_list() == pytest.approx(pct.tolist())


def test_noise_reports_spread_half_width_and_mde() -> None:
    rng = np.random.default_rng(7)
    a = 10 * np.exp(rng.normal(0, 0.02, 40))
    b = a * np.exp(rng.normal(0, 0.01, 40))
    n = stats.noise(a, b, min_effect=1.0, resamples=2000)
    r = n.report
    logs = np.log(a / b)
    assert r.n == 40
    assert r.sd_log == pytest.approx(float(np.std(logs, ddof=1)), rel=1e-12)
    mad = float(np.median(np.abs(logs - np.median(logs))))
    assert r.robust_sd_log == pytest.approx(1.4826 * mad, rel=1e-12)
    zc, zp = 1.959963984540054, 0.8416212335729143
    k = math.sqrt(math.pi / 2)
    assert [x.n_pairs for x in r.at] == [10, 40, 80]
    for x in r.at:
        assert x.mde_log == pytest.approx((zc + zp) * k * r.sd_log / math.sqrt(x.n_pairs), rel=1e-12)
        assert x.half_width_log == pytest.approx(zc * k * r.sd_log / math.sqrt(x.n_pairs), rel=1e-12)
    assert r.pairs_for_minimum_effect == math.ceil(((zc + zp) * k * r.sd_log / math.log(1.01)) ** 2)
    assert r.aa.minimum_effect_pct == 0.0
    assert n.pairs.height == 40


def test_noise_warns_when_the_aa_copies_differ() -> None:
    a = 10 * np.exp(np.random.default_rng(8).normal(0, 0.01, 30))
    r = stats.noise(a, a * 1.05, resamples=2000).report
    assert r.aa.verdict == "regressed"
    assert [w.code for w in r.warnings] == ["aa_effect_detected"]


def test_resolution_from_a_noise_sd() -> None:
    base, cand = _noisy(20, 0.0, 0.02, 9)
    r = stats.compare(base, cand, min_effect=0.5, noise=0.02, resamples=1000).result
    assert r.resolution is not None
    mde = (1.959963984540054 + 0.8416212335729143) * math.sqrt(math.pi / 2) * 0.02 / math.sqrt(20)
    assert r.resolution.mde_pct == pytest.approx(100 * math.expm1(mde), rel=1e-12)
    assert r.resolution.status == "below_mde"
    assert "minimum_effect_below_mde" in [w.code for w in r.warnings]


def test_schedule_is_balanced_and_seeded() -> None:
    s = stats.schedule(7, 42)
    assert s.orders.count("AB") in (3, 4) and len(s.orders) == 7
    assert stats.schedule(7, 42) == s
    assert any(stats.schedule(7, seed).orders != s.orders for seed in range(43, 60))
    assert stats.schedule(10, 1).orders.count("AB") == 5


def test_relative_and_absolute_constraints() -> None:
    base = [10.0] * 20
    slower = [10.0 * (1.05 + 0.001 * (i % 3)) for i in range(20)]
    r = stats.constraint(base, slower, max_regression_pct=2.0, resamples=2000)
    assert r.status == "failed"
    assert r.regression_estimate == pytest.approx(100 * (np.median(np.array(slower) / 10.0) - 1), rel=1e-12)
    assert r.limit.kind == "relative"
    assert stats.constraint(base, slower, max_regression_pct=10.0, resamples=2000).status == "passed"
    assert stats.constraint(base[:5], slower[:5], max_regression_pct=2.0).status == "inconclusive"
    memory = stats.constraint([100.0] * 20, [104.0] * 20, max_regression=5.0, resamples=2000)
    assert (memory.status, memory.regression_estimate) == ("passed", 4.0)
    # Absolute constraints take values that may be 0 (counts).
    errors = stats.constraint([0.0] * 20, [1.0] * 20, max_regression=0.5, resamples=2000)
    assert errors.status == "failed"
    with pytest.raises(InputError) as info:
        stats.constraint(base, slower)
    assert info.value.code == "statistics_invalid"


def test_guardrails_every_call_and_ci() -> None:
    every = stats.guardrail([0.0, 0.0, 0.0, 1.0], limit=0.0, op="le", mode="every_call")
    assert (every.status, every.violations) == ("failed", [(3, 0)])
    ok = stats.guardrail([0.0, 0.0, 0.0, 1.0], limit=0.0, mode="every_call", valid=[True] * 3 + [False])
    assert ok.status == "passed"
    rates = [0.99 + 0.001 * (i % 5) for i in range(20)]
    assert stats.guardrail(rates, limit=0.98, op="ge", resamples=2000).status == "passed"
    assert stats.guardrail(rates, limit=0.999, op="ge", resamples=2000).status == "failed"
    assert stats.guardrail(rates[:3], limit=0.999, op="ge").status == "inconclusive"
