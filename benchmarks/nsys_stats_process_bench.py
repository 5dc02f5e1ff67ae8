"""Whole-process ``gpuopt nsys stats FILE --report cuda_gpu_kern_sum``: cold and warm identity cache,
against NVIDIA's ``nsys stats`` and a plain Python ``sqlite3`` GROUP BY, in the same run (issue 16).

Every tool runs as its own process, as a person types it; wall time includes interpreter start,
imports, the file's identity (gpuopt) and printing. gpuopt runs with ``--json`` so the envelope's
provenance (the BLAKE3 file identity, ``from_cache``) is really produced:

* gpuopt cold: an empty identity cache (``GPUOPT_CACHE_DIR`` = a fresh folder): the first read, where
  the BLAKE3 hash of the whole file runs concurrently with the engine (wall = the larger of the two);
* gpuopt warm: the same cache after one run: the digest comes from the cache;
* engine only: what the command runs natively (open the export, compute the report), timed inside one
  process, to show what the process adds (before the native printing this timed ``nsys.open(...).stats``,
  which also imported polars and built a DataFrame);
* nsys-stats (``--nsys PATH`` or ``nsys`` on PATH): ``nsys stats --report cuda_gpu_kern_sum --format csv
  --output - FILE``; first run discarded when it writes its own cache files;
* sqlite3-groupby: ``python -c`` with one GROUP BY over CUPTI_ACTIVITY_KIND_KERNEL joined to StringIds
  (count, total, avg, min, max: no median or deviation, so less work than the others).

Goals: >= 8x nsys stats on the H200 host; >= 5x sqlite3-groupby on 2 cores (warm cache). The file must
have been written more than 2 s before the cold run, or nothing is cached (git's racy rule).

    python benchmarks/nsys_stats_process_bench.py FILE.sqlite [--nsys /path/to/nsys] [--rounds 3]
        [--cpus 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SQL_PEER = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro&immutable=1", uri=True)
rows = db.execute(
    "SELECT s.value, COUNT(*), SUM(k.end - k.start), AVG(k.end - k.start), MIN(k.end - k.start),"
    " MAX(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
    " GROUP BY k.shortName ORDER BY 3 DESC"
).fetchall()
for r in rows:
    print(*r, sep=",")
"""

ENGINE_ONLY = """
import sys, time
from gpuopt import _native
t0 = time.perf_counter()
_native.nsys_open(sys.argv[1]).stats_doc("cuda_gpu_kern_sum")
print(time.perf_counter() - t0)
"""


def _pin(cpus: int) -> None:
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cpus])


def _wall(argv: list[str], env: dict[str, str], cpus: int) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, preexec_fn=lambda: _pin(cpus), check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {' | '.join(tail)}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("--nsys", help="NVIDIA's nsys (default: nsys on PATH, if any)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each (median kept)")
    parser.add_argument("--cpus", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    script = Path(sys.executable).with_name("gpuopt")
    gpuopt = [str(script)] if script.exists() else [sys.executable, "-m", "gpuopt"]
    command = [*gpuopt, "nsys", "stats", str(args.file), "--report", "cuda_gpu_kern_sum", "--json"]
    base = dict(os.environ, RAYON_NUM_THREADS=str(args.cpus), POLARS_MAX_THREADS=str(args.cpus))
    nsys = args.nsys or shutil.which("nsys")
    size_gb = args.file.stat().st_size / 1e9
    print(f"{args.file} ({size_gb:.2f} GB), {args.cpus} CPUs, load {os.getloadavg()[0]:.1f}")
    _wall([sys.executable, "-c", SQL_PEER, str(args.file)], base, args.cpus)  # page cache

    times: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(base, GPUOPT_CACHE_DIR=cache)
            times.setdefault("gpuopt cold (first read)", []).append(_wall(command, env, args.cpus))
            times.setdefault("gpuopt warm (cached identity)", []).append(_wall(command, env, args.cpus))
        times.setdefault("sqlite3-groupby", []).append(
            _wall([sys.executable, "-c", SQL_PEER, str(args.file)], base, args.cpus)
        )
        if nsys:
            argv = [nsys, "stats", "--report", "cuda_gpu_kern_sum", "--format", "csv", "--output", "-"]
            times.setdefault("nsys stats", []).append(_wall([*argv, str(args.file)], base, args.cpus))
    engine = subprocess.run(
        [sys.executable, "-c", ENGINE_ONLY, str(args.file)], env=base, capture_output=True, text=True
    )
    medians = {name: statistics.median(v) for name, v in times.items()}
    warm, cold = medians["gpuopt warm (cached identity)"], medians["gpuopt cold (first read)"]
    print(f"{'run':30} {'median s':>9} {'time / warm gpuopt':>18}")
    for name, median in medians.items():
        print(f"{name:30} {median:9.3f} {median / warm:17.2f}x")
    if engine.returncode == 0:
        print(f"{'engine only (in process)':30} {float(engine.stdout.split()[-1]):9.3f}")
    print(
        f"cold costs {cold - warm:.3f} s more than warm (hashing {size_gb:.2f} GB overlapped with the engine)"
    )
    if not nsys:
        print("nsys not found: pass --nsys PATH for the ratio against NVIDIA's nsys stats")


if __name__ == "__main__":
    main()
