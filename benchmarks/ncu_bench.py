"""Benchmark: a raw ``ncu --csv`` page of 10,000 launches x ~1,200 metrics, gpuopt vs the csv module.

Builds the input under ``benchmarks/out/`` by repeating the rows of the H200 fixture (auto units, so the
values keep their thousands separators and scaled units), then reads it twice, each in a fresh process:

* gpuopt: ``gpuopt.ncu.open(path)`` (every row and field located and checked natively; the columns any
  table reads are converted to base units as the rows are read, the other ~1,150 on first use) and its
  ``launches`` facts table as a polars DataFrame;
* the peer: a pure-Python reader on the standard ``csv`` module producing the same per-launch facts (the
  metrics the report's facts are read from, with the same unit normalisation and sums).

It checks that both produce the same facts and prints time, peak RSS and the ratio. Goal: gpuopt ≤ 1 s.
Run it on a release build: ``maturin develop --release && python benchmarks/ncu_bench.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT.parent / "shared" / "fixtures" / "h200" / "ncu" / "kernels_full.raw.csv"
OUT = ROOT / "benchmarks" / "out"
IDENTITY = 11  # ID .. CC


def build(path: Path, launches: int, metrics: int) -> None:
    """Writes the benchmark input: the fixture's first ``metrics`` metric columns plus every column the
    facts read, its units row, and ``launches`` rows cycling through the fixture's 12 launches."""
    from gpuopt import ncu

    with FIXTURE.open(newline="") as f:
        rows = list(csv.reader(f))
    header, units, body = rows[0], rows[1], rows[2:]
    needed = set()
    for source in ncu.open(FIXTURE).info.fact_sources:
        if source.source is not None:
            needed.update(_terms(source.source)[1])
    keep = list(range(IDENTITY))
    keep += [i for i in range(IDENTITY, len(header)) if i < IDENTITY + metrics or header[i] in needed]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        out = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        out.writerow([header[i] for i in keep])
        out.writerow([units[i] for i in keep])
        for n in range(launches):
            row = body[n % len(body)]
            out.writerow([str(n) if i == 0 else row[i] for i in keep])


def _terms(source: str) -> tuple[float, list[str]]:
    scale = 1.0
    if " * (" in source:
        head, _, rest = source.partition(" * (")
        scale, source = float(head), rest.rstrip(")")
    return scale, source.split(" + ")


def run_gpuopt(path: Path) -> dict[str, object]:
    import polars  # noqa: F401 - imported before the clock starts, as an application would have it

    from gpuopt import ncu

    cpu = time.process_time()
    start = time.perf_counter()
    report = ncu.open(path)
    parsed = time.perf_counter()
    facts = report.launches
    done = time.perf_counter()
    sources = {s.fact: s.source for s in report.info.fact_sources if s.source is not None}
    return {
        "parse_s": parsed - start,
        "facts_s": done - parsed,
        "total_s": done - start,
        "cpu_s": time.process_time() - cpu,
        "launches": facts.height,
        "metrics": report.info.metrics,
        "checksum": {fact: _sum(facts[fact].to_list()) for fact in sources},
        "sources": sources,
    }


def run_python(path: Path, sources: dict[str, str]) -> dict[str, object]:
    """The peer: csv.reader, header and units row, then each fact from its metrics, in base units."""
    from gpuopt import ncu

    cpu = time.process_time()
    start = time.perf_counter()
    with path.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        units = next(reader)
        col = {name: i for i, name in enumerate(header)}
        plan = []
        for fact, source in sources.items():
            scale, names = _terms(source)
            factors = []
            for name in names:
                unit = ncu.unit(units[col[name]])
                assert unit is not None, units[col[name]]
                factors.append((col[name], unit[1]))
            plan.append((fact, scale, factors))
        facts: dict[str, list[float | None]] = {fact: [] for fact in sources}
        for row in reader:
            for fact, scale, factors in plan:
                total: float | None = 0.0
                for i, factor in factors:
                    cell = row[i].replace(",", "")
                    if cell in ("", "n/a", "nan"):
                        total = None
                        break
                    total += float(cell) * factor  # type: ignore[operator]
                facts[fact].append(None if total is None else total * scale)
    done = time.perf_counter()
    return {
        "total_s": done - start,
        "cpu_s": time.process_time() - cpu,
        "launches": len(next(iter(facts.values()))),
        "checksum": {fact: _sum(values) for fact, values in facts.items()},
    }


def _sum(values: list[float | None]) -> float:
    return math.fsum(v for v in values if v is not None)


def child(which: str, path: Path, sources: str | None) -> None:
    result = run_gpuopt(path) if which == "gpuopt" else run_python(path, json.loads(sources or "{}"))
    result["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def spawn(which: str, path: Path, sources: dict[str, str] | None = None) -> dict[str, object]:
    args = [sys.executable, __file__, "--child", which, str(path)]
    if sources is not None:
        args += ["--sources", json.dumps(sources)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--launches", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=1_200)
    parser.add_argument("--child", nargs=2, metavar=("WHICH", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--sources", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.sources)
        return
    path = OUT / f"ncu_raw_{args.launches}x{args.metrics}.csv"
    if not path.exists():
        build(path, args.launches, args.metrics)
    size_mb = path.stat().st_size / 1e6
    from gpuopt.provenance import native_build

    print(
        f"input: {path} ({size_mb:.1f} MB, {args.launches} launches), native build {native_build().profile}"
    )
    mine = spawn("gpuopt", path)
    peer = spawn("python", path, mine["sources"])  # type: ignore[arg-type]
    assert mine["launches"] == peer["launches"] == args.launches
    same = all(
        math.isclose(mine["checksum"][f], peer["checksum"][f], rel_tol=1e-9)  # type: ignore[index]
        for f in peer["checksum"]  # type: ignore[attr-defined]
    )
    print(
        f"gpuopt  : {mine['total_s']:.3f} s (parse {mine['parse_s']:.3f} s of {mine['metrics']} metrics, "
        f"facts {mine['facts_s']:.3f} s), CPU {mine['cpu_s']:.3f} s, peak RSS {mine['max_rss_mib']:.0f} MiB"
    )
    print(
        f"python  : {peer['total_s']:.3f} s (csv module), CPU {peer['cpu_s']:.3f} s, "
        f"peak RSS {peer['max_rss_mib']:.0f} MiB"
    )
    wall = peer["total_s"] / mine["total_s"]  # type: ignore[operator]
    cpu = peer["cpu_s"] / mine["cpu_s"]  # type: ignore[operator]
    print(f"ratio   : {wall:.1f}x faster in wall time, {cpu:.1f}x less CPU (goal: gpuopt <= 1 s wall)")
    count = len(peer["checksum"])  # type: ignore[arg-type]
    print(f"facts   : {'identical' if same else 'DIFFER'} ({count} facts x {args.launches} launches)")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
