"""Critical path, queues, sequences and marker-free iterations of real captures, against truth computed
here from the files themselves (sqlite3 on the exports, the Kineto JSON), independently of the engine.

graph_graph.sqlite / graph_node.sqlite (recipes/decode.py, torch.compile reduce-overhead, H200): NVTX
``prefill`` then 12 ``decode_step`` ranges, each replaying one CUDA graph (graph-level: one row per graph
execution; node-level: its 52 kernels). hta_ns_resolution (HTA's test data, a V100/A100 training trace):
ProfilerStep#101..105.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import sqlite3
from collections import Counter
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from gpuopt import analyses, nsys, torch_trace

GRAPH = "h200/graphs/graph_graph.sqlite"
NODE = "h200/graphs/graph_node.sqlite"
HTA_STEPS = "public/torch/hta_ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
#: (table, node kind) of every GPU operation an nsys export records.
OPS = (
    ("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"),
    ("CUPTI_ACTIVITY_KIND_MEMSET", "memset"),
    ("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "graph"),
)


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _ops(path: Path) -> list[dict[str, int | str]]:
    """Every GPU operation with its launch call (start, end, correlation id), in launch order."""
    con = _connect(path)
    present = _tables(con)
    ops: list[dict[str, int | str]] = []
    for table, node in OPS:
        if table not in present:
            continue
        name = "(SELECT value FROM StringIds WHERE id = o.demangledName)" if node == "kernel" else "''"
        rows = con.execute(
            f"SELECT o.start, o.end, o.streamId, o.correlationId, r.start, r.end, {name} FROM {table} o "
            "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = o.correlationId"
        )
        for start, end, stream, corr, call_start, call_end, text in rows:
            ops.append(
                dict(node=node, start=start, end=end, stream=stream, corr=corr, call_start=call_start)
                | dict(call_end=call_end, name=text)
            )
    con.close()
    return sorted(ops, key=lambda o: (o["call_start"], o["start"]))


@pytest.fixture(scope="module")
def node_without_nvtx(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("nonvtx") / "graph_node_no_nvtx.sqlite"
    shutil.copyfile(shared / NODE, copy)
    con = sqlite3.connect(copy)
    con.execute("DELETE FROM NVTX_EVENTS")
    con.commit()
    con.close()
    return copy


def test_node_level_decode_without_nvtx_yields_its_twelve_steps(
    shared: Path, node_without_nvtx: Path
) -> None:
    """Truth from the export: the 12 decode_step ranges, each ending when the last operation launched in
    it ends; detection on a copy without NVTX finds 12 iterations ending at the same operations."""
    con = _connect(shared / NODE)
    ranges = con.execute("SELECT text, start, end FROM NVTX_EVENTS ORDER BY start").fetchall()
    con.close()
    assert [r[0] for r in ranges] == ["prefill"] + ["decode_step"] * 12
    ops = _ops(shared / NODE)
    ends = [max(int(o["end"]) for o in ops if s <= int(o["call_start"]) < e) for _, s, e in ranges]
    kernels = [
        sum(o["node"] == "kernel" and s <= int(o["call_start"]) < e for o in ops) for _, s, e in ranges
    ]
    assert kernels == [136] + [52] * 12

    result = analyses.iterations(nsys.open(node_without_nvtx))
    (facts,) = result.facts
    assert (facts.used, facts.marker) == ("detected", None)
    (d,) = facts.detection
    assert (d.operations, d.period_ops, d.iterations) == (len(ops), 58, 12) == (836, 58, 12)
    rows = result.table.sort("row")
    assert rows["iteration"].to_list() == [None, *range(1, 13)]
    assert rows["end_ns"].to_list() == ends
    spans = [ends[0] - min(int(o["start"]) for o in ops)] + [b - a for a, b in itertools.pairwise(ends)]
    assert rows["span_ns"].to_list() == spans  # completion to completion: exact, not merely within 1 %
    # Each detected iteration: the step's 52 kernels and the mask kernel launched before the range.
    assert rows["kernels"].to_list() == [136] + [53] * 12


def _kineto(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt") as f:
        # Decimal: epoch microseconds with a fraction do not fit a float's 53 bits to the nanosecond.
        events: list[dict[str, object]] = json.load(f, parse_float=Decimal)["traceEvents"]
    return events


def test_kineto_profiler_steps_and_detection_agree(shared: Path) -> None:
    events = _kineto(shared / HTA_STEPS)
    steps = sorted(
        (
            e
            for e in events
            if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation"
        ),
        key=lambda e: Decimal(str(e["ts"])),
    )
    assert [e["name"] for e in steps] == [f"ProfilerStep#{n}" for n in range(101, 106)]
    kernels = sum(1 for e in events if e.get("cat") == "kernel")

    result = analyses.iterations(torch_trace.open(shared / HTA_STEPS))
    (facts,) = result.facts
    assert facts.used == "marker" and facts.marker is not None
    assert (facts.marker.name, facts.marker.kind, facts.marker.instances) == (
        "ProfilerStep#*",
        "profiler_step",
        5,
    )
    marked = result.table.filter(pl.col("source") == "profiler_step").sort("row")
    assert marked["name"].to_list() == [e["name"] for e in steps]
    # The steps' starts, µs in the file, ns here, from the first step (the trace's first complete event).
    t0 = Decimal(str(steps[0]["ts"]))
    starts = [int((Decimal(str(e["ts"])) - t0) * 1000) for e in steps]
    assert marked["host_start_ns"].to_list() == starts == [0, 35153734, 107267211, 202995667, 298580311]
    assert sum(marked["kernels"].to_list()) == kernels == 4350
    detected = result.table.filter(pl.col("source") == "detected").sort("row")
    assert detected["iteration"].to_list() == [1, 2, 3, 4, 5]
    assert detected["kernels"].to_list() == marked["kernels"].to_list() == [870] * 5
    assert detected["end_ns"].to_list() == marked["end_ns"].to_list()
    (agreement,) = facts.agreement
    assert (agreement.marker_iterations, agreement.detected_iterations, agreement.max_span_diff_pct) == (
        5,
        5,
        0.0,
    )


def test_critical_path_edges_are_the_exports_events_and_sum_to_each_span(shared: Path) -> None:
    """Every stretch of every step's path is checked against the export: operations by their exact
    start and end, launch edges by the correlation id joining call and operation, stream order by the
    stream's previous operation; the stretches tile the step and the six categories sum to its span."""
    result = analyses.critical_path(nsys.open(shared / GRAPH))
    steps = result.steps.filter(pl.col("source") == "nvtx").sort("row")
    assert steps.height == 13
    categories = ["cpu_ns", "launch_ns", "gpu_compute_ns", "gpu_memory_ns", "sync_ns", "idle_ns"]
    assert (steps.select(pl.sum_horizontal(categories)).to_series() == steps["span_ns"]).all()

    ops = _ops(shared / GRAPH)
    by_time = {(o["start"], o["end"]): o for o in ops}
    calls = {(o["call_start"], o["call_end"]): o for o in ops}
    for step in steps.iter_rows(named=True):
        edges = result.edges.filter(pl.col("row") == step["row"]).sort("seq")
        assert edges.height == step["segments"]
        assert edges["start_ns"][0] == step["start_ns"] and edges["end_ns"][-1] == step["end_ns"]
        assert edges["start_ns"][1:].to_list() == edges["end_ns"][:-1].to_list()
        assert int(edges["duration_ns"].sum()) == step["span_ns"]
        for cat in categories:
            got = int(edges.filter(pl.col("category") == cat.removesuffix("_ns"))["duration_ns"].sum())
            assert got == step[cat]
        previous = None
        for e in edges.iter_rows(named=True):
            if e["node"] in ("kernel", "memcpy", "memset", "graph"):
                op = by_time[(e["start_ns"], e["end_ns"])]
                assert (op["node"], op["stream"]) == (e["node"], e["stream_id"])
                if e["edge"] == "launch":  # the call just before on the path launched this operation
                    assert (
                        previous is not None
                        and calls[(previous["start"], previous["end"])]["corr"] == op["corr"]
                    )
                previous = None
            elif e["node"] == "call" and e["category"] == "launch":
                previous = {"start": e["start_ns"], "end": e["end_ns"]}
    # Step 3, by hand from the export: graph execution 22,123,282-22,326,833 (203,551 ns) launched by the
    # cudaGraphLaunch ending 1,157 ns before it, then a 704 ns device-to-device copy on stream 7.
    three = steps.filter(pl.col("row") == 3).row(0, named=True)
    assert (three["span_ns"], three["gpu_compute_ns"], three["gpu_memory_ns"]) == (541099, 203551, 1440)
    graph = [o for o in ops if o["node"] == "graph" and o["start"] == 22123282]
    assert [(o["end"], o["call_end"]) for o in graph] == [(22326833, 22122125)]


def _sweep(intervals: list[tuple[int, int]], lo: int, hi: int) -> tuple[int, float, int]:
    """Max depth, time-weighted mean depth over [lo, hi), and the time at depth 0, by sweeping."""
    events = sorted(
        [(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1])
    )
    depth, at, best, area, empty = 0, lo, 0, 0, 0
    for t, step in events:
        t = min(max(t, lo), hi)
        area += depth * (t - at)
        empty += (t - at) if depth == 0 else 0
        at = t
        depth += step
        best = max(best, depth)
    return best, area / (hi - lo), empty


def test_queue_depth_equals_a_sweep_over_the_exports_launches(shared: Path) -> None:
    ops = _ops(shared / GRAPH)
    assert {o["stream"] for o in ops} == {7}
    lo, hi = min(int(o["start"]) for o in ops), max(int(o["end"]) for o in ops)
    outstanding = [(int(o["call_start"]), int(o["end"])) for o in ops]
    max_depth, mean_depth, _ = _sweep(outstanding, lo, hi)
    _, _, idle = _sweep([(int(o["start"]), int(o["end"])) for o in ops], lo, hi)
    q = analyses.queue(nsys.open(shared / GRAPH), series=True)
    row = q.table.filter(pl.col("stream_id") == 7).row(0, named=True)
    assert (row["operations"], row["window_start_ns"], row["window_end_ns"]) == (224, lo, hi)
    assert (row["max_depth"], row["mean_depth"]) == (max_depth, pytest.approx(mean_depth, rel=1e-12))
    assert row["busy_ns"] == (hi - lo) - idle
    assert row["busy_ns"] + row["launch_bound_idle_ns"] + row["queued_idle_ns"] == row["window_ns"]
    # A small window by hand: the first four operations (two outstanding at most).
    series = q.series.filter(pl.col("stream_id") == 7).sort("start_ns")
    first = [(int(o["call_start"]), int(o["end"])) for o in ops[:4]]
    for s in series.head(12).iter_rows(named=True):
        mid = (s["start_ns"] + s["end_ns"]) // 2
        depth = sum(a <= mid < b for a, b in outstanding)
        assert s["depth"] == depth, s
        assert s["running"] == int(any(int(o["start"]) <= mid < int(o["end"]) for o in ops))
    assert max(b for _, b in first) <= series["end_ns"][11]


def test_sequences_count_the_exports_kernel_ngrams(shared: Path) -> None:
    """3-grams of the kernels and graph executions in launch order, counted here."""
    ops = [o for o in _ops(shared / GRAPH) if o["node"] in ("kernel", "graph")]
    con = _connect(shared / GRAPH)
    graph_ids = dict(con.execute("SELECT correlationId, graphId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"))
    con.close()
    names = [f"[CUDA graph {graph_ids[o['corr']]}]" if o["node"] == "graph" else str(o["name"]) for o in ops]
    grams: Counter[tuple[str, ...]] = Counter()
    time: Counter[tuple[str, ...]] = Counter()
    for i in range(len(names) - 2):
        key = tuple(names[i : i + 3])
        grams[key] += 1
        time[key] += sum(int(o["end"]) - int(o["start"]) for o in ops[i : i + 3])
    frame = analyses.sequences(nsys.open(shared / GRAPH), n=3).filter(pl.col("kind") == "ngram")
    assert frame.height == len(grams)
    for row in frame.iter_rows(named=True):
        key = tuple(row["kernels"].split(" → "))
        assert (row["count"], row["gpu_time_ns"]) == (grams[key], time[key]), key
    top = frame.row(0, named=True)
    assert top["count"] == max(grams.values()) == 11
