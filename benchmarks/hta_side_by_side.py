"""gpuopt's queue, critical path and kernel sequences beside HTA's, on the real decode captures, each
checked against the raw events (``references/analyses.md``, "Against HTA").

For each Kineto trace (default: the H200 eager decode ``decode_eager_trace.json.gz`` and the
CUDA-graph decode ``graph_trace.json`` of ``tests/data/fixtures``) it prints:

* the record: GPU operations by the API that launched them (correlation id), and which of those APIs
  HTA's launch query knows (``cudaLaunchKernel``, ``cudaLaunchKernelExC``, ``cuLaunchKernel``,
  ``cudaMemcpyAsync``, ``cudaMemsetAsync``; not ``cuLaunchKernelEx`` nor ``cudaGraphLaunch``);
* time: the kernels' GPU time from the file's decimal ``ts``/``dur`` (exact ns), from HTA's loaded
  trace (start rounded up, end rounded down to whole µs) and from gpuopt;
* queue: per stream, the maximum and the time-weighted mean of outstanding operations (launch call start
  to operation end, gpuopt's definition) computed here from the raw events and by gpuopt; and HTA's
  queue length (launch call start to operation *start*) beside the same quantity computed here with
  every launch API, HTA's mean being a mean over its change points;
* critical path: HTA's ``critical_path_analysis`` over the whole trace (its breakdown), how many GPU
  operations its graph gives a launch edge, per launch API, and how many of those without one waited
  for their launch (launch call start after the stream's previous operation ended), with gpuopt's
  totals over its steps;
* sequences: kernel n-grams (n = 3) counted here in launch order against gpuopt's, and HTA's
  ``get_frequent_cuda_kernel_sequences`` (root op ``--hta-operator``) against patterns counted here.

HTA runs in its own interpreter (``--hta-python``, repeatable: e.g. one venv with pandas 3, where HTA
0.5.0's critical path fails, and one with ``pandas<3``):

    python benchmarks/hta_side_by_side.py --hta-python /tmp/htavenv/bin/python \\
        --hta-python /tmp/htavenv-pd2/bin/python [--trace FILE ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TRACES = ["gpuopt/h200/decode/decode_eager_trace.json.gz", "h200/graphs/graph_trace.json"]
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
#: The launch APIs of HTA 0.5.0's `get_runtime_launch_events_query` (CUDA ones).
HTA_LAUNCHES = {
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
}

HTA_CHILD = r"""
import json, logging, sys, tempfile, warnings
from collections import Counter
warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)
import pandas as pd
from hta.trace_analysis import TraceAnalysis
folder, operator, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = {"pandas": pd.__version__}
analysis = TraceAnalysis(trace_dir=folder)
df = analysis.t.get_trace(0)
sym = analysis.t.symbol_table.get_sym_id_map()
names = analysis.t.symbol_table.sym_table
kernel_cat = sym.get("kernel", -9)
kernels = df[df["cat"] == kernel_cat]
dur = kernels["dur"]
out["kernels"] = {"count": int(len(kernels)), "dur_us_sum": int(dur.sum()),
                  "dur_zero": int((dur == 0).sum()), "dur_negative": int((dur < 0).sum())}
series = analysis.get_queue_length_time_series(ranks=[0]).get(0)
summary = analysis.get_queue_length_summary(ranks=[0])
out["queue"] = {}
for stream, part in series.groupby("stream"):
    row = summary.loc[(0, stream)]
    length = part["queue_length"]
    out["queue"][str(int(stream))] = {
        "points": int(len(part)), "max": int(length.max()), "min": int(length.min()),
        "mean_of_points": float(row[("queue_length", "mean")]),
    }
try:
    graph, ok = analysis.critical_path_analysis(rank=0, annotation="", instance_id=None)
    if not ok:
        raise RuntimeError("critical_path_analysis returned ok=False")
    out["window_us"] = int(df["ts"].min()), int((df["ts"] + df["dur"]).max())
    edges = graph.get_critical_path_breakdown()
    by = edges.groupby("bound_by")["duration"].sum()
    out["critical_path"] = {"total_us": int(edges["duration"].sum()),
                            "by_bound_us": {str(k): int(v) for k, v in by.items()}}
    incoming = {}
    for u, v, data in graph.edges(data=True):
        node = graph.node_list[v]
        kind = data["object"].type.name
        if node.is_start and kind in ("KERNEL_LAUNCH_DELAY", "KERNEL_KERNEL_DELAY"):
            incoming[node.ev_idx] = kind
    gpu = graph.trace_df[graph.trace_df["stream"] > 0]
    out["critical_path"]["gpu_ops"] = [
        [int(corr), incoming.get(i)] for i, corr in zip(gpu.index, gpu["correlation"])
    ]
except Exception as e:
    out["critical_path"] = {"failed": f"{type(e).__name__}: {e}"}
try:
    with tempfile.TemporaryDirectory() as tmp:
        p = analysis.get_frequent_cuda_kernel_sequences(
            operator_name=operator, output_dir=tmp, min_pattern_len=n, top_k=5, visualize=False)
    rows = []
    if len(p):
        for _, r in p.iterrows():
            rows.append({"pattern": str(r["pattern"]), "count": int(r["count"])})
    out["sequences"] = {"patterns": rows}
except Exception as e:
    out["sequences"] = {"failed": f"{type(e).__name__}: {e}"}
print(json.dumps(out))
"""


def _ns(value: Any) -> int:
    return int(Decimal(value) * 1000)


def load(path: Path) -> dict[str, Any]:
    """The raw record: GPU operations with their launching call, exact to the ns of the file's text."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    calls = {
        e["args"]["correlation"]: e
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    ops = []
    for e in events:
        if e.get("cat") not in GPU_CATS:
            continue
        call = calls.get(e.get("args", {}).get("correlation"))
        start = _ns(e["ts"])
        ops.append(
            {
                "name": e["name"],
                "cat": e["cat"],
                "stream": e["args"].get("stream"),
                "start": start,
                "end": start + _ns(e["dur"]),
                "us_start": e["ts"],
                "us_dur": e["dur"],
                "api": call["name"] if call else None,
                "tid": call["tid"] if call else None,
                "launch": _ns(call["ts"]) if call else None,
                "correlation": e.get("args", {}).get("correlation"),
            }
        )
    cpu_ops = [e for e in events if e.get("cat") == "cpu_op"]
    return {"ops": ops, "cpu_ops": cpu_ops}


def hta_rounded_us(op: dict[str, Any]) -> int:
    """HTA 0.5.0's duration of an event (``round_down_time_stamps``): ceil(ts) to floor(ts + dur)."""
    import math

    ts, dur = op["us_start"], op["us_dur"]
    return math.floor(ts + dur) - math.ceil(ts)


def queue_truth(ops: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per stream: outstanding from launch call start (own start without one) to end; and pending
    (launch call start to operation start), each with max and time-weighted mean over the window."""
    out: dict[str, dict[str, Any]] = {}
    for stream in sorted({o["stream"] for o in ops}):
        mine = [o for o in ops if o["stream"] == stream]
        lo, hi = min(o["start"] for o in mine), max(o["end"] for o in mine)
        facts = {}
        for what, stop in (("outstanding", "end"), ("pending", "start")):
            events = sorted(
                [(min(o["launch"] if o["launch"] is not None else o["start"], o["start"]), 1) for o in mine]
                + [(o[stop], -1) for o in mine]
            )  # at one instant the -1 sorts first: ends before launches
            depth, peak, area, at = 0, 0, 0, None
            for t, d in events:
                if at is not None:
                    area += depth * (min(max(t, lo), hi) - min(max(at, lo), hi))
                at = t
                depth += d
                if t < hi:
                    peak = max(peak, depth)
            facts[what] = {"max": peak, "mean": area / (hi - lo)}
        out[str(stream)] = facts
    return out


def ngrams(ops: list[dict[str, Any]], n: int) -> Counter[tuple[str, ...]]:
    """Kernel n-grams in launch order (launch call start, then GPU start), overlapping windows."""
    kernels = sorted(
        (o for o in ops if o["cat"] == "kernel"),
        key=lambda o: (o["launch"] if o["launch"] is not None else o["start"], o["start"]),
    )
    names = [o["name"] for o in kernels]
    return Counter(tuple(names[i : i + n]) for i in range(len(names) - n + 1))


def op_patterns(record: dict[str, Any], operator: str, min_len: int) -> Counter[tuple[str, ...]]:
    """HTA's sequence definition by hand: for each shallowest op whose name contains ``operator``, the
    op name then the kernels launched within it (launch call on its thread, inside its time), by
    start; ops with fewer than ``min_len`` kernels left out."""
    ops = [e for e in record["cpu_ops"] if operator in e["name"]]
    spans = [(e["tid"], _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e["name"]) for e in ops]
    spans.sort(key=lambda s: (s[0], s[1], -s[2]))
    roots: list[tuple[Any, int, int, str]] = []
    for s in spans:  # nested instances count once, at the outermost
        if roots and roots[-1][0] == s[0] and s[1] < roots[-1][2]:
            continue
        roots.append(s)
    by_tid: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for o in record["ops"]:
        if o["cat"] == "kernel" and o["launch"] is not None:
            by_tid[o["tid"]].append(o)
    out: Counter[tuple[str, ...]] = Counter()
    for tid, start, end, name in roots:
        inside = sorted((o for o in by_tid[tid] if start <= o["launch"] <= end), key=lambda o: o["start"])
        if len(inside) >= min_len:
            out[(name, *(o["name"] for o in inside))] += 1
    return out


def gpuopt_side(path: Path) -> dict[str, Any]:
    import polars as pl

    from gpuopt import analyses, torch_trace

    trace = torch_trace.open(path)
    queue = analyses.queue(trace).table.filter(pl.col("stream_id").is_not_null())
    cp = analyses.critical_path(trace)
    seq = analyses.sequences(trace, n=3).filter(pl.col("kind") == "ngram")
    kernels = trace.kernels()
    cats = ["cpu_ns", "launch_ns", "gpu_compute_ns", "gpu_memory_ns", "sync_ns", "idle_ns"]
    return {
        "kernel_time_ns": int(kernels["total_ns"].sum()),
        "queue": {
            str(r["stream_id"]): {"max": r["max_depth"], "mean": r["mean_depth"]} for r in queue.to_dicts()
        },
        "critical_path": {
            "steps": cp.steps.height,
            "span_ns": int(cp.steps["span_ns"].sum()),
            **{c: int(cp.steps[c].sum()) for c in cats},
            "launch_edges": int(cp.edges.filter(pl.col("edge") == "launch").height),
        },
        "ngrams": {r["kernels"]: r["count"] for r in seq.to_dicts()},
    }


def hta_side(python: str, path: Path, args: argparse.Namespace, rounding: bool) -> dict[str, Any]:
    """HTA's answers on ``path`` (``rounding``: HTA's default, times rounded to whole µs; else with
    ``HTA_DISABLE_NS_ROUNDING=1``)."""
    env = dict(os.environ)
    if not rounding:
        env["HTA_DISABLE_NS_ROUNDING"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        os.symlink(path.resolve(), Path(folder) / ("rank0.json" + (".gz" if path.suffix == ".gz" else "")))
        argv = [python, "-c", HTA_CHILD, folder, args.hta_operator, str(args.min_pattern_len)]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=1800, env=env)
    if run.returncode != 0:
        return {"failed": " ".join(run.stderr.strip().splitlines()[-1:])}
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    result["label"] = f"HTA, pandas {result['pandas']}" + ("" if rounding else ", ns rounding off")
    return result


def sync_waits(path: Path, ops: list[dict[str, Any]]) -> tuple[int, int]:
    """Synchronizing calls, and the host time they spent waiting for GPU work (call start to the end of
    the operation that ended last while the call ran), by hand."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    syncs = [
        e
        for e in events
        if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and e["name"].endswith("Synchronize")
    ]
    waited = 0
    for e in syncs:
        start = _ns(e["ts"])
        end = start + _ns(e["dur"])
        ends = [o["end"] for o in ops if start < o["end"] <= end]
        waited += max(ends) - start if ends else 0
    return len(syncs), waited


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def time_section(kernels: list[dict[str, Any]], mine: dict[str, Any], peers: list[dict[str, Any]]) -> int:
    truth_ns = sum(o["end"] - o["start"] for o in kernels)
    hta_us = [hta_rounded_us(o) for o in kernels]
    short = sum(1 for o in kernels if o["end"] - o["start"] < 1000)
    print(
        f"kernel time: file {truth_ns} ns, gpuopt {mine['kernel_time_ns']} ns; {short} kernels under 1 µs;"
        f" HTA's rounding (by hand) {sum(hta_us)} µs ({_pct(sum(hta_us) * 1000 - truth_ns, truth_ns)}),"
        f" {sum(1 for d in hta_us if d == 0)} kernels at 0 µs, {sum(1 for d in hta_us if d < 0)} negative"
    )
    for peer in peers:
        k = peer.get("kernels")
        if k:
            print(
                f"  {peer['label']}: {k['count']} kernels, {k['dur_us_sum']} µs, {k['dur_zero']} at 0,"
                f" {k['dur_negative']} negative"
            )
    return truth_ns


def queue_section(ops: list[dict[str, Any]], mine: dict[str, Any], peers: list[dict[str, Any]]) -> Any:
    truth_q = queue_truth(ops)
    truth_q_hta = queue_truth([o for o in ops if o["api"] in HTA_LAUNCHES])
    print("queue per stream (outstanding: launch call start to end; pending: launch call start to start):")
    for stream, t in truth_q.items():
        g = mine["queue"].get(stream, {})
        out, pend = t["outstanding"], t["pending"]
        print(
            f"  stream {stream}: outstanding max {out['max']}, time-weighted mean {out['mean']:.4f} by hand;"
            f" gpuopt max {g.get('max')}, mean {g.get('mean', 0):.4f}"
        )
        hta_only = truth_q_hta.get(stream, {}).get("pending", {}).get("max")
        print(
            f"    pending max {pend['max']}, mean {pend['mean']:.4f} by hand (every launch);"
            f" {hta_only} counting only the launches HTA knows"
        )
        for peer in peers:
            q = peer.get("queue", {}).get(stream)
            if q:
                print(
                    f"    {peer['label']}: {q['points']} points (2 per operation), max {q['max']},"
                    f" min {q['min']}, mean over points {q['mean_of_points']:.4f}"
                )
    return truth_q


def launch_edges(ops: list[dict[str, Any]], in_graph: list[tuple[int, str | None]]) -> None:
    """Per launch API: operations in HTA's critical-path graph, with a launch edge or a kernel-kernel
    edge into them, and how many started after their stream had gone idle (the GPU waited for their
    launch: by hand)."""
    api_of = {o["correlation"]: o["api"] for o in ops}
    held: Counter[Any] = Counter()
    edges: Counter[tuple[Any, str | None]] = Counter()
    for corr, kind in in_graph:
        held[api_of.get(corr)] += 1
        edges[(api_of.get(corr), kind)] += 1
    waited: Counter[Any] = Counter()
    prev_end: dict[Any, int] = {}
    for o in sorted(ops, key=lambda o: o["start"]):
        before = prev_end.get(o["stream"])
        if o["launch"] is not None and before is not None and o["launch"] >= before:
            waited[o["api"]] += 1
        prev_end[o["stream"]] = max(before if before is not None else o["end"], o["end"])
    total = Counter(o["api"] for o in ops)
    for api in sorted(total, key=str):
        print(
            f"    {api}: {held[api]} of {total[api]} in HTA's graph, {edges[(api, 'KERNEL_LAUNCH_DELAY')]}"
            f" with a launch edge, {edges[(api, 'KERNEL_KERNEL_DELAY')]} with a kernel-kernel edge;"
            f" {waited[api]} started after their stream had gone idle (by hand)"
        )


def critical_section(
    path: Path, ops: list[dict[str, Any]], mine: dict[str, Any], peers: list[dict[str, Any]]
) -> tuple[int, int]:
    cp = mine["critical_path"]
    calls, waited = sync_waits(path, ops)
    span = cp["span_ns"]
    shares = ", ".join(
        f"{c.removesuffix('_ns')} {_pct(cp[c], span)}"
        for c in ("cpu_ns", "launch_ns", "gpu_compute_ns", "gpu_memory_ns", "sync_ns", "idle_ns")
    )
    print(
        f"critical path: {calls} synchronizing calls waited {waited} ns for GPU work (by hand);"
        f" gpuopt over {cp['steps']} steps, {span} ns: {shares}"
    )
    for peer in peers:
        c = peer.get("critical_path", {})
        if "failed" in peer or "failed" in c:
            print(f"  {peer.get('label', 'HTA')}: failed: {c.get('failed') or peer.get('failed')}")
            continue
        total = c["total_us"]
        lo, hi = peer["window_us"]
        parts = ", ".join(f"{k or '(none)'} {_pct(v, total)}" for k, v in c["by_bound_us"].items() if v)
        print(f"  {peer['label']}: path {total} µs of its {hi - lo} µs window: {parts}")
        launch_edges(ops, [(corr, kind) for corr, kind in c["gpu_ops"]])
    return calls, waited


def sequence_section(
    record: dict[str, Any], mine: dict[str, Any], peers: list[dict[str, Any]], args: argparse.Namespace
) -> Counter[tuple[str, ...]]:
    truth_grams = ngrams(record["ops"], 3)
    top = truth_grams.most_common(args.top)
    same = sum(1 for g, n in top if mine["ngrams"].get(" → ".join(g)) == n)
    print(
        f"sequences: {len(truth_grams)} distinct kernel 3-grams by hand, gpuopt {len(mine['ngrams'])};"
        f" counts equal for {same} of the {len(top)} most frequent"
    )
    patterns = op_patterns(record, args.hta_operator, args.min_pattern_len)
    print(
        f"  HTA's definition by hand (root op {args.hta_operator!r}, >= {args.min_pattern_len} kernel):"
        f" {sum(patterns.values())} instances in {len(patterns)} patterns, counts"
        f" {[n for _, n in patterns.most_common(5)]}"
    )
    for peer in peers:
        sq = peer.get("sequences", {})
        if "failed" in sq or "failed" in peer:
            print(f"  {peer.get('label', 'HTA')}: failed: {sq.get('failed') or peer.get('failed')}")
        elif sq:
            print(f"  {peer['label']}: counts {[p['count'] for p in sq['patterns']]} (top 5)")
    return patterns


def report(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    record = load(path)
    ops = record["ops"]
    kernels = [o for o in ops if o["cat"] == "kernel"]
    mine = gpuopt_side(path)
    peers = [hta_side(p, path, args, rounding) for p in args.hta_python for rounding in (True, False)]
    print(f"\n== {path.name}: {len(ops)} GPU operations ({len(kernels)} kernels)")
    by_api = Counter(o["api"] for o in ops)
    known = sum(n for api, n in by_api.items() if api in HTA_LAUNCHES)
    print("launched by: " + ", ".join(f"{api} {n}" for api, n in by_api.most_common()))
    print(f"  HTA's launch query knows {known} of {len(ops)}: the others are in no HTA queue or launch edge")
    truth_ns = time_section(kernels, mine, peers)
    truth_q = queue_section(ops, mine, peers)
    calls, waited = critical_section(path, ops, mine, peers)
    patterns = sequence_section(record, mine, peers, args)
    return {
        "ops": len(ops),
        "by_api": dict(by_api),
        "kernel_time_ns": truth_ns,
        "queue_truth": truth_q,
        "sync_calls": calls,
        "sync_waited_ns": waited,
        "gpuopt": mine,
        "hta": peers,
        "op_patterns": {" → ".join(k): v for k, v in patterns.most_common(10)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trace", type=Path, action="append", help="Kineto traces (default: the decodes)")
    parser.add_argument("--hta-python", action="append", default=[], help="a Python with HTA installed")
    parser.add_argument("--hta-operator", default="aten::linear", help="HTA's sequences root op")
    parser.add_argument("--min-pattern-len", type=int, default=1, help="HTA's min_pattern_len")
    parser.add_argument("--top", type=int, default=20, help="n-grams compared")
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args()
    if args.trace is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from fixture_data import unpacked

        args.trace = [Path(unpacked()) / t for t in TRACES]
    out = {str(t): report(t, args) for t in args.trace}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
