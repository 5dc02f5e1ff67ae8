"""The nsys engine against NVIDIA's own answers: `nsys stats --format csv` of h200/nsys/eager.sqlite."""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import nsys

REPORTS = (
    "cuda_gpu_kern_sum",
    "cuda_api_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "nvtx_sum",
    "cuda_kern_exec_sum",
    "nvtx_kern_sum",
)


@pytest.fixture(scope="module")
def eager(shared: Path) -> Path:
    return shared / "h200" / "nsys" / "eager.sqlite"


@pytest.fixture(scope="module")
def report(eager: Path) -> nsys.Report:
    return nsys.open(eager)


def oracle(eager: Path, name: str) -> list[list[str]]:
    text = (eager.parent / f"stats_{name}.csv").read_text()
    return list(csv.reader(io.StringIO(text)))


def test_gpuopt_reproduces_the_seven_stats_reports() -> None:
    assert set(nsys.STATS_REPORTS) == set(REPORTS)


@pytest.mark.parametrize("name", REPORTS)
def test_stats_equal_nsys_cell_for_cell(report: nsys.Report, eager: Path, name: str) -> None:
    """Every cell of NVIDIA's CSV, header and row order included."""
    ours = list(csv.reader(io.StringIO(report.stats_csv(name))))
    theirs = oracle(eager, name)
    assert ours[0] == theirs[0]
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a == b, f"{name} row {i}"


@pytest.mark.parametrize("name", ["cuda_gpu_kern_sum", "nvtx_kern_sum"])
def test_stats_csv_from_the_cli_is_byte_identical(eager: Path, name: str) -> None:
    run = gpuopt("nsys", "stats", str(eager), "--report", name, "--csv")
    assert run.code == 0, run.stderr
    assert run.stdout == (eager.parent / f"stats_{name}.csv").read_text()


def test_frames_keep_full_precision(report: nsys.Report) -> None:
    """The DataFrame is unrounded: nsys' 7095.1 for cuLaunchKernelEx is 567612 / 80 = 7095.15 exactly."""
    api = report.api_summary()
    row = api.filter(api["name"] == "cuLaunchKernelEx").row(0, named=True)
    assert (row["total_time_ns"], row["num_calls"], row["avg_ns"]) == (567612, 80, 567612 / 80)
    # ... which the CSV writes as SQLite's round(x, 1) does: the binary value 7095.1499... rounds down.
    rows = {r[-1]: r for r in csv.reader(io.StringIO(report.stats_csv("cuda_api_sum")))}
    assert rows["cuLaunchKernelEx"][3] == "7095.1"
    kern = report.kernel_summary()
    assert kern["instances"].sum() == 176
    assert kern["time_pct"].sum() == pytest.approx(100.0)


def test_definitions_pinned_by_the_oracle(report: nsys.Report) -> None:
    # Median of an even count is the mean of the middle pair; the deviation is the sample one.
    api = report.api_summary()
    free = api.filter(api["name"] == "cudaFree").row(0, named=True)
    assert (free["min_ns"], free["max_ns"], free["med_ns"]) == (14803, 20256, 17529.5)
    assert free["stddev_ns"] == pytest.approx((20256 - 14803) / 2**0.5)
    # A single instance has deviation 0, not null.
    one = api.filter(api["num_calls"] == 1)
    assert one["stddev_ns"].to_list() == [0.0] * one.height
    # The _v rule strips exactly 6 characters after "_v": cudaLaunchKernel_v7000 but not _v10000.
    names = set(api["name"].to_list())
    assert {"cudaLaunchKernel", "cudaStreamIsCapturing_v10000", "cuGetProcAddress_v2"} <= names


def test_info_identifies_the_export(report: nsys.Report) -> None:
    info = report.info()
    assert info.export.schema_version == "3.20.3"
    assert info.export.product_version == "2025.3.2.0"
    assert info.gpu_source == "TARGET_INFO_GPU"
    assert [(g.id, g.name, g.compute_capability, g.sm_count) for g in info.gpus] == [
        (0, "NVIDIA H200", "9.0", 132)
    ]
    rows = {s.table: s.rows for s in info.sources}
    assert rows["CUPTI_ACTIVITY_KIND_KERNEL"] == 176
    assert rows["CUPTI_ACTIVITY_KIND_MEMCPY"] == 32
    assert rows["CUPTI_ACTIVITY_KIND_MEMSET"] == 58
    assert rows["CUPTI_ACTIVITY_KIND_RUNTIME"] == 2573
    assert rows["NVTX_EVENTS"] == 29
    assert rows["CUPTI_ACTIVITY_KIND_OVERHEAD"] is None
    assert info.nvtx_open_ranges == 0
    assert any(
        o.name == "PROCESS_0:CUDA_GRAPH_TRACE_OPTIONS:MODE" and o.value == "Graph" for o in info.capture
    )
    assert info.capture_environment_variables > 0
    assert not any("ENVIRONMENT" in o.name for o in info.capture)


def _union(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def test_timeline_busy_time_equals_an_independent_union(report: nsys.Report, eager: Path) -> None:
    con = sqlite3.connect(f"file:{eager}?mode=ro&immutable=1", uri=True)
    kernels = con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    copies = con.execute(
        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY "
        "UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET"
    ).fetchall()
    first = min(s for s, _ in kernels + copies)
    last = max(e for _, e in kernels + copies)
    t = report.timeline()
    [dev] = t.devices
    assert (dev.kernels, dev.memcpys, dev.memsets) == (176, 32, 58)
    assert (dev.span_start_ns, dev.span_end_ns) == (first, last)
    assert dev.busy_ns == _union(kernels + copies)
    assert dev.kernel_busy_ns == _union(kernels) == sum(e - s for s, e in kernels)  # one kernel at a time
    assert dev.copy_busy_ns == _union(copies)
    assert dev.idle_ns == dev.span_ns - dev.busy_ns == dev.gaps.total_ns
    assert dev.concurrency.max_kernels == 1
    assert sum(b.count for b in dev.gaps.histogram) == dev.gaps.count
    [launch] = t.launch
    assert (launch.kernels, launch.matched) == (176, 176)
    assert [(s.sync_type, s.api_name, s.count) for s in t.synchronization] == [
        ("Stream wait sync", "cudaStreamSynchronize", 24)
    ]
    assert t.profiler_overhead.recorded and t.profiler_overhead.intervals == 27


def test_nvtx_attribution_matches_nvtx_kern_sum(report: nsys.Report, eager: Path) -> None:
    """Inclusive kernel time per range equals the oracle's per-range totals; steps own no kernel
    exclusively (forward and d2h nest inside them)."""
    by_range: dict[str, int] = {}
    for row in oracle(eager, "nvtx_kern_sum")[1:]:
        by_range[row[0]] = by_range.get(row[0], 0) + int(row[6])
    ranges = {r["range"]: r for r in report.nvtx().iter_rows(named=True)}
    for name, total in by_range.items():
        assert ranges[name]["kernel_inclusive_ns"] == total, name
    assert ranges[":step_3"]["kernel_exclusive_ns"] == 0
    assert ranges[":forward"]["kernel_exclusive_ns"] == by_range[":forward"]
    assert ranges[":h2d"]["kernels"] == 0 and ranges[":h2d"]["gpu_ops"] == 8
    inst = report.nvtx(per_instance=True)
    step3 = inst.filter(inst["range"] == ":step_3").row(0, named=True)
    assert step3["depth"] == 0 and step3["kernels"] == 22
    nested = inst.filter((inst["start_ns"] > step3["start_ns"]) & (inst["end_ns"] < step3["end_ns"]))
    assert nested["depth"].to_list() == [1, 1, 1]
    assert step3["gpu_projected_ns"] == step3["gpu_end_ns"] - step3["gpu_start_ns"]


def test_nvtx_selection_restricts_every_fact(report: nsys.Report, eager: Path) -> None:
    step3 = [r for r in oracle(eager, "nvtx_kern_sum")[1:] if r[0] == ":step_3"]
    kern = report.kernel_summary(nvtx="step_3")
    assert kern["instances"].sum() == sum(int(r[5]) for r in step3)
    assert kern["total_time_ns"].sum() == sum(int(r[6]) for r in step3)
    # The full tag works as well as the text.
    assert report.kernel_summary(nvtx=":step_3").equals(kern)
    con = sqlite3.connect(f"file:{eager}?mode=ro&immutable=1", uri=True)
    expected = con.execute(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN NVTX_EVENTS n ON n.text = 'step_3' "
        "AND r.globalTid = n.globalTid AND r.start >= n.start AND r.end <= n.end"
    ).fetchone()[0]
    api = report.api_summary(nvtx="step_3")
    assert api["num_calls"].sum() == expected
    launches = api.filter(api["name"].is_in(["cudaLaunchKernel", "cuLaunchKernelEx"]))
    assert launches["num_calls"].sum() == 22
    [dev] = report.timeline(nvtx="step_3").devices
    assert dev.kernels == 22


def test_window_keeps_overlapping_events(report: nsys.Report, eager: Path) -> None:
    con = sqlite3.connect(f"file:{eager}?mode=ro&immutable=1", uri=True)
    a, b = 7233566315, 7234889863  # step_1's CPU range
    expected = con.execute(
        "SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < ? AND end > ?",
        (b, a),
    ).fetchone()
    kern = report.kernel_summary(window=(a, b))
    assert (kern["instances"].sum(), kern["total_time_ns"].sum()) == expected
    [dev] = report.timeline(window=(a, b)).devices
    assert dev.span_start_ns is not None and dev.span_start_ns >= a
    assert dev.span_end_ns is not None and dev.span_end_ns <= b


def test_window_parsing() -> None:
    assert nsys.parse_window("7230419477:7232068021") == (7230419477, 7232068021)
    assert nsys.parse_window("7.2s:") == (7_200_000_000, None)
    assert nsys.parse_window(":150ms") == (None, 150_000_000)
    assert nsys.parse_window("1.5us:2us") == (1500, 2000)


def test_cli_table_envelope(eager: Path) -> None:
    run = gpuopt("nsys", "kernels", str(eager), "--json", "--limit", "2")
    assert run.code == 0, run.stderr
    env = run.json()
    assert env["schema"] == "gpuopt.nsys.table/v1"
    data = env["data"]
    assert data["report"] == "cuda_gpu_kern_sum"
    assert data["table"]["total_rows"] == 7 and data["table"]["truncated"] is True
    assert data["table"]["rows"][0]["total_time_ns"] == 4421779
    assert data["not_captured"] == []
    assert env["provenance"]["inputs"][0]["path"] == str(eager)


@pytest.mark.parametrize(
    ("command", "schema"),
    [
        ("summary", "gpuopt.nsys.summary/v1"),
        ("timeline", "gpuopt.nsys.timeline/v1"),
        ("api", "gpuopt.nsys.table/v1"),
        ("mem", "gpuopt.nsys.table/v1"),
        ("nvtx", "gpuopt.nsys.table/v1"),
        ("gaps", "gpuopt.nsys.table/v1"),
    ],
)
def test_cli_commands_emit_their_envelopes(eager: Path, command: str, schema: str) -> None:
    run = gpuopt("nsys", command, str(eager), "--json")
    assert run.code == 0, run.stderr
    env = run.json()
    assert env["schema"] == schema and env["ok"] is True


@pytest.mark.parametrize("command", ["summary", "timeline", "nvtx"])
def test_cli_human_output_names_the_file(eager: Path, command: str) -> None:
    human = gpuopt("nsys", command, str(eager))
    assert human.code == 0 and str(eager) in human.stdout


def test_cli_memory_facts(eager: Path) -> None:
    rows = gpuopt("nsys", "mem", str(eager), "--json").json()["data"]["table"]["rows"]
    by = {(r["copy_kind"], r["host_memory"]): r for r in rows}
    pinned = by[("Host-to-Device", "Pinned")]
    pageable = by[("Host-to-Device", "Pageable")]
    assert (pinned["count"], pinned["total_bytes"]) == (8, 134217728)
    assert pinned["bandwidth_gbps"] == pytest.approx(134217728 / pinned["total_time_ns"])
    assert pageable["count"] + pinned["count"] == 24  # the oracle's 24 host-to-device copies
    assert by[("Memset", None)]["count"] == 58


def test_cli_unknown_nvtx_range_is_exit_2(eager: Path) -> None:
    run = gpuopt("nsys", "kernels", str(eager), "--nvtx", "no_such_range", "--json")
    assert run.code == 2
    err = run.json()["errors"][0]
    assert err["code"] == "nsys_nvtx_range_unknown"
    assert ":step_3" in err["observed"]
    # A near miss lists the nearest names first.
    near = gpuopt("nsys", "kernels", str(eager), "--nvtx", "stepp_3", "--json").json()["errors"][0]
    assert near["observed"].startswith(":step_3, ")


def test_cli_unknown_report_is_exit_2(eager: Path) -> None:
    run = gpuopt("nsys", "stats", str(eager), "--report", "cuda_gpu_trace", "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "nsys_report_unknown"
