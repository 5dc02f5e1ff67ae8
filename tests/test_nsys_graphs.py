"""CUDA graphs in nsys exports (issue 12): the H200 decode captures in both trace modes, against
NVIDIA's `nsys stats` CSVs and against unions computed here from the SQLite rows; the public 2-GPU
H100 export for CUDA's own overhead; bad input built from copies of the real files."""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import nsys
from gpuopt._profile_sources import load
from gpuopt.models.nsys import Distribution

MODES = ("graph_graph", "graph_node")
REPORTS = (
    "cuda_gpu_kern_sum",
    "cuda_api_sum",
    "cuda_gpu_mem_time_sum",
    "nvtx_sum",
    "cuda_kern_exec_sum",
    "nvtx_kern_sum",
)


def _path(shared: Path, mode: str) -> Path:
    return shared / "h200" / "graphs" / f"{mode}.sqlite"


def _rows(path: Path, query: str) -> list[tuple[int, ...]]:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return [tuple(r) for r in con.execute(query).fetchall()]
    finally:
        con.close()


def _union(spans: list[tuple[int, ...]]) -> int:
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total


GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
GRAPH_ROWS = "SELECT start, end FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"


def _gpu_spans(path: Path, graphs: bool) -> list[tuple[int, ...]]:
    spans = [s for t in GPU_TABLES for s in _rows(path, f"SELECT start, end FROM {t}")]
    return spans + (_rows(path, GRAPH_ROWS) if graphs else [])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", REPORTS)
def test_stats_equal_nsys_on_graph_captures(shared: Path, mode: str, name: str) -> None:
    """gpuopt's stats of both captures equal NVIDIA's, cell for cell."""
    path = _path(shared, mode)
    ours = list(csv.reader(io.StringIO(nsys.open(path).stats_csv(name))))
    theirs = list(csv.reader(io.StringIO((path.parent / f"{mode}_{name}.csv").read_text())))
    assert ours == theirs


@pytest.mark.parametrize("mode", MODES)
def test_busy_time_is_the_union_of_all_gpu_work(shared: Path, mode: str) -> None:
    """Busy = union of kernels, copies and graph executions, to the nanosecond, in both modes."""
    path = _path(shared, mode)
    spans = _gpu_spans(path, graphs=mode == "graph_graph")
    t = nsys.open(path).timeline()
    [dev] = t.devices
    assert dev.busy_ns == _union(spans)
    assert (dev.span_start_ns, dev.span_end_ns) == (min(s for s, _ in spans), max(e for _, e in spans))
    assert dev.idle_ns == dev.span_ns - dev.busy_ns == dev.gaps.total_ns
    assert t.coverage == []


def test_graph_level_busy_time_counts_what_nvidia_gpu_trace_leaves_out(shared: Path) -> None:
    """NVIDIA's cuda_gpu_trace lists no graph execution (212 rows: 148 kernels, 60 memcpys, 4 memsets);
    busy time is the union of those rows and the 12 GRAPH_TRACE rows: 22.8 %, not 4.8 %."""
    path = _path(shared, "graph_graph")
    with (path.parent / "graph_graph_cuda_gpu_trace.csv").open() as f:
        trace = [
            (int(r["Start (ns)"]), int(r["Start (ns)"]) + int(r["Duration (ns)"])) for r in csv.DictReader(f)
        ]
    assert len(trace) == 212
    graphs = _rows(path, GRAPH_ROWS)
    [dev] = nsys.open(path).timeline().devices
    assert _union(trace) == 646_683
    assert dev.busy_ns == _union(trace + graphs) == 3_076_650
    assert dev.graph_executions == 12
    assert dev.graph_busy_ns == sum(e - s for s, e in graphs) == 2_429_967
    assert round(dev.busy_pct, 1) == 22.8


def test_graph_executions_equal_the_graph_trace_rows(shared: Path) -> None:
    path = _path(shared, "graph_graph")
    rows = _rows(path, "SELECT end - start, graphId, graphExecId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    g = nsys.open(path).graphs()
    assert (g.trace_mode, g.executions, g.unlinked_executions) == ("graph", 12, 0)
    [f] = g.graphs
    assert {(f.graph_id, f.graph_exec_id)} == {(r[1], r[2]) for r in rows}
    durations = sorted(r[0] for r in rows)
    assert f.gpu_time.count == f.executions == f.launches == len(rows)
    assert f.gpu_time.total_ns == sum(durations)
    assert (f.gpu_time.median_ns, f.gpu_time.p90_ns, f.gpu_time.max_ns) == (
        durations[5],
        durations[10],
        durations[11],
    )
    host = sorted(
        r[0]
        for r in _rows(
            path,
            "SELECT r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
            "JOIN CUPTI_ACTIVITY_KIND_GRAPH_TRACE g ON g.correlationId = r.correlationId",
        )
    )
    assert f.host_time.total_ns == sum(host) and f.host_time.max_ns == host[-1]


def test_node_level_executions_group_kernels_by_their_graph_launch(shared: Path) -> None:
    path = _path(shared, "graph_node")
    rows = _rows(
        path,
        "SELECT max(end) - min(start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "WHERE graphNodeId IS NOT NULL GROUP BY correlationId",
    )
    g = nsys.open(path).graphs()
    assert (g.trace_mode, g.executions) == ("node", 12)
    [f] = g.graphs
    assert f.gpu_time.total_ns == sum(r[0] for r in rows) == 2_500_400
    assert f.kernels_per_execution is not None
    assert f.kernels_per_execution.total == sum(r[1] for r in rows) == 624


def test_cli_graphs_command_and_summary_block(shared: Path) -> None:
    path = _path(shared, "graph_graph")
    run = gpuopt("nsys", "graphs", str(path), "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["schema"] == "gpuopt.nsys.graphs/v1"
    assert doc["data"]["graphs"]["graphs"][0]["executions"] == 12
    human = gpuopt("nsys", "graphs", str(path))
    assert "CUDA graphs (graph-level trace): 1 graphs, 12 executions" in human.stdout
    summary = gpuopt("nsys", "summary", str(path), "--json").json()
    assert summary["data"]["graphs"]["executions"] == 12
    assert "CUDA graphs" in gpuopt("nsys", "summary", str(path)).stdout


def test_kernel_tables_of_a_graph_level_trace_are_flagged(shared: Path) -> None:
    """Kernels inside graph executions are not listed: the kernel table says so (JSON and human)."""
    path = _path(shared, "graph_graph")
    doc = gpuopt("nsys", "kernels", str(path), "--json").json()
    [flag] = doc["data"]["coverage"]
    assert (flag["table"], flag["rows"]) == ("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", 12)
    assert "INCOMPLETE" in gpuopt("nsys", "kernels", str(path)).stdout
    assert (
        gpuopt("nsys", "kernels", str(_path(shared, "graph_node")), "--json").json()["data"]["coverage"] == []
    )


def test_command_buffer_full_is_reported_not_subtracted(shared: Path) -> None:
    """Defect 2: 198 'Command buffer full (CUDA)' rows (912 ms) are CUDA's, not the profiler's."""
    path = shared / "public" / "nsys" / "h100_2gpu_1s.sqlite"
    run = gpuopt("nsys", "timeline", str(path))
    assert run.code == 0, run.stderr
    assert (
        "Profiler overhead (attributed to the profiler, subtracted above): recorded, 0 intervals"
        in run.stdout
    )
    assert "Command buffer full (CUDA)" in run.stdout
    t = nsys.open(path).timeline()
    assert [(c.overhead_type, c.intervals, c.total_ns) for c in t.cuda_overhead] == [
        ("Command buffer full (CUDA)", 198, 911_969_806)
    ]
    for launch in t.launch:
        assert launch.api_time_excl_overhead.total_ns == launch.api_time.total_ns


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copyfile(src, dst)
    return dst


def _execute(path: Path, *sql: str) -> None:
    con = sqlite3.connect(path)
    for statement in sql:
        con.execute(statement)
    con.commit()
    con.close()


def test_execution_without_launch_call_is_counted_unlinked(shared: Path, tmp_path: Path) -> None:
    path = _copy(_path(shared, "graph_graph"), tmp_path)
    _execute(path, "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 9014")
    g = nsys.open(path).graphs()
    assert (g.executions, g.unlinked_executions) == (12, 1)
    [f] = g.graphs
    assert (f.launches, f.executions, f.unlinked_executions, f.gpu_time.count) == (11, 12, 1, 12)


def test_graph_level_trace_with_no_kernels(shared: Path, tmp_path: Path) -> None:
    path = _copy(_path(shared, "graph_graph"), tmp_path)
    _execute(path, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL")
    report = nsys.open(path)
    [dev] = report.timeline().devices
    assert (dev.kernels, dev.graph_executions) == (0, 12)
    assert dev.busy_ns == _union(_gpu_spans(path, graphs=True))
    assert report.graphs().executions == 12


def test_zero_and_negative_graph_durations(shared: Path, tmp_path: Path) -> None:
    zero = _copy(_path(shared, "graph_graph"), tmp_path)
    _execute(zero, "UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET end = start WHERE correlationId = 9014")
    [f] = nsys.open(zero).graphs().graphs
    assert (f.executions, f.gpu_time.min_ns) == (12, 0)
    neg = tmp_path / "neg" / "graph_graph.sqlite"
    neg.parent.mkdir()
    shutil.copyfile(zero, neg)
    _execute(neg, "UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET end = start - 5 WHERE correlationId = 9086")
    for command in ("graphs", "timeline"):
        run = gpuopt("nsys", command, str(neg), "--json")
        assert run.code == 2, run.stdout
        assert run.json()["errors"][0]["code"] == "nsys_interval_inverted"


def test_unknown_gpu_activity_table_is_a_coverage_flag(shared: Path, tmp_path: Path) -> None:
    path = _copy(_path(shared, "graph_node"), tmp_path)
    _execute(
        path,
        "CREATE TABLE CUPTI_ACTIVITY_KIND_FUTURE_WORK (start INTEGER, end INTEGER, deviceId INTEGER, "
        "streamId INTEGER)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_FUTURE_WORK VALUES "
        "(20000000, 20001000, 0, 7), (20002000, 20003000, 0, 7)",
    )
    doc = gpuopt("nsys", "timeline", str(path), "--json").json()
    [flag] = doc["data"]["timeline"]["coverage"]
    assert (flag["table"], flag["rows"]) == ("CUPTI_ACTIVITY_KIND_FUTURE_WORK", 2)
    human = gpuopt("nsys", "timeline", str(path)).stdout
    assert "INCOMPLETE" in human and "CUPTI_ACTIVITY_KIND_FUTURE_WORK (2 rows)" in human
    gaps = gpuopt("nsys", "gaps", str(path), "--json").json()
    assert [c["table"] for c in gaps["data"]["coverage"]] == ["CUPTI_ACTIVITY_KIND_FUTURE_WORK"]


@pytest.mark.parametrize("mode", MODES)
def test_summary_reads_timeline_and_graph_facts_once_with_the_same_answers(shared: Path, mode: str) -> None:
    # `gpuopt nsys summary` takes both from one read of the operations; they equal the two reads apart.
    report = nsys.open(_path(shared, mode))
    timeline, graphs = report.timeline_and_graphs()
    assert timeline == report.timeline()
    assert graphs == report.graphs()
    want_mode = {"graph_graph": "graph", "graph_node": "node"}[mode]
    assert (graphs.trace_mode, graphs.executions) == (want_mode, 12)
    doc = gpuopt("nsys", "summary", str(_path(shared, mode)), "--json").json()["data"]
    assert doc["graphs"]["executions"] == 12
    assert doc["timeline"] == timeline.model_dump(mode="json")


# The graph executions launched inside a decode_step range, by hand: GRAPH_TRACE joined to the
# cudaGraphLaunch call (correlationId), the call inside a decode_step range on its own thread.
DECODE_GRAPHS = (
    "SELECT count(*), sum(g.end - g.start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE g "
    "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId "
    "JOIN NVTX_EVENTS n ON n.globalTid = r.globalTid AND n.start <= r.start AND r.end <= n.end "
    "WHERE n.text = 'decode_step'"
)


def test_graph_executions_count_in_the_nvtx_range_that_launched_them(shared: Path) -> None:
    """decode_step launched no kernel one by one and 12 graph executions, 2,429,967 ns: gpuopt's NVTX
    table carries them in graph_* columns (kernel_* stays kernels), by range and by instance."""
    path = _path(shared, "graph_graph")
    assert _rows(path, DECODE_GRAPHS) == [(12, 2_429_967)]
    report = nsys.open(path)
    ranges = {r["range"]: r for r in report.nvtx().iter_rows(named=True)}
    decode = ranges[":decode_step"]
    assert (decode["kernels"], decode["kernel_inclusive_ns"], decode["kernel_exclusive_ns"]) == (0, 0, 0)
    assert (decode["graph_executions"], decode["graph_inclusive_ns"], decode["graph_exclusive_ns"]) == (
        12,
        2_429_967,
        2_429_967,
    )
    # gpu_ops and the projection already counted the executions: 12 graphs + 48 memcpys.
    assert decode["gpu_ops"] == 60
    assert ranges[":prefill"]["graph_executions"] == 0
    assert report.nvtx().row(0, named=True)["range"] == ":decode_step"  # ordered by kernel + graph time
    per = report.nvtx(per_instance=True).filter(range=":decode_step")
    assert per["graph_executions"].to_list() == [1] * 12
    assert per["graph_inclusive_ns"].sum() == 2_429_967
    # nsys' own report is unchanged: it lists kernels only (oracle test above), none for decode_step.
    kern = report.stats("nvtx_kern_sum")
    assert ":decode_step" not in kern["range"].to_list()


def test_nvtx_selection_keeps_the_graph_executions_launched_inside(shared: Path) -> None:
    """--nvtx decode_step keeps the 12 executions (timeline, nvtx table, graphs, CLI)."""
    path = _path(shared, "graph_graph")
    report = nsys.open(path)
    [dev] = report.timeline(nvtx="decode_step").devices
    assert (dev.graph_executions, dev.graph_busy_ns) == (12, 2_429_967)
    assert report.graphs(nvtx="decode_step").executions == 12
    only = report.nvtx(nvtx="decode_step")
    assert only.filter(range=":decode_step")["graph_inclusive_ns"].to_list() == [2_429_967]
    assert report.graphs(nvtx="prefill").executions == 0
    doc = gpuopt("nsys", "timeline", str(path), "--nvtx", "decode_step", "--json").json()
    assert doc["data"]["timeline"]["devices"][0]["graph_executions"] == 12


def test_profile_diff_by_nvtx_counts_graph_executions(shared: Path) -> None:
    """profile diff --by nvtx reads kernel + graph-execution time per range: decode_step is 2,429,967 ns
    on the graph-level export (it was 0), prefill its kernels' time."""
    path = _path(shared, "graph_graph")
    table = {r["key"]: r for r in load(path, "nvtx").table.iter_rows(named=True)}
    assert (table[":decode_step"]["count"], table[":decode_step"]["total_ns"]) == (12, 2_429_967)
    prefill = nsys.open(path).nvtx().filter(range=":prefill")["kernel_inclusive_ns"].item()
    assert table[":prefill"]["total_ns"] == prefill > 0


def test_median_of_an_even_count_is_the_lower_middle_value(shared: Path) -> None:
    """gpuopt's distributions take the nearest rank: of the 12 cudaGraphLaunch host times the 6th
    (24,469 ns), not the mean of the 6th and 7th (25,558.5 ns, which no call took); the schema says so
    where the field is described."""
    path = _path(shared, "graph_graph")
    host = sorted(
        r[0]
        for r in _rows(
            path,
            "SELECT r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
            "JOIN CUPTI_ACTIVITY_KIND_GRAPH_TRACE g ON g.correlationId = r.correlationId",
        )
    )
    assert len(host) == 12 and (host[5], host[6]) == (24_469, 26_648)
    [f] = nsys.open(path).graphs().graphs
    assert f.host_time.median_ns == 24_469
    assert "lower of the two middle values" in str(Distribution.model_fields["median_ns"].description)


def _objects_named_ns(doc: object, at: str = "") -> list[str]:
    """Every object-valued (or list-of-objects) field whose name ends in _ns (a list of ns is fine)."""
    found: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            objects = value if isinstance(value, list) else [value]
            if key.endswith("_ns") and any(isinstance(v, dict) for v in objects):
                found.append(f"{at}.{key}")
            found += _objects_named_ns(value, f"{at}.{key}")
    elif isinstance(doc, list):
        for item in doc:
            found += _objects_named_ns(item, f"{at}[]")
    return found


@pytest.mark.parametrize("mode", MODES)
def test_distribution_objects_are_named_without_a_unit(shared: Path, mode: str) -> None:
    """A distribution holds a count and ns fields: its name carries no unit (gpu_time, host_time,
    launch_latency, queue_delay, node_gap, kernel_time, api_time); kernels_per_execution holds counts."""
    path = str(_path(shared, mode))
    for command in ("graphs", "summary", "timeline"):
        doc = gpuopt("nsys", command, path, "--json").json()["data"]
        assert _objects_named_ns(doc) == [], command
    graph = gpuopt("nsys", "graphs", path, "--json").json()["data"]["graphs"]["graphs"][0]
    assert {"gpu_time", "host_time", "launch_latency"} <= set(graph)
    if mode == "graph_node":
        assert graph["kernels_per_execution"] == {
            "count": 12,
            "total": 624,
            "min": 52,
            "median": 52,
            "p90": 52,
            "max": 52,
            "mean": 52.0,
        }
    torch = gpuopt("torch", "summary", str(shared / "h200/graphs/graph_trace.json"), "--json").json()
    assert _objects_named_ns(torch["data"]) == []


SYNC_CALLS = (
    "SELECT s.value, count(*), sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
    "JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE '%Synchronize%' GROUP BY s.value ORDER BY s.value"
)


@pytest.mark.parametrize("command", ["summary", "timeline"])
def test_host_blocked_includes_device_synchronize(shared: Path, command: str) -> None:
    """nsys 2025.3.2 records no synchronization row for the 13 cudaDeviceSynchronize calls (its one
    "Context sync" row names correlationId 9825, a call the capture stopped before recording): host
    blocked time takes them by name, 1,546,206 ns, beside the 12 cudaStreamSynchronize (73,118 ns)."""
    path = _path(shared, "graph_graph")
    assert _rows(path, SYNC_CALLS) == [
        ("cudaDeviceSynchronize_v3020", 13, 1_546_206),
        ("cudaStreamSynchronize_v3020", 12, 73_118),
    ]
    assert _rows(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 9825") == [
        (0,)
    ]
    doc = gpuopt("nsys", command, str(path), "--json").json()["data"]["timeline"]
    host = {h["api_name"]: h for h in doc["host_sync"]}
    device = host["cudaDeviceSynchronize"]
    assert (device["device_id"], device["calls"], device["recorded_calls"], device["blocked_ns"]) == (
        0,
        13,
        0,
        1_546_206,
    )
    stream = host["cudaStreamSynchronize"]
    assert (stream["calls"], stream["recorded_calls"], stream["blocked_ns"]) == (12, 12, 73_118)
    [context] = [s for s in doc["synchronization"] if s["sync_type"] == "Context sync"]
    assert (context["api_name"], context["count"]) == (None, 1)
    human = gpuopt("nsys", command, str(path)).stdout
    assert "cudaDeviceSynchronize" in human and "(no call in export)" in human
    # A window keeps the calls that overlap it: device syncs at 20,190,309-20,244,748 and
    # 21,096,761-21,174,799, the stream sync at 20,326,630-20,333,507. No sync call lies inside a
    # decode_step range.
    report = nsys.open(path)
    within = report.timeline(window=(20_000_000, 21_200_000)).host_sync
    assert {h.api_name: (h.calls, h.blocked_ns) for h in within} == {
        "cudaDeviceSynchronize": (2, 54_439 + 78_038),
        "cudaStreamSynchronize": (1, 6_877),
    }
    assert report.timeline(nvtx="decode_step").host_sync == []


def test_no_graph_executions_are_said_in_words(shared: Path) -> None:
    """No graph trace printed "CUDA graphs (none-level trace)"."""
    eager = gpuopt("nsys", "graphs", str(shared / "h200/nsys/eager.sqlite")).stdout
    prefill = gpuopt("nsys", "graphs", str(_path(shared, "graph_graph")), "--nvtx", "prefill").stdout
    for text in (eager, prefill):
        assert "none-level" not in text
        assert "CUDA graphs: no CUDA graph executions in the selection" in text
    assert nsys.open(shared / "h200/nsys/eager.sqlite").graphs().trace_mode == "none"


def test_graph_trace_mode_from_the_capture_option_else_the_rows(shared: Path, tmp_path: Path) -> None:
    """Report.graph_trace_mode(): the capture option (eager.sqlite records Graph though no graph ran),
    else the rows; None when neither says."""
    modes = {m: nsys.open(_path(shared, m)) for m in MODES}
    assert {m: r.graph_trace_mode() for m, r in modes.items()} == {
        "graph_graph": "graph",
        "graph_node": "node",
    }
    assert {m: r.info().graph_trace_mode for m, r in modes.items()} == {
        "graph_graph": "graph",
        "graph_node": "node",
    }
    eager = shared / "h200/nsys/eager.sqlite"
    assert nsys.open(eager).graph_trace_mode() == "graph"
    drop = "DELETE FROM META_DATA_CAPTURE WHERE name LIKE '%CUDA_GRAPH_TRACE_OPTIONS:MODE'"
    for src, want in (
        (_path(shared, "graph_graph"), "graph"),
        (_path(shared, "graph_node"), "node"),
        (eager, None),
    ):
        folder = tmp_path / src.stem
        folder.mkdir()
        copy = _copy(src, folder)
        _execute(copy, drop)
        report = nsys.open(copy)
        assert (report.graph_trace_mode(), report.info().graph_trace_mode) == (want, want), src.name
    assert "cuda graph trace  node" in gpuopt("nsys", "summary", str(_path(shared, "graph_node"))).stdout


HOST_MEDIAN = (
    "SELECT r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
    "WHERE s.value LIKE 'cudaGraphLaunch%' ORDER BY 1"
)


def test_node_level_trace_carries_the_launch_host_time_note(shared: Path) -> None:
    """The note's numbers are the two captures' cudaGraphLaunch host-time medians (lower middle of 12):
    24,469 ns graph-level, 94,874 ns node-level."""
    graph_host = [r[0] for r in _rows(_path(shared, "graph_graph"), HOST_MEDIAN)]
    node_host = [r[0] for r in _rows(_path(shared, "graph_node"), HOST_MEDIAN)]
    assert (len(graph_host), graph_host[5], len(node_host), node_host[5]) == (12, 24_469, 12, 94_874)
    node = nsys.open(_path(shared, "graph_node")).graphs()
    [f] = node.graphs
    assert f.host_time.median_ns == 94_874
    [note] = node.notes
    assert "94,874 ns node-level vs 24,469 ns graph-level, 3.9x" in note
    assert nsys.open(_path(shared, "graph_graph")).graphs().notes == []
    for command in ("graphs", "summary"):
        assert "note: node-level trace" in gpuopt("nsys", command, str(_path(shared, "graph_node"))).stdout
        assert "note: node-level" not in gpuopt("nsys", command, str(_path(shared, "graph_graph"))).stdout
