"""Benchmark: ``gpuopt map account`` on a generated Parquet file of N events vs a vectorised numpy/polars
implementation of the same accounting, each in a fresh process.

The input (``benchmarks/out/map_events_<N>.parquet``) holds N events on 8 timelines in 1,000 groups
(category, name), with random starts and durations so that events overlap. The peer computes the totals
with one numpy sort over the boundaries (ends before starts) and a cumulative sum, and the per-group
union with one such sort per group via polars ``group_by``; exclusive time is not computed by the peer.
Both must agree on union, overlap excess, peak concurrency and every group's union. Prints time, peak RSS
and the ratio. No goal is set by the issue. Run on a release build:
``maturin develop --release && python benchmarks/map_bench.py``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"


def build(path: Path, n: int) -> None:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(7)
    start = rng.integers(0, n * 400, n, dtype=np.int64)
    dur = rng.integers(0, 2_000, n, dtype=np.int64)
    group = rng.integers(0, 1_000, n)
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(
        {
            "timeline": pl.Series([f"gpu0/stream{i}" for i in rng.integers(0, 8, n)]),
            "start_ns": start,
            "end_ns": start + dur,
            "category": pl.Series([f"cat{g % 10}" for g in group]),
            "name": pl.Series([f"kernel{g}" for g in group]),
        }
    ).write_parquet(path)


def _sweep(start: object, end: object) -> tuple[int, int, int]:
    import numpy as np

    s = np.asarray(start)
    e = np.asarray(end)
    keep = e > s
    s, e = s[keep], e[keep]
    t = np.concatenate([e, s])
    d = np.concatenate([-np.ones(len(e), np.int64), np.ones(len(s), np.int64)])
    order = np.lexsort((d, t))  # by time, then ends (-1) before starts (+1)
    t, d = t[order], d[order]
    level = np.cumsum(d)[:-1]
    width = np.diff(t)
    busy = level > 0
    union = int(width[busy].sum())
    overlap = int(((level[busy] - 1) * width[busy]).sum())
    peak = int(level[width > 0].max()) if (width > 0).any() else 0
    return union, overlap, peak


def peer(path: Path) -> dict[str, object]:
    import polars as pl

    df = pl.read_parquet(path)
    union, overlap, peak = _sweep(df["start_ns"].to_numpy(), df["end_ns"].to_numpy())
    groups = {}
    for (cat, name), part in df.group_by(["category", "name"]):
        groups[f"{cat}/{name}"] = _sweep(part["start_ns"].to_numpy(), part["end_ns"].to_numpy())[0]
    return {"union": union, "overlap": overlap, "peak": peak, "groups": groups}


def gpuopt_run(path: Path) -> dict[str, object]:
    from gpuopt import map as maps

    out = maps.account(path)
    t = out.data.totals
    groups = {f"{g.key['category']}/{g.key['name']}": g.union_ns for g in out.data.groups}
    return {"union": t.union_ns, "overlap": t.overlap_excess_ns, "peak": t.max_concurrency, "groups": groups}


def child(which: str, path: Path) -> None:
    t0 = time.perf_counter()
    result = gpuopt_run(path) if which == "gpuopt" else peer(path)
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"wall_s": wall, "rss": rss, "result": result}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=5_000_000)
    ap.add_argument("--child", choices=["gpuopt", "peer"])
    ap.add_argument("--path", type=Path)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.path)
        return
    path = OUT / f"map_events_{args.events}.parquet"
    if not path.exists():
        build(path, args.events)
    runs = {}
    for which in ("gpuopt", "peer"):
        cmd = [sys.executable, __file__, "--child", which, "--path", str(path)]
        runs[which] = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    g, p = runs["gpuopt"], runs["peer"]
    if g["result"] != p["result"]:
        sys.exit("gpuopt and the peer disagree")
    print(f"{args.events:,} events, {len(g['result']['groups'])} groups; results agree")
    for name, r in runs.items():
        print(f"  {name:7s} {r['wall_s']:7.2f} s  {r['rss'] / 2**20:7.0f} MiB")
    speed = p["wall_s"] / g["wall_s"]
    print(f"  ratio   {speed:.1f}x faster than the peer; peer RSS / gpuopt RSS {p['rss'] / g['rss']:.2f}")


if __name__ == "__main__":
    main()
