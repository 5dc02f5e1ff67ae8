"""``torch comm`` and collective algbw, against truth computed from the trace's JSON events."""

from __future__ import annotations

import gzip
import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from conftest import gpuopt
from gpuopt import torch_trace

NCCL = "public/torch/hta_nccl_parser_config_nccl_data.json.gz"
Spans = list[tuple[int, int]]


def _ns(us: Decimal) -> int:
    return int((us * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _union(spans: Spans) -> Spans:
    out: Spans = []
    for s, e in sorted(x for x in spans if x[1] > x[0]):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _kernels(path: Path) -> list[tuple[int, int, int, int, str]]:
    doc = json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)
    out = []
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            start = _ns(Decimal(e["ts"]))
            args = e["args"]
            out.append((args["device"], args["stream"], start, start + _ns(Decimal(e["dur"])), e["name"]))
    return out


def test_comm_equals_json_truth(shared: Path) -> None:
    kernels = _kernels(shared / NCCL)
    frame = torch_trace.open(shared / NCCL).comm()
    device_rows = frame.filter(frame["stream"].is_null())
    assert device_rows["device"].to_list() == sorted({k[0] for k in kernels})
    for row in device_rows.iter_rows(named=True):
        mine = [k for k in kernels if k[0] == row["device"]]
        comm = _union([(s, e) for _, _, s, e, n in mine if n.startswith("nccl")])
        compute = _union([(s, e) for _, _, s, e, n in mine if not n.startswith("nccl")])
        overlap = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in comm for s2, e2 in compute)
        busy = sum(e - s for s, e in comm)
        assert row["kernels"] == len(mine)
        assert row["comm_kernels"] == sum(1 for k in mine if k[4].startswith("nccl"))
        assert row["comm_busy_ns"] == busy
        assert row["compute_busy_ns"] == sum(e - s for s, e in compute)
        assert row["overlap_ns"] == overlap
        assert row["exposed_comm_ns"] == busy - overlap
    # Hand-checked figures of this trace: 21 NCCL kernels on stream 40, 15.6 % hidden by compute.
    assert frame.select("device", "stream", "comm_kernels", "overlap_ns", "exposed_comm_ns").rows() == [
        (0, None, 21, 7317025, 39559468),
        (0, 40, 21, 7317025, 39559468),
    ]


def test_collective_algbw_is_bytes_over_time(shared: Path) -> None:
    frame = torch_trace.open(shared / NCCL).collectives()
    first = frame.row(0, named=True)
    # broadcast of 53120 Float elements (212480 bytes) in 30975 ns.
    assert (first["collective"], first["bytes_in"], first["duration_ns"]) == ("broadcast", 212480, 30975)
    assert first["algbw_gbps"] == 212480 / 30975
    known = frame.filter(frame["bytes_in"].is_not_null())
    assert (known["algbw_gbps"] - known["bytes_in"] / known["duration_ns"]).abs().max() == 0


def test_torch_comm_cli(shared: Path) -> None:
    run = gpuopt("torch", "comm", str(shared / NCCL), "--json")
    assert run.code == 0, run.stderr
    assert run.json()["data"]["table"]["rows"][0]["exposed_comm_ns"] == 39559468
