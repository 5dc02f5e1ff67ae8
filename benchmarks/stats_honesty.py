"""How honest are gpuopt's verdicts? Simulated A/A and A/B experiments through the real comparison.

Prints, for the default comparison (median of log ratios, BCa 95 %, 1 000 resamples per simulation):
the A/A false-positive rate (improved or regressed when nothing changed) and CI coverage by pair
count, the same for the percentile interval and the mean estimator, the effect of linear drift under a
fixed AB order versus interleaved AB/BA, and the power at 1x and 2x the minimum detectable effect.

    python benchmarks/stats_honesty.py [--simulations 10000] [--seed 11]
"""

from __future__ import annotations

import argparse
import math
import time

from gpuopt import stats
from gpuopt.models.stats import CompareOptions, SimulationReport


def binomial_se(rate: float, n: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-12) / n)


def line(label: str, r: SimulationReport, seconds: float) -> None:
    se = binomial_se(r.decisive_rate, r.simulations)
    print(
        f"{label:44s} false/decisive {100 * r.decisive_rate:5.2f} % ± {100 * se:4.2f}"
        f"  improved {100 * r.improved_rate:5.2f} %  coverage {100 * r.coverage:5.2f} %"
        f"  mean est {r.mean_estimate_pct or 0:+6.3f} %  ({seconds:.1f} s)"
    )


def run(label: str, **fields: object) -> SimulationReport:
    start = time.perf_counter()
    report = stats.simulate(**fields)  # type: ignore[arg-type]
    line(label, report, time.perf_counter() - start)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--simulations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    sims, seed = args.simulations, args.seed
    default = CompareOptions(resamples=1000)
    print(f"gpuopt.rng/v1, seed {seed}, {sims} simulations per line, 5 samples per call, heavy tails\n")
    print("A/A (true effect 0), interleaved AB/BA, no drift:")
    for pairs in (10, 11, 20, 30, 31, 50, 100):
        run(f"  median, BCa, {pairs} pairs", simulations=sims, pairs=pairs, seed=seed, statistics=default)
    for pairs in (10, 30, 100):
        percentile = CompareOptions(resamples=1000, ci_method="percentile")
        run(
            f"  median, percentile, {pairs} pairs",
            simulations=sims,
            pairs=pairs,
            seed=seed,
            statistics=percentile,
        )
    mean = CompareOptions(resamples=1000, estimator="mean")
    run("  mean, BCa, 30 pairs (heavy tails)", simulations=sims, pairs=30, seed=seed, statistics=mean)
    run(
        "  mean, BCa, 30 pairs, no outliers",
        simulations=sims,
        pairs=30,
        seed=seed,
        call_outlier_prob=0.0,
        sample_outlier_prob=0.0,
        statistics=mean,
    )
    print("\nA/A with linear drift of -0.5 % per call (getting faster), 30 pairs:")
    for design in ("fixed_ab", "interleaved"):
        run(
            f"  {design}",
            simulations=sims,
            pairs=30,
            seed=seed,
            design=design,
            drift_pct_per_call=-0.5,
            statistics=default,
        )
    print("\nPower (improved at m = 0), 30 pairs, MDE from the A/A pooled SD and robust SD:")
    aa = stats.simulate(simulations=sims, pairs=30, seed=seed, statistics=default)
    print(f"  MDE at 30 pairs: {aa.mde_pct:.3f} % from the SD {aa.pooled_sd_log:.4f}, ", end="")
    print(f"{aa.robust_mde_pct:.3f} % from the robust SD {aa.pooled_robust_sd_log:.4f}")
    for basis, mde in (("SD", aa.mde_pct), ("robust SD", aa.robust_mde_pct)):
        for factor in (0.5, 1.0, 2.0):
            run(
                f"  true effect {factor} x MDE ({basis}) = {factor * mde:.3f} %",
                simulations=sims,
                pairs=30,
                seed=seed + 1,
                true_effect_pct=factor * mde,
                statistics=default,
            )


if __name__ == "__main__":
    main()
