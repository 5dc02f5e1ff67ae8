"""Per-device nsys tables and synchronization attributed through the context waited on, against truth
computed from the SQLite rows of nsys-ai's public 2-GPU exports."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import polars as pl

from gpuopt import nsys

PID = 0xFFFF_FFFF_FF00_0000


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


def test_kernels_per_device_equal_sqlite_sums(shared: Path) -> None:
    path = shared / "public/nsys/mfu_2gpu_before.sqlite"
    truth = (
        _db(path)
        .execute(
            "SELECT deviceId, sum(end - start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
            "GROUP BY 1 ORDER BY 1"
        )
        .fetchall()
    )
    report = nsys.open(path)
    frame = report.table("kernels", per_device=True)
    got = (
        frame.group_by("device_id")
        .agg(pl.col("total_time_ns").sum(), pl.col("instances").sum())
        .sort("device_id")
    )
    assert [tuple(r) for r in got.iter_rows()] == truth
    # time_pct is the share of the device's own kernel time.
    for device, total, _ in truth:
        part = frame.filter(frame["device_id"] == device)
        assert abs(part["time_pct"].sum() - 100.0) < 1e-9
        assert part["total_time_ns"].sum() == total


def test_api_per_device_follows_the_calling_process(shared: Path) -> None:
    path = shared / "public/nsys/h100_2gpu_1s.sqlite"
    db = _db(path)
    device_of = dict(
        db.execute("SELECT DISTINCT globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    )
    calls: dict[int, int] = {}
    for tid, n in db.execute("SELECT globalTid, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1"):
        device = device_of[tid & PID]
        calls[device] = calls.get(device, 0) + n
    frame = nsys.open(path).table("api", per_device=True)
    got = frame.group_by("device_id").agg(pl.col("num_calls").sum()).sort("device_id")
    assert dict(got.iter_rows()) == calls


def test_synchronization_is_attributed_through_the_context_waited_on(shared: Path) -> None:
    path = shared / "public/nsys/h100_2gpu_1s.sqlite"
    db = _db(path)
    # The export's SYNCHRONIZATION.deviceId is 0 for both processes: it cannot say which device waited.
    assert {
        r[0] for r in db.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
    } == {0}
    sync_total, sync_pid = db.execute(
        "SELECT sum(end - start), globalPid FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION "
        "WHERE contextId = 2 AND streamId = 15 AND syncType = 3"
    ).fetchone()
    blocked = db.execute(
        "SELECT sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s "
        "ON s.correlationId = r.correlationId AND (r.globalTid >> 24) = (s.globalPid >> 24) "
        "WHERE s.contextId = 2 AND s.syncType = 3"
    ).fetchone()[0]
    timeline = nsys.open(path).timeline()
    row = next(s for s in timeline.synchronization if s.context_id == 2 and s.sync_type == "Stream sync")
    assert (row.device_id, row.stream_id, row.total_ns) == (1, 15, sync_total)
    host = next(h for h in timeline.host_sync if h.device_id == 1 and h.api_name == "cudaStreamSynchronize")
    assert host.blocked_ns == blocked
    assert round(host.blocked_ns / 1e6, 1) == 428.4  # device 1's process blocked 428.4 ms
    assert (
        sync_pid & PID
        == next(
            p
            for p, d in db.execute("SELECT DISTINCT globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")
            if d == 1
        )
        & PID
    )


def test_nvtx_per_device_keeps_only_work_on_that_device(shared: Path) -> None:
    path = shared / "public/nsys/h100_2gpu_1s.sqlite"
    report = nsys.open(path)
    whole = report.table("nvtx")
    frame = report.table("nvtx", per_device=True)
    # Each process launched on one device: the per-device kernel counts add up to the whole.
    assert frame["kernel_inclusive_ns"].sum() == whole["kernel_inclusive_ns"].sum()
    assert set(frame["device_id"].unique()) == {0, 1}
