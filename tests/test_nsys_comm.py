"""``nsys comm``: communication vs. compute per device, against truth computed from the SQLite rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import nsys

Spans = list[tuple[int, int]]


def _union(spans: Spans) -> Spans:
    out: Spans = []
    for s, e in sorted(x for x in spans if x[1] > x[0]):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _overlap(a: Spans, b: Spans) -> int:
    # Quadratic on purpose: an oracle independent of the engine's sweep.
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def _truth(path: Path) -> dict[int, dict[str, int]]:
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    rows = db.execute(
        "SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName"
    ).fetchall()
    out: dict[int, dict[str, int]] = {}
    for device in sorted({r[0] for r in rows}):
        comm = [(s, e) for d, s, e, n in rows if d == device and n.startswith("nccl")]
        compute = _union([(s, e) for d, s, e, n in rows if d == device and not n.startswith("nccl")])
        busy = _union(comm)
        overlap = _overlap(busy, compute)
        out[device] = {
            "comm_kernels": len(comm),
            "comm_time_ns": sum(e - s for s, e in comm),
            "comm_busy_ns": sum(e - s for s, e in busy),
            "compute_busy_ns": sum(e - s for s, e in compute),
            "overlap_ns": overlap,
            "exposed_comm_ns": sum(e - s for s, e in busy) - overlap,
        }
    return out


@pytest.mark.parametrize("name", ["mfu_2gpu_before", "mfu_2gpu_after", "h100_2gpu_1s"])
def test_comm_per_device_equals_sqlite_truth(shared: Path, name: str) -> None:
    path = shared / f"public/nsys/{name}.sqlite"
    frame = nsys.open(path).comm()
    devices = frame.filter(frame["stream"].is_null())
    truth = _truth(path)
    assert devices["device"].to_list() == list(truth)
    for row in devices.iter_rows(named=True):
        assert {k: row[k] for k in truth[row["device"]]} == truth[row["device"]]


def test_comm_on_mfu_before_known_numbers(shared: Path) -> None:
    """Hand-checked: 33 SendRecv kernels per GPU, on stream 7 (device 0) and 15 (device 1)."""
    frame = nsys.open(shared / "public/nsys/mfu_2gpu_before.sqlite").comm()
    streams = frame.filter(frame["stream"].is_not_null())
    assert streams.select("device", "stream", "comm_kernels", "comm_time_ns").rows() == [
        (0, 7, 33, 17172652),
        (1, 15, 33, 8229100),
    ]


def test_comm_without_collectives_reports_compute_only(shared: Path) -> None:
    frame = nsys.open(shared / "public/nsys/h100_2gpu_1s.sqlite").comm()
    assert frame["comm_busy_ns"].to_list() == [0, 0]
    assert frame["compute_busy_ns"].to_list() == [22385163, 22444359]


def test_comm_cli_json(shared: Path) -> None:
    run = gpuopt("nsys", "comm", str(shared / "public/nsys/mfu_2gpu_before.sqlite"), "--json")
    assert run.code == 0, run.stderr
    table = run.json()["data"]["table"]
    assert table["name"] == "comm"
