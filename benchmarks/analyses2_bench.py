"""Benchmark: call paths, FLOPs and Perfetto exports against the summaries of the same files.

Goal (issue 31 items 5-7): each analysis in at most 2x the time of ``torch summary`` on the same ~1 GB
Kineto trace (the Perfetto export: of ``nsys summary`` on the 1.64 GB nsys export), peak RSS at most
1 GB. Every measurement is a child process pinned to 2 CPUs (``torch_trace_bench.run_child``: wall
time, CPU time, peak RSS sampled every 50 ms), in the same run:

* torch (``--trace``, default: ``torch_trace_bench.build_trace`` at ``--size-mb``, the H200 fixture's
  events repeated; it carries ``record_shapes`` arguments): ``open + summary()`` (the baseline),
  ``open + paths() + kernel_paths()``, ``open + flops.torch_flops()``, ``open + export_torch()``.
* nsys (``--nsys``, default ``/tmp/gpuopt-nsys-bench/eager-x12630.sqlite``, made by
  ``benchmarks/grow_nvtx_sqlite.py``-style growth of the eager export): ``open + info() +
  timeline_and_graphs()`` (what ``gpuopt nsys summary`` computes) against ``export_nsys()``.
* Peers in the same run: HTA (``HolisticTraceAnalysis``, the ``bench`` extra) ``get_gpu_kernel_breakdown``
  plus its op-to-kernel mapping (``t.get_trace`` joined on correlation through ``cuda_runtime`` calls),
  on a ``--peer-size-mb`` trace (HTA needs several times the file in memory; both tools are timed on
  that trace too, so the ratio is at equal input). TraceLens (AMD's per-op roofline) is not installable:
  the PyPI name ``tracelens`` is an unrelated package and AMD publishes it only as a repository.

    python benchmarks/analyses2_bench.py [--size-mb 1024] [--trace FILE] [--nsys FILE] [--no-peer]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torch_trace_bench import build_trace, run_child

_TIMED = """
import json, resource, sys, time
t0 = time.perf_counter()
from gpuopt import torch_trace, flops, perfetto
trace = torch_trace.open(sys.argv[1])
t1 = time.perf_counter()
{body}
t2 = time.perf_counter()
print(json.dumps({{"seconds": t2 - t0, "load_seconds": t1 - t0, "tables_seconds": t2 - t1, "rows": rows,
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""

TORCH = {
    "summary": "trace.summary(); rows = 0",
    "paths": "rows = trace.paths().height + trace.kernel_paths().height",
    "flops": "r = flops.torch_flops(trace); rows = r.ops.height",
    "perfetto": "import os\nr = perfetto.export_torch(trace, os.environ['BENCH_OUT']); rows = r.slices",
}

NSYS = {
    "summary": """
import json, resource, sys, time
t0 = time.perf_counter()
from gpuopt import nsys
r = nsys.open(sys.argv[1]); r.info(); r.timeline_and_graphs()
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "load_seconds": t1 - t0, "tables_seconds": 0, "rows": 0,
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""",
    "perfetto": """
import json, os, resource, sys, time
t0 = time.perf_counter()
from gpuopt import perfetto
w = perfetto.export_nsys(sys.argv[1], os.environ['BENCH_OUT'])
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "load_seconds": t1 - t0, "tables_seconds": 0, "rows": w.slices,
                  "out_bytes": w.bytes, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""",
}

# HTA: the kernel breakdown and each kernel's op stack through HTA's own call graph (CallGraph: one
# call stack per thread; a kernel's launching call by index_correlation, its stack by get_path_to_root),
# the counterpart of `paths` / `paths --kernels`.
HTA = """
import json, logging, resource, sys, time, warnings
from collections import Counter
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
from hta.common.call_stack import CallGraph
analysis = TraceAnalysis(trace_dir=sys.argv[1])
t1 = time.perf_counter()
_, kernels = analysis.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**9, duration_ratio=1.0)
cg = CallGraph(analysis.t)
stacks = {(pid, tid): cg.call_stacks[i] for (_, pid, tid), i in cg.mapping["csg_index"].items()}
df = analysis.t.get_trace(next(iter(analysis.t.traces)))
gpu = df[df["stream"] > 0]
calls = df.loc[gpu["index_correlation"][gpu["index_correlation"] >= 0]]
paths = Counter()
for idx, pid, tid in zip(calls.index, calls["pid"], calls["tid"]):
    stack = stacks.get((pid, tid))
    if stack is not None and idx in stack.get_nodes():
        paths[tuple(stack.get_path_to_root(idx))] += 1
rows = len(paths)
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t0, "load_seconds": t1 - t0, "tables_seconds": t2 - t1, "rows": rows,
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _child(code: str, arg: str, out: Path | None, args: argparse.Namespace) -> dict[str, Any]:
    if out is not None:
        os.environ["BENCH_OUT"] = str(out)
    return run_child(sys.executable, code, arg, rss_limit_gb=args.rss_limit_gb, timeout_s=900)


def _fmt(label: str, r: dict[str, Any], base: dict[str, Any] | None) -> str:
    if "failed" in r:
        return f"  {label:<10} did not finish ({r['failed']})"
    ratio = f", {r['seconds'] / base['seconds']:.2f}x summary" if base and "seconds" in base else ""
    return (
        f"  {label:<10} {r['seconds']:7.2f} s wall (load {r['load_seconds']:.2f} s),"
        f" CPU {r['cpu_seconds']:.2f} s,"
        f" peak RSS {r['rss_kib'] / 2**20:.2f} GB{ratio}"
    )


def torch_runs(path: Path, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    size = path.stat().st_size / 2**20
    print(f"torch: {path} ({size:.0f} MiB)")
    results: dict[str, Any] = {}
    for name, body in TORCH.items():
        out = tmp / "torch.pftrace" if name == "perfetto" else None
        results[name] = r = _child(_TIMED.format(body=body), str(path), out, args)
        if out is not None and out.exists():
            r["out_bytes"] = out.stat().st_size
            out.unlink()
        print(_fmt(name, r, results.get("summary") if name != "summary" else None))
    return results


def nsys_runs(path: Path, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    print(f"nsys: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    results: dict[str, Any] = {}
    for name, code in NSYS.items():
        out = tmp / "nsys.pftrace" if name == "perfetto" else None
        results[name] = r = _child(code, str(path), out, args)
        if out is not None and out.exists():
            out.unlink()
        print(_fmt(name, r, results.get("summary") if name != "summary" else None))
        if "out_bytes" in r:
            print(f"  {'':<10} wrote {r['out_bytes'] / 2**20:.0f} MiB, {r['rows']} slices")
    return results


def peer_runs(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    import subprocess

    if subprocess.run([sys.executable, "-c", "import hta"], capture_output=True).returncode != 0:
        print("HTA: not installed (pip install 'gpuopt[bench]')")
        return {}
    folder = tmp / "peer"
    folder.mkdir()
    trace = folder / "rank0.json"
    build_trace(trace, args.peer_size_mb)
    print(f"peer comparison on {trace.stat().st_size / 2**20:.0f} MiB (HTA keeps the whole trace in pandas):")
    results = {
        "hta": run_child(
            sys.executable, HTA, str(folder), rss_limit_gb=args.peer_rss_limit_gb, timeout_s=900
        ),
        "paths": _child(_TIMED.format(body=TORCH["paths"]), str(trace), None, args),
    }
    print(_fmt("HTA", results["hta"], None))
    print(_fmt("gpuopt", results["paths"], results["hta"]).replace("x summary", "x HTA"))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--trace", type=Path, help="an existing Kineto trace instead of building one")
    parser.add_argument("--out-dir", type=Path, default=Path("/tmp/gpuopt-torch-bench"))
    parser.add_argument("--nsys", type=Path, default=Path("/tmp/gpuopt-nsys-bench/eager-x12630.sqlite"))
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--no-nsys", action="store_true")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--peer-size-mb", type=int, default=128)
    parser.add_argument("--rss-limit-gb", type=float, default=4.0)
    parser.add_argument("--peer-rss-limit-gb", type=float, default=12.0)
    args = parser.parse_args()
    from gpuopt.provenance import native_build

    print(f"native build: {native_build().profile}; load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        report: dict[str, Any] = {}
        if not args.no_torch:
            trace = args.trace
            if trace is None:
                args.out_dir.mkdir(parents=True, exist_ok=True)
                trace = args.out_dir / f"trace-{args.size_mb}mb.json"
                if not trace.exists():
                    build_trace(trace, args.size_mb)
            report["torch"] = torch_runs(trace, args, tmp)
        if not args.no_nsys and args.nsys.exists():
            report["nsys"] = nsys_runs(args.nsys, args, tmp)
        if not args.no_peer:
            report["peer"] = peer_runs(args, tmp)
        print(json.dumps(report))


if __name__ == "__main__":
    main()
