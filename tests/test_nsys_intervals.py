"""Timeline and attribution facts on small hand-built exports, where every number is worked out by hand."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from conftest import gpuopt
from gpuopt import nsys
from nsys_db import GLOBAL_PID, Export


@pytest.fixture
def busy_export(tmp_path: Path) -> Path:
    """Device 0. Kernels: [0,10) s1, [5,15) s2, [20,30) s1. Memcpy [12,25) s3, memset [40,50) s3."""
    e = Export()
    e.kernel(0, 10, stream=1, corr=1, name="a")
    e.kernel(5, 15, stream=2, corr=2, name="b")
    e.kernel(20, 30, stream=1, corr=3, name="a")
    e.memcpy(12, 25, 1300, stream=3)
    e.memset(40, 50, 100, stream=3)
    return e.write(tmp_path / "busy.sqlite")


def test_union_gaps_overlap_and_concurrency(busy_export: Path) -> None:
    [dev] = nsys.open(busy_export).timeline().devices
    # Union [0,30) + [40,50): busy 40 of a 50 ns span, one 10 ns gap.
    assert (dev.span_start_ns, dev.span_end_ns, dev.span_ns) == (0, 50, 50)
    assert (dev.busy_ns, dev.idle_ns, dev.busy_pct) == (40, 10, 80.0)
    assert (dev.gaps.count, dev.gaps.total_ns, dev.gaps.min_ns, dev.gaps.max_ns) == (1, 10, 10, 10)
    # Kernels [0,15) + [20,30) = 25; copies [12,25) + [40,50) = 23; K ∩ C = [12,15) + [20,25) = 8.
    assert (dev.kernel_busy_ns, dev.copy_busy_ns, dev.compute_copy_overlap_ns) == (25, 23, 8)
    assert (dev.kernel_only_ns, dev.copy_only_ns) == (17, 15)
    # Two kernels run on [5,10), one on [0,5) + [10,15) + [20,30), none on [15,20): 5/20/5 ns.
    c = dev.concurrency
    assert (c.max_kernels, c.time_at_level_ns) == (2, [5, 20, 5])
    assert c.mean_kernels_when_busy == pytest.approx(30 / 25)
    streams = {s.stream_id: s for s in dev.streams}
    assert (streams[1].busy_ns, streams[1].span_ns, streams[1].gaps.count) == (20, 30, 1)
    assert (streams[3].memcpys, streams[3].memsets, streams[3].busy_ns) == (1, 1, 23)


def test_gap_list_names_the_neighbours(busy_export: Path) -> None:
    gaps = nsys.open(busy_export).gaps()
    device = gaps.filter(gaps["stream_id"].is_null()).rows(named=True)
    assert device == [
        {
            "device_id": 0,
            "stream_id": None,
            "start_ns": 30,
            "end_ns": 40,
            "duration_ns": 10,
            "before": "a",
            "after": "[CUDA memset]",
        }
    ]
    s1 = gaps.filter(gaps["stream_id"] == 1)
    assert s1.select("start_ns", "end_ns", "before", "after").rows() == [(10, 20, "a", "a")]


def test_window_clips_timeline_intervals(busy_export: Path) -> None:
    [dev] = nsys.open(busy_export).timeline(window=(7, 45)).devices
    # Clipped: [7,30) and [40,45): busy 28 in the span [7,45).
    assert (dev.span_start_ns, dev.span_end_ns, dev.busy_ns, dev.idle_ns) == (7, 45, 28, 10)
    kern = nsys.open(busy_export).kernel_summary(window=(16, 19))
    assert kern.height == 0  # nothing overlaps the idle interval between kernels
    kern = nsys.open(busy_export).kernel_summary(window=(14, 21))
    # Summaries keep whole durations of overlapping kernels: b [5,15) and a [20,30).
    assert sorted(zip(kern["name"], kern["total_time_ns"], strict=True)) == [("a", 10), ("b", 10)]


@pytest.fixture
def launch_export(tmp_path: Path) -> Path:
    """Kernel k1 launched by a call [100,110) starts at 150; k2's call [200,230) ends after k2 starts
    at 220. A call in another process reuses correlation id 1 and must not match."""
    e = Export()
    e.kernel(150, 160, corr=1, name="k1")
    e.kernel(220, 240, corr=2, name="k2")
    e.call(100, 110, 1)
    e.call(200, 230, 2)
    other_process = (GLOBAL_PID + (1 << 24)) | 7
    e.call(140, 145, 1, tid=other_process)
    return e.write(tmp_path / "launch.sqlite")


def test_launch_latency_and_queue_delay(launch_export: Path) -> None:
    [launch] = nsys.open(launch_export).timeline().launch
    assert (launch.kernels, launch.matched, launch.negative_queue_delays) == (2, 2, 1)
    # Queue delay = kernel start - call end: 150 - 110 = 40 and 220 - 230 = -10.
    assert (launch.queue_delay.min_ns, launch.queue_delay.max_ns) == (-10, 40)
    # Launch latency = kernel start - call start: 50 and 20; API time 10 and 30.
    assert (launch.launch_latency.min_ns, launch.launch_latency.max_ns) == (20, 50)
    assert launch.api_time.total_ns == 40
    # Kernel durations of the matched kernels: 160 - 150 = 10 and 240 - 220 = 20.
    assert (launch.kernel_time.count, launch.kernel_time.min_ns, launch.kernel_time.max_ns) == (2, 10, 20)


def test_launch_kernel_durations_leave_graph_work_out(shared: Path) -> None:
    """Graph-level capture: the device's kernel_busy_ns (3,026,218 ns) counts the 12 graph executions; the
    launch facts keep the 148 kernels launched one by one, whose durations sum to their own union here."""
    t = nsys.open(shared / "h200/graphs/graph_graph.sqlite").timeline()
    [dev], [launch] = t.devices, t.launch
    assert (dev.kernel_busy_ns, dev.graph_busy_ns) == (3_026_218, 2_429_967)
    assert (launch.kernels, launch.matched, launch.kernel_time.total_ns) == (148, 148, 596_251)
    assert launch.kernel_time.total_ns == dev.kernel_busy_ns - dev.graph_busy_ns  # no overlap with graphs


def test_kern_exec_sum_joins_on_process_and_correlation(launch_export: Path) -> None:
    frame = nsys.open(launch_export).stats("cuda_kern_exec_sum")
    rows = {r["kernel_name"]: r for r in frame.iter_rows(named=True)}
    assert set(rows) == {"k1", "k2"}
    k1, k2 = rows["k1"], rows["k2"]
    # Total = max(call end, kernel end) - call start: 160 - 100 and 240 - 200.
    assert (k1["t_avg_ns"], k2["t_avg_ns"]) == (60.0, 40.0)
    assert (k1["q_count"], k1["q_avg_ns"]) == (1, 40.0)
    assert (k2["q_count"], k2["q_avg_ns"]) == (0, None)  # a negative queue time is left out
    assert (k1["api_name"], k1["pid"], k1["tid"]) == ("cudaLaunchKernel", 100, 101)


@pytest.fixture
def nvtx_export(tmp_path: Path) -> Path:
    """Thread T: outer [0,100) holds inner [10,50). Calls: [12,14) in inner -> k1 (runs [60,70));
    [60,62) in outer only -> k2 ([80,85)); another thread's call [12,14) -> k3 (not attributed).
    A memcpy launched from inner runs [90,120). An open range (no end) on T starts at 200."""
    e = Export()
    e.range(0, 100, "outer")
    e.range(10, 50, "inner")
    e.range(200, None, "open")
    e.call(12, 14, 1)
    e.call(60, 62, 2)
    e.call(12, 14, 3, tid=GLOBAL_PID | 999)
    e.call(20, 22, 4, name="cudaMemcpyAsync_v3020")
    e.call(210, 300, 5)
    e.kernel(60, 70, corr=1, name="k1")
    e.kernel(80, 85, corr=2, name="k2")
    e.kernel(64, 66, corr=3, name="k3")
    e.kernel(310, 320, corr=5, name="k4")
    e.memcpys.append((90, 120, 0, 1, 8, 4, GLOBAL_PID, 64, 1, 0, 2))
    return e.write(tmp_path / "nvtx.sqlite")


def test_nvtx_inclusive_exclusive_and_projection(nvtx_export: Path) -> None:
    ranges = {r["range"]: r for r in nsys.open(nvtx_export).nvtx().iter_rows(named=True)}
    outer, inner = ranges[":outer"], ranges[":inner"]
    assert (outer["kernels"], outer["kernel_inclusive_ns"], outer["kernel_exclusive_ns"]) == (2, 15, 5)
    assert (inner["kernels"], inner["kernel_inclusive_ns"], inner["kernel_exclusive_ns"]) == (1, 10, 10)
    # Projection: first GPU start to last GPU end of ops launched inside (kernels and the memcpy).
    assert (outer["gpu_ops"], outer["gpu_projected_ns"]) == (3, 120 - 60)
    assert (inner["gpu_ops"], inner["gpu_projected_ns"]) == (2, 120 - 60)
    # The open range closes at the last NVTX timestamp (200: its own start) for attribution.
    assert ranges[":open"]["cpu_total_ns"] == 0


def test_nvtx_kern_sum_on_hand_built_ranges(nvtx_export: Path) -> None:
    frame = nsys.open(nvtx_export).stats("nvtx_kern_sum")
    rows = [
        (r["range"], r["kernel_name"], r["nvtx_instances"], r["total_time_ns"])
        for r in frame.iter_rows(named=True)
    ]
    # Null ranges first (k4 launched after every range closed, then k3 from thread 999: ordered by
    # pid and tid), then by range name.
    assert rows == [
        (None, "k4", 0, 10),
        (None, "k3", 0, 2),
        (":inner", "k1", 1, 10),
        (":outer", "k1", 1, 10),
        (":outer", "k2", 1, 5),
    ]


def test_open_range_closes_at_the_last_timestamp(nvtx_export: Path) -> None:
    frame = nsys.open(nvtx_export).stats("nvtx_sum")
    durations = dict(zip(frame["range"], frame["total_time_ns"], strict=True))
    # nvtx_sum closes open ranges at the latest start or end in NVTX_EVENTS (here 200).
    assert durations == {":outer": 100, ":inner": 40, ":open": 0}
    assert nsys.open(nvtx_export).info().nvtx_open_ranges == 1


def test_nvtx_filter_on_hand_built_ranges(nvtx_export: Path) -> None:
    report = nsys.open(nvtx_export)
    kern = report.kernel_summary(nvtx="inner")
    assert kern["name"].to_list() == ["k1"]
    api = report.api_summary(nvtx="outer")
    # Calls on T inside [0,100): corr 1, 2 and the memcpy call.
    assert api["num_calls"].sum() == 3
    [dev] = report.timeline(nvtx="inner").devices
    assert (dev.kernels, dev.memcpys, dev.span_start_ns, dev.span_end_ns) == (1, 1, 60, 120)


def test_versioned_table_names_are_resolved(tmp_path: Path) -> None:
    e = Export(rename={"CUPTI_ACTIVITY_KIND_RUNTIME": "CUPTI_ACTIVITY_KIND_RUNTIME_V3"})
    e.call(0, 10, 1)
    e.call(20, 25, 2, name="cudaMemcpyAsync_v3020")
    report = nsys.open(e.write(tmp_path / "v3.sqlite"))
    api = report.api_summary()
    assert sorted(zip(api["name"], api["total_time_ns"], strict=True)) == [
        ("cudaLaunchKernel", 10),
        ("cudaMemcpyAsync", 5),
    ]
    status = {s.table: s.actual for s in report.info().sources}
    assert status["CUPTI_ACTIVITY_KIND_RUNTIME"] == "CUPTI_ACTIVITY_KIND_RUNTIME_V3"


def test_absent_tables_are_not_captured_facts(tmp_path: Path) -> None:
    e = Export(drop={"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_MEMSET"})
    e.kernel(0, 10, name="a")
    report = nsys.open(e.write(tmp_path / "sparse.sqlite"))
    assert report.stats("nvtx_sum").height == 0
    assert report.not_captured("nvtx_sum") == ["NVTX_EVENTS"]
    assert report.not_captured("cuda_gpu_mem_time_sum") == ["CUPTI_ACTIVITY_KIND_MEMSET"]
    status = {s.table: s.captured for s in report.info().sources}
    assert status["NVTX_EVENTS"] is False and status["CUPTI_ACTIVITY_KIND_KERNEL"] is True


def test_longest_gaps_are_the_head_of_the_full_list(busy_export: Path, shared: Path) -> None:
    # Hand-built: gaps s1 [10,20) 10, s3 [25,40) 15, device [30,40) 10; the two longest, ties by lane.
    top = nsys.open(busy_export).gaps(top=2)
    assert top.select("stream_id", "start_ns", "duration_ns").rows() == [(3, 25, 15), (None, 30, 10)]
    # A real export: top-K equals the whole list sorted by duration (stable) and cut at K.
    report = nsys.open(shared / "h200/nsys/eager.sqlite")
    whole = report.gaps()
    assert whole.height > 100
    want = whole.sort("duration_ns", descending=True, maintain_order=True).head(25)
    assert report.gaps(top=25).equals(want)
    assert report.gaps(top=0).height == 0


def test_cli_sort_duration_limit_pushes_the_limit_down(shared: Path) -> None:
    path = shared / "h200/nsys/eager.sqlite"
    run = gpuopt("nsys", "gaps", str(path), "--sort", "duration_ns", "--limit", "3", "--json")
    assert run.code == 0, run.stderr
    table = run.json()["data"]["table"]
    want = nsys.open(path).gaps(top=3)
    assert [r["duration_ns"] for r in table["rows"]] == want["duration_ns"].to_list()
    assert [r["start_ns"] for r in table["rows"]] == want["start_ns"].to_list()
    assert table["total_rows"] == 3


def test_the_first_gaps_are_the_head_of_the_full_list_and_the_cli_keeps_only_them(shared: Path) -> None:
    # `gaps --limit K` without --sort: the first K rows of the table's own order, kept while reading.
    path = shared / "h200/nsys/eager.sqlite"
    report = nsys.open(path)
    whole = report.gaps()
    assert report.gaps(first=40).equals(whole.head(40))
    assert report.gaps(first=0).height == 0
    assert report.gaps(level="device", first=3).equals(whole.filter(pl.col("stream_id").is_null()).head(3))
    run = gpuopt("nsys", "gaps", str(path), "--limit", "3", "--json")
    assert run.code == 0, run.stderr
    table = run.json()["data"]["table"]
    assert [r["start_ns"] for r in table["rows"]] == whole["start_ns"].head(3).to_list()
    assert table["total_rows"] == 3
