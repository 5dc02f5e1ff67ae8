"""Paired bootstrap speed: gpuopt.stats.compare against scipy.stats.bootstrap on the same data.

1 000 pairs x 10 000 resamples, BCa, median of the pair log ratios (gpuopt's default). The peer is
``scipy.stats.bootstrap((baseline, candidate), statistic, paired=True, method="BCa", vectorized=True)``,
as a user would call it on paired data; scipy on the precomputed log ratios (one sample) is shown too.
The calls alternate in one process (so both see the same machine load) after a warm-up call each, and
the best time of each is kept; peak RSS is measured in a fresh process per tool (imports included).
Both CIs are printed side by side. Goal: gpuopt >= 50x faster than the paired scipy call.

    python benchmarks/stats_bench.py [--pairs 1000] [--resamples 10000] [--rounds 5] [--estimator mean]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any


def _data(pairs: int) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(12345)
    base = 10.0 * np.exp(rng.normal(0, 0.05, pairs))
    cand = base / np.exp(0.01 + rng.gamma(2.0, 0.01, pairs))
    return base, cand


def _tools(args: argparse.Namespace) -> dict[str, Callable[[], tuple[float, float]]]:
    import numpy as np
    from scipy import stats as scipy_stats

    from gpuopt import stats

    base, cand = _data(args.pairs)
    fn = np.median if args.estimator == "median" else np.mean

    def ours() -> tuple[float, float]:
        r = stats.compare(base, cand, estimator=args.estimator, resamples=args.resamples, seed=1).result
        return r.ci_low_log or 0.0, r.ci_high_log or 0.0

    def scipy_call(data: tuple[Any, ...], statistic: Callable[..., Any], paired: bool) -> tuple[float, float]:
        res = scipy_stats.bootstrap(
            data,
            statistic,
            paired=paired,
            vectorized=True,
            n_resamples=args.resamples,
            method="BCa",
            random_state=np.random.default_rng(1),
        )
        return float(res.confidence_interval.low), float(res.confidence_interval.high)

    def two(b: Any, c: Any, axis: int = -1) -> Any:
        return fn(np.log(b / c), axis=axis)

    def one(x: Any, axis: int = -1) -> Any:
        return fn(x, axis=axis)

    logs = np.log(base / cand)
    return {
        "gpuopt.stats.compare": ours,
        "scipy paired": lambda: scipy_call((base, cand), two, True),
        "scipy one-sample (log ratios)": lambda: scipy_call((logs,), one, False),
    }


def _rss(args: argparse.Namespace, name: str) -> float:
    """Peak RSS (MiB) of a fresh process that makes one call of `name`."""
    cmd = [sys.executable, __file__, "--rss-of", name, "--pairs", str(args.pairs)]
    cmd += ["--resamples", str(args.resamples), "--estimator", args.estimator]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--estimator", choices=["median", "mean"], default="median")
    parser.add_argument("--rss-of", help=argparse.SUPPRESS)
    args = parser.parse_args()
    tools = _tools(args)
    if args.rss_of:
        tools[args.rss_of]()
        print(json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
        return
    # Peak RSS first, while this process is still small (a child inherits its parent's high-water mark).
    rss = {name: _rss(args, name) for name in tools}
    best = {name: float("inf") for name in tools}
    cis = {name: tool() for name, tool in tools.items()}  # warm-up (scipy's first call loads modules)
    for _ in range(args.rounds):
        for name, tool in tools.items():
            start = time.perf_counter()
            cis[name] = tool()
            best[name] = min(best[name], time.perf_counter() - start)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = os.environ.get("RAYON_NUM_THREADS", str(cpus))  # rayon's default: the CPUs it may use
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.pairs} pairs x {args.resamples} resamples, BCa 95 %, {args.estimator} of log ratios")
    print(f"gpuopt threads: {threads}; 1-minute load average at the end: {load:.1f}; best of {args.rounds}")
    print(f"{'':32s} {'time':>10s} {'peak RSS':>10s}   CI (log ratio)")
    for name in tools:
        low, high = cis[name]
        print(f"{name:32s} {best[name] * 1e3:8.1f} ms {rss[name]:7.0f} MiB   [{low:.6f}, {high:.6f}]")
    ours = best["gpuopt.stats.compare"]
    for name in list(tools)[1:]:
        print(f"speed-up vs {name}: {best[name] / ours:.0f}x")
    goal = best["scipy paired"] / ours
    print(f"goal >= 50x vs scipy paired: {'met' if goal >= 50 else 'NOT met'} ({goal:.0f}x)")


if __name__ == "__main__":
    main()
