"""Benchmark: iterations, critical path, queues and sequences against the summaries of the same files.

Goal (issue 31): each analysis in at most 2x the time of ``torch summary`` on the same ~1 GB Kineto trace
(of ``nsys summary`` on the 1.64 GB nsys export), peak RSS at most 1 GB, with HTA's counterpart timed in
the same run. Every measurement is a child process pinned to 2 CPUs (``torch_trace_bench.run_child``:
wall time, CPU time, peak RSS sampled every 50 ms) running what the command runs, the library's
``*_document`` call (open, analyse, the document and its whole tables, the file's identity) and the
document's JSON:

* torch (``--trace``, default: ``torch_trace_bench.build_trace`` at ``--size-mb``, the H200 fixture's
  events repeated): ``torch_trace.summary_document`` (the baseline), then
  ``analyses.iterations_document`` / ``critical_path_document`` / ``queue_document`` /
  ``sequences_document`` with ``area="torch"``.
* nsys (``--nsys``, default ``/tmp/gpuopt-nsys-bench/eager-x12630.sqlite``, read only):
  ``nsys.summary_document`` against the same four with ``area="nsys"``.
* The identity cache (``GPUOPT_CACHE_DIR``) is a folder of this run, filled before the first timed
  child, so no measurement pays for hashing the file and none gets it free.
* HTA (HolisticTraceAnalysis, from ``--hta-python``: a separate venv, e.g. ``python -m venv /tmp/htavenv
  && /tmp/htavenv/bin/pip install holistictraceanalysis``) on a ``--peer-size-mb`` trace (HTA holds the
  whole trace in pandas, several times the file), each counterpart in its own child with HTA's load
  (``TraceAnalysis``) counted, as gpuopt's open is: ``critical_path_analysis(rank=0, annotation="")``
  (one path over the whole trace) + ``get_critical_path_breakdown``; ``get_queue_length_time_series`` +
  ``get_queue_length_summary_from_time_series`` (against gpuopt's ``queue --series``);
  ``get_frequent_cuda_kernel_sequences(operator_name=--hta-operator, min_pattern_len=1)`` (it always
  writes an overlaid trace: into a temporary folder; where it fails, as its µs rounding makes it on
  this trace, it is timed again with ``HTA_DISABLE_NS_ROUNDING=1``). HTA has no iteration detection.
  gpuopt is timed on that trace too, so each ratio is at equal input. HTA 0.5.0's critical path fails
  under pandas 3 (``DataFrame.drop(axis=1, columns=...)``); a venv with ``pandas<3`` runs it.

    python benchmarks/analyses_bench.py [--size-mb 1024] [--trace FILE] [--nsys FILE]
        [--hta-python /tmp/htavenv/bin/python] [--peer-size-mb 128] [--rounds 1] [--no-torch] [--no-nsys]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torch_trace_bench import build_trace, run_child

GOAL_RATIO = 2.0
GOAL_RSS_GIB = 1.0

_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from gpuopt import analyses, nsys, torch_trace
path = sys.argv[1]
answer = {call}
text = answer.data.model_dump_json()
t1 = time.perf_counter()
print(json.dumps({{"seconds": t1 - t0, "rows": answer.table.height if answer.tables else 0,
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""

#: What each command's library call is; ``{area}`` is ``torch`` or ``nsys``.
CALLS = {
    "summary": "{lib}.summary_document(path)",
    "iterations": "analyses.iterations_document(path, area='{area}')",
    "critical-path": "analyses.critical_path_document(path, area='{area}')",
    "queue": "analyses.queue_document(path, area='{area}')",
    "sequences": "analyses.sequences_document(path, area='{area}')",
}

#: gpuopt's side of each HTA comparison (on the peer trace).
PEER_CALLS = {
    "critical-path": CALLS["critical-path"],
    "queue": "analyses.queue_document(path, area='{area}', series=True)",
    "sequences": CALLS["sequences"],
}

_HTA_HEAD = """
import json, logging, resource, sys, tempfile, time, warnings
warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1])
t1 = time.perf_counter()
"""

_HTA_TAIL = """
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t0, "load_seconds": t1 - t0, "rows": rows,
                  "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

HTA = {
    "critical-path": """
graph, ok = analysis.critical_path_analysis(rank=0, annotation="", instance_id=None)
if not ok:
    raise SystemExit("critical_path_analysis did not succeed")
rows = len(graph.get_critical_path_breakdown())
""",
    "queue": """
series = analysis.get_queue_length_time_series(ranks=[0])
summary = analysis.get_queue_length_summary_from_time_series(series)
rows = sum(len(s) for s in series.values())
""",
    "sequences": """
with tempfile.TemporaryDirectory() as out:
    patterns = analysis.get_frequent_cuda_kernel_sequences(
        operator_name=OPERATOR, output_dir=out, min_pattern_len=MIN_LEN, top_k=5, visualize=False)
rows = len(patterns)
""",
}


def _code(call: str, area: str) -> str:
    return _CHILD.format(call=call.format(area=area, lib="torch_trace" if area == "torch" else "nsys"))


def _hta_code(name: str, operator: str, min_len: int) -> str:
    return _HTA_HEAD + f"OPERATOR = {operator!r}\nMIN_LEN = {min_len}\n" + HTA[name] + _HTA_TAIL


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median wall time (all wall times kept); the first failure when none finished."""
    done = sorted((r for r in runs if "failed" not in r), key=lambda r: r["seconds"])
    if not done:
        return runs[0]
    best = dict(done[len(done) // 2])
    best["walls"] = [round(r["seconds"], 2) for r in runs if "failed" not in r]
    return best


def _gib(r: dict[str, Any]) -> float:
    return float(r["rss_kib"]) / 2**20


def _line(label: str, r: dict[str, Any], base: dict[str, Any] | None, base_label: str) -> str:
    if "failed" in r:
        return f"  {label:<14} did not finish ({r['failed']})"
    text = (
        f"  {label:<14} {r['seconds']:7.2f} s wall, CPU {r['cpu_seconds']:6.2f} s, peak RSS {_gib(r):.2f} GiB"
    )
    if "load_seconds" in r:
        text += f" (load {r['load_seconds']:.2f} s)"
    flags = []
    if base is not None and "failed" not in base:
        ratio = r["seconds"] / base["seconds"]
        cpu_ratio = r["cpu_seconds"] / base["cpu_seconds"]
        text += f", {ratio:.3g}x {base_label} (CPU {cpu_ratio:.3g}x)"
        if base_label == "summary" and ratio > GOAL_RATIO:
            flags.append(f"over {GOAL_RATIO:.0f}x summary")
    if _gib(r) > GOAL_RSS_GIB and base_label == "summary":
        flags.append(f"over {GOAL_RSS_GIB:.0f} GiB")
    if len(r.get("walls", [])) > 1:
        text += f"; walls {r['walls']}"
    return text + (f"  <-- {', '.join(flags)}" if flags else "")


def _runs(
    path: Path, area: str, calls: dict[str, str], args: argparse.Namespace
) -> dict[str, dict[str, Any]]:
    """Every call on ``path``, ``--rounds`` times interleaved; the median run of each."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            r = run_child(
                sys.executable, _code(call, area), str(path), rss_limit_gb=args.rss_limit_gb, timeout_s=900
            )
            runs[name].append(r)
    return {name: _median(rs) for name, rs in runs.items()}


def measure(path: Path, area: str, args: argparse.Namespace) -> dict[str, Any]:
    print(f"{area}: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    results = _runs(path, area, CALLS, args)
    base = results["summary"]
    for name, r in results.items():
        print(_line(name, r, None if name == "summary" else base, "summary"))
    return results


def _warm_identity(paths: list[Path]) -> None:
    code = "import sys\nfrom gpuopt.provenance import file_identity\nfor p in sys.argv[1:]: file_identity(p)"
    subprocess.run([sys.executable, "-c", code, *map(str, paths)], check=True)


def peer_runs(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    python = args.hta_python
    if python is None or subprocess.run([python, "-c", "import hta"], capture_output=True).returncode:
        print("HTA: not measured (give --hta-python, a Python with holistictraceanalysis installed)")
        return {}
    version = subprocess.run(
        [
            python,
            "-c",
            "import importlib.metadata as m; print(m.version('HolisticTraceAnalysis'), m.version('pandas'))",
        ],
        capture_output=True,
        text=True,
    ).stdout.split()
    folder = tmp / "peer"
    folder.mkdir()
    trace = folder / "rank0.json"
    build_trace(trace, args.peer_size_mb)
    _warm_identity([trace])
    mib = trace.stat().st_size / 2**20
    print(
        f"HTA {version[0]} (pandas {version[1]}) and gpuopt on {mib:.0f} MiB (HTA keeps the trace in pandas):"
    )
    mine = _runs(trace, "torch", PEER_CALLS, args)
    results: dict[str, Any] = {"hta_version": version, "size_mib": mib}
    for name in PEER_CALLS:
        peer = _hta_runs(python, name, folder, args)
        results[name] = {"gpuopt": mine[name], "hta": peer}
        print(_line(f"{name} HTA", peer, None, ""))
        if "failed" in peer:
            # HTA's µs rounding makes sub-µs events 0 or -1 µs long, which its call stack refuses: its
            # exact-time mode is the one that answers (references/analyses.md, "Against HTA").
            os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
            try:
                peer = results[name]["hta_ns"] = _hta_runs(python, name, folder, args)
            finally:
                del os.environ["HTA_DISABLE_NS_ROUNDING"]
            print(_line(f"{name} HTA, HTA_DISABLE_NS_ROUNDING=1", peer, None, ""))
        print(_line(f"{name} gpuopt", mine[name], peer, "HTA").replace("x HTA", "x HTA's time"))
    return results


def _hta_runs(python: str, name: str, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    code = _hta_code(name, args.hta_operator, args.hta_min_pattern_len)
    return _median(
        [
            run_child(
                python, code, str(folder), rss_limit_gb=args.peer_rss_limit_gb, timeout_s=args.peer_timeout_s
            )
            for _ in range(args.rounds)
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--trace", type=Path, help="an existing Kineto trace instead of building one")
    parser.add_argument("--out-dir", type=Path, default=Path("/tmp/gpuopt-torch-bench"))
    parser.add_argument("--nsys", type=Path, default=Path("/tmp/gpuopt-nsys-bench/eager-x12630.sqlite"))
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-nsys", action="store_true")
    parser.add_argument("--hta-python", help="a Python with HolisticTraceAnalysis installed")
    parser.add_argument("--hta-operator", default="aten::linear", help="HTA's sequences root op")
    parser.add_argument("--hta-min-pattern-len", type=int, default=1, help="HTA's min_pattern_len")
    parser.add_argument("--peer-size-mb", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each child (the median is kept)")
    parser.add_argument("--rss-limit-gb", type=float, default=6.0)
    parser.add_argument("--peer-rss-limit-gb", type=float, default=12.0)
    parser.add_argument("--peer-timeout-s", type=float, default=900.0)
    args = parser.parse_args()
    from gpuopt.provenance import native_build

    print(
        f"native build: {native_build().profile}; {os.cpu_count()} CPUs, children pinned to 2;"
        f" load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.environ["GPUOPT_CACHE_DIR"] = str(tmp / "identity-cache")
        report: dict[str, Any] = {}
        if not args.no_torch:
            trace = args.trace
            if trace is None:
                args.out_dir.mkdir(parents=True, exist_ok=True)
                trace = args.out_dir / f"trace-{args.size_mb}mb.json"
                if not trace.exists():
                    build_trace(trace, args.size_mb)
            _warm_identity([trace])
            report["torch"] = measure(trace, "torch", args)
        if not args.no_nsys and args.nsys.exists():
            _warm_identity([args.nsys])
            report["nsys"] = measure(args.nsys, "nsys", args)
        report["peer"] = peer_runs(args, tmp)
        print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(json.dumps(report))


if __name__ == "__main__":
    main()
