"""Many reports at once: ``--workers N`` threads against a sequential loop, and Dask's cost per file.

Makes ``--copies`` (64) hard links (symlinks where the file system refuses) of nsys-ai's public 2-GPU
export ``public/nsys/h100_2gpu_1s.sqlite`` and reads every copy's per-device kernel table
(``gpuopt.nsys.table(path, fact="kernels", per_device=True)``, what ``gpuopt nsys kernels 'dir/*'
--per-device`` runs per file) three ways, each timed best of ``--repeat``:

* sequential: a plain loop, one file after another (``many.map_files(..., workers=1)``);
* threads: ``many.map_files(..., workers=N)`` (the native engine releases the GIL);
* dask: the same per-file function on a ``distributed.LocalCluster`` (``processes=False``, N threads),
  reported as overhead per file against the threads run: (dask - threads) / files.

Usage: ``python benchmarks/many_bench.py [--copies 64] [--workers 2] [--repeat 3]``. Goal (issue 17, on a
2-core machine): threads >= 1.8x the sequential loop. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def _fixture() -> Path:
    from fixture_data import unpacked  # the unpacked test fixtures (tests/data), as the tests see them

    return unpacked() / "public" / "nsys" / "h100_2gpu_1s.sqlite"


def _copies(source: Path, folder: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        target = folder / f"run{i:03d}.sqlite"
        try:
            os.link(source, target)
        except OSError:
            target.symlink_to(source)
        out.append(target)
    return out


def _best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from gpuopt import many, nsys

    fn = partial(nsys.table, fact="kernels", per_device=True)
    with tempfile.TemporaryDirectory(prefix="gpuopt-many-bench-") as tmp:
        paths = _copies(_fixture(), Path(tmp), args.copies)
        many.map_files(fn, paths[:2])  # warm: page cache, lazy imports
        sequential = _best(lambda: many.map_files(fn, paths, workers=1), args.repeat)
        threads = _best(lambda: many.map_files(fn, paths, workers=args.workers), args.repeat)
        result: dict[str, object] = {
            "file": "public/nsys/h100_2gpu_1s.sqlite",
            "copies": args.copies,
            "workers": args.workers,
            "cpus": os.cpu_count(),
            "sequential_s": round(sequential, 3),
            "threads_s": round(threads, 3),
            "speedup": round(sequential / threads, 2),
        }
        try:
            import distributed
        except ImportError:
            result["dask"] = "not installed (pip install 'gpuopt[dask]')"
        else:
            with distributed.LocalCluster(
                n_workers=1, threads_per_worker=args.workers, processes=False, dashboard_address=None
            ) as cluster:
                address = cluster.scheduler_address
                many.map_files(fn, paths[:2], scheduler=address)  # warm the cluster
                on_dask = _best(lambda: many.map_files(fn, paths, scheduler=address), args.repeat)
            result["dask_s"] = round(on_dask, 3)
            result["dask_overhead_ms_per_file"] = round((on_dask - threads) * 1000 / args.copies, 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
