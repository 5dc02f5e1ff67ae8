"""Iterations of real captures against truth computed here from the files themselves (sqlite3 on the
export, the Kineto JSON), and detection without markers against the markers it replaces.

decode_eager.sqlite (recipes/decode.py, eager): NVTX ``prefill``, then 12 ``decode_step`` ranges. The
loop body launches two operations before each ``decode_step`` range (``pos`` copied to the GPU, the mask
kernel), so each range holds 139 kernels and one memcpy of the 142 operations one loop iteration
launches; detection finds the loop body (the unit after the longest launch pause). Both end every
iteration at the same operation, so completion-to-completion spans agree exactly.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import sqlite3
from pathlib import Path

import polars as pl
import pytest

from gpuopt import analyses, nsys, torch_trace

DECODE = "gpuopt/h200/decode/decode_eager.sqlite"
DECODE_TRACE = "gpuopt/h200/decode/decode_eager_trace.json.gz"
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def _ops(path: Path) -> list[tuple[str, int, int, int]]:
    """(kind, start, end, launch call start) of every GPU operation, in launch order."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    ops = []
    for table in GPU_TABLES:
        kind = table.rsplit("_", 1)[1].lower()
        ops += [
            (kind, s, e, c)
            for s, e, c in con.execute(
                f"SELECT o.start, o.end, r.start FROM {table} o JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                "ON r.correlationId = o.correlationId"
            )
        ]
    con.close()
    return sorted(ops, key=lambda o: (o[3], o[1]))


def _truth_by_ranges(path: Path) -> list[tuple[str, int, int, int]]:
    """Per NVTX range (time order): (text, kernels launched inside, last end, first start)."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    ranges = con.execute("SELECT text, start, end FROM NVTX_EVENTS ORDER BY start").fetchall()
    con.close()
    ops = _ops(path)
    out = []
    for text, start, end in ranges:
        inside = [o for o in ops if start <= o[3] < end]
        out.append(
            (
                text,
                sum(o[0] == "kernel" for o in inside),
                max(o[2] for o in inside),
                min(o[1] for o in inside),
            )
        )
    return out


@pytest.fixture(scope="module")
def without_nvtx(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of decode_eager.sqlite with NVTX_EVENTS emptied."""
    copy = tmp_path_factory.mktemp("nonvtx") / "decode_eager_no_nvtx.sqlite"
    shutil.copyfile(shared / DECODE, copy)
    con = sqlite3.connect(copy)
    con.execute("DELETE FROM NVTX_EVENTS")
    con.commit()
    con.execute("VACUUM")
    con.close()
    return copy


def test_decode_without_nvtx_yields_the_ranges_iterations(shared: Path, without_nvtx: Path) -> None:
    truth = _truth_by_ranges(shared / DECODE)
    assert [t[0] for t in truth] == ["prefill"] + ["decode_step"] * 12
    # Spans the ranges mark, completion to completion (the first: its own extent).
    ends = [t[2] for t in truth]
    marked_spans = [ends[0] - truth[0][3]] + [b - a for a, b in itertools.pairwise(ends)]

    result = analyses.iterations(nsys.open(without_nvtx))
    (facts,) = result.facts
    assert facts.used == "detected" and facts.marker is None
    (d,) = facts.detection
    # The repeating region starts at operation 136: the prefill's last four operations hold three
    # mismatches against the loop body's, within the tolerance of 142 // 32 = 4 per unit; the unit
    # (after the longest pause) starts 4 positions into it, at operation 140, the first of the loop.
    assert (d.operations, d.period_ops, d.regions, d.iterations, d.phase) == (1844, 142, 1, 12, 4)
    rows = result.table.filter(pl.col("source") == "detected").sort("row")
    assert rows["iteration"].to_list() == [None, *range(1, 13)]
    assert rows["odd"][0] == "before_first_repeat"
    # The prefill: the 136 kernels and 4 memsets launched in the range; each iteration: the range's 139
    # kernels and memcpy, and the memcpy and kernel the loop launches before the range.
    assert rows["kernels"].to_list() == [136] + [140] * 12
    assert rows["memory_ops"].to_list() == [4] + [2] * 12
    assert rows["end_ns"].to_list() == ends
    spans = rows["span_ns"].to_list()
    assert spans == marked_spans
    assert all(abs(s - m) <= 0.01 * m for s, m in zip(spans, marked_spans, strict=True))


def test_graph_level_decode_without_nvtx_yields_its_twelve_steps(shared: Path, tmp_path: Path) -> None:
    # The graph-level export: a prefill of 4 layers x 32 brief kernels (137 kernels, 0.58 ms of GPU time),
    # then 12 decode steps of one CUDA graph execution each (2.43 ms). By operations covered the layers won
    # (3 "iterations" inside the prefill); each operation weighs its GPU time, so the steps win.
    path = shared / "h200/graphs/graph_graph.sqlite"
    marked = [
        row
        for row in analyses.iterations(nsys.open(path))
        .table.filter(pl.col("source") == "nvtx")
        .iter_rows(named=True)
        if row["name"] == "decode_step"
    ]
    copy = tmp_path / "graph_no_nvtx.sqlite"
    shutil.copyfile(path, copy)
    con = sqlite3.connect(copy)
    con.execute("DELETE FROM NVTX_EVENTS")
    con.commit()
    con.close()
    result = analyses.iterations(nsys.open(copy))
    (facts,) = result.facts
    assert facts.used == "detected"
    rows = result.table.filter(pl.col("source") == "detected").sort("row")
    assert rows["iteration"].to_list() == [None, *range(1, 13)]
    assert rows["odd"][0] == "before_first_repeat"
    spans = rows["span_ns"].to_list()[1:]
    assert spans == [r["span_ns"] for r in marked]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        executions = db.execute(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE ORDER BY start"
        ).fetchall()
    # Every detected step holds one graph execution: its GPU busy time is at least that execution's.
    busy = rows["gpu_busy_ns"].to_list()[1:]
    assert len(executions) == 12 and all(b >= e - s for b, (s, e) in zip(busy, executions, strict=True))


def test_decode_with_nvtx_reports_both_sources_and_their_agreement(shared: Path) -> None:
    truth = _truth_by_ranges(shared / DECODE)
    result = analyses.iterations(nsys.open(shared / DECODE))
    (facts,) = result.facts
    assert facts.used == "marker"
    assert facts.marker is not None
    assert (facts.marker.name, facts.marker.kind, facts.marker.instances, facts.marker.chosen_by) == (
        "decode_step",
        "nvtx",
        12,
        "most_time",
    )
    # The 24 operations between the ranges (12 memcpys of `pos`, 12 mask kernels) are in no row.
    assert facts.marker.unattributed_ops == 24
    marked = result.table.filter(pl.col("source") == "nvtx").sort("row")
    assert marked["name"].to_list() == [t[0] for t in truth]
    assert marked["odd"][0] == "other_range"
    assert marked["kernels"].to_list() == [t[1] for t in truth] == [136] + [139] * 12
    assert marked["iteration"].to_list() == [None, *range(1, 13)]
    (agreement,) = facts.agreement
    assert (agreement.marker_iterations, agreement.detected_iterations, agreement.paired_rows) == (12, 12, 13)
    assert agreement.max_span_diff_pct == 0.0
    assert agreement.kernel_count_differs == 12
    detected = result.table.filter(pl.col("source") == "detected").sort("row")
    assert detected["span_ns"].to_list() == marked["span_ns"].to_list()


def test_per_op_ranges_are_no_step_marker(shared: Path) -> None:
    """A capture whose NVTX ranges are PyTorch ops (`aten::view, op_id = 314290`) has no step marker:
    the group covering the most time was `aten::is_nonzero, op_id = *`, 2 ranges among 2,7xx on their
    thread, so 2 "steps" and thousands of odd rows (and a 1.45 GB critical path). Now a group must be
    half its threads' top-level ranges or time; the steps are then detected. Named, it is still used."""
    path = shared / "public/nsys/h100_2gpu_1s.sqlite"
    (facts,) = analyses.iterations(nsys.open(path)).facts
    assert (facts.used, facts.marker) == ("detected", None)
    (named,) = analyses.iterations(nsys.open(path), marker="aten::is_nonzero, op_id = *").facts
    assert named.marker is not None
    assert (named.used, named.marker.instances, named.marker.chosen_by) == ("marker", 2, "option")


def test_stragglers_by_the_stated_rule(shared: Path) -> None:
    rows = analyses.iterations(nsys.open(shared / DECODE)).table.filter(
        pl.col("source") == "detected", pl.col("iteration").is_not_null()
    )
    spans = sorted(rows["span_ns"].to_list())
    median = spans[(len(spans) - 1) // 2]
    mad = sorted(abs(s - median) for s in spans)[(len(spans) - 1) // 2]
    limit = max(median + 3 * 1.4826 * mad, median * 1.05)
    expected = ["straggler" if s > limit else None for s in rows["span_ns"].to_list()]
    assert rows["odd"].to_list() == expected
    assert expected.count("straggler") == 3


def _kineto(path: Path) -> list[dict[str, object]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        events: list[dict[str, object]] = json.load(f)["traceEvents"]
    return events


def test_kineto_decode_six_steps_detected(shared: Path) -> None:
    """The Kineto trace of the same loop (6 steps, no record_function around them): the prefill's 136
    kernels and 4 memsets, then 6 loop bodies of 140 kernels and 2 memcpys."""
    events = _kineto(shared / DECODE_TRACE)
    kernels = sum(1 for e in events if e.get("cat") == "kernel")
    result = analyses.iterations(torch_trace.open(shared / DECODE_TRACE))
    (facts,) = result.facts
    assert facts.used == "detected"
    rows = result.table.sort("row")
    assert rows["iteration"].to_list() == [None, *range(1, 7)]
    assert rows["kernels"].to_list() == [136] + [140] * 6
    assert sum(rows["kernels"].to_list()) == kernels == 976
    assert rows["memory_ops"].to_list() == [4] + [2] * 6
