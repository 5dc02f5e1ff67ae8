"""``gpuopt nsys|torch export perfetto``: the file is a ``perfetto.protos.Trace``.

Two checks. The format check always runs: the file is decoded with the message classes Perfetto's own
Python package generates from its ``.proto`` files (``perfetto/protos/perfetto/trace/perfetto_trace_pb2``),
every field of every message must be one those definitions know (no unknown fields), and the slices,
tracks and flows are counted back from the decoded packets. The trace-processor check loads the file
into Perfetto's trace processor (``perfetto.trace_processor.TraceProcessor``) and queries its slice
table; it needs the ``trace_processor_shell`` binary, which the package downloads on first use (set
``PERFETTO_TRACE_PROCESSOR_SHELL`` to a local copy), and is skipped, with the reason, where it cannot be had.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from gpuopt import errors, perfetto, torch_trace

pb2 = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")
unknown_fields = pytest.importorskip("google.protobuf.unknown_fields")

BEGIN, END, INSTANT = 1, 2, 3


def _walk(message: Any) -> int:
    """Unknown fields anywhere under ``message``."""
    n = len(unknown_fields.UnknownFieldSet(message))
    for field, value in message.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        items = value if field.is_repeated else [value]
        n += sum(_walk(v) for v in items)
    return n


def decode(path: Path) -> dict[str, Any]:
    """Counts of what a trace file holds, read through Perfetto's generated classes."""
    trace = pb2.Trace.FromString(path.read_bytes())
    assert _walk(trace) == 0, "fields Perfetto's protos do not define"
    tracks: dict[int, str] = {}
    kinds: Counter[str] = Counter()
    depth: Counter[int] = Counter()
    names: dict[int, str] = {}
    flows_out: Counter[int] = Counter()
    flows_in: Counter[int] = Counter()
    last_ts = -1
    for i, packet in enumerate(trace.packet):
        assert packet.trusted_packet_sequence_id == 1
        assert packet.sequence_flags == (1 if i == 0 else 2)
        for entry in packet.interned_data.event_names:
            assert entry.iid not in names, "an event name interned twice"
            names[entry.iid] = entry.name
        if packet.HasField("track_descriptor"):
            d = packet.track_descriptor
            assert d.uuid not in tracks and d.uuid != 0
            assert not d.HasField("parent_uuid") or d.parent_uuid in tracks
            tracks[d.uuid] = d.name
            continue
        ev = packet.track_event
        assert ev.track_uuid in tracks, "an event on a track not described before it"
        assert packet.timestamp >= 0
        last_ts = max(last_ts, packet.timestamp)
        if ev.type == BEGIN:
            assert ev.name_iid in names
            depth[ev.track_uuid] += 1
            kinds["slices"] += 1
            flows_out.update(ev.flow_ids)
            flows_in.update(ev.terminating_flow_ids)
        elif ev.type == END:
            depth[ev.track_uuid] -= 1
            assert depth[ev.track_uuid] >= 0
        elif ev.type == INSTANT:
            kinds["instants"] += 1
    assert all(d == 0 for d in depth.values()), "slices left open"
    return {
        "tracks": tracks,
        "slices": kinds["slices"],
        "packets": len(trace.packet),
        "flows_out": flows_out,
        "flows_in": flows_in,
        "names": set(names.values()),
    }


def test_torch_export_decodes_with_perfettos_own_protos(shared: Path, tmp_path: Path) -> None:
    trace = torch_trace.open(shared / "h200/graphs/graph_trace.json")
    out = tmp_path / "graph.pftrace"
    result = perfetto.export_torch(trace, out)
    got = decode(out)
    assert result.bytes == out.stat().st_size
    assert (result.packets, result.tracks, result.slices) == (
        got["packets"],
        len(got["tracks"]),
        got["slices"],
    )
    counts = trace.summary().traces[0].counts
    gaps = trace.gaps().height
    executions = 6
    host = counts.cpu_ops + counts.annotations + counts.python_functions + counts.runtime_calls
    gpu = counts.kernels + counts.memcpys + counts.memsets
    assert got["slices"] == host + counts.driver_calls + gpu + gaps + executions
    # One flow per launching call, ending at its first GPU event (a graph replay's first kernel).
    assert got["flows_out"] == got["flows_in"]
    assert len(got["flows_out"]) == trace.summary().traces[0].links.runtime_launching_gpu
    names = set(got["tracks"].values())
    assert "CUDA graph executions" in names
    assert any(n.startswith("idle gaps · GPU 0 stream") for n in names)


def test_nsys_export_and_diff_track(shared: Path, tmp_path: Path) -> None:
    from gpuopt import nsys

    path = shared / "h200/nsys/eager.sqlite"
    diff = tmp_path / "diff.json"
    kernel = nsys.open(path).kernels()["name"][0]
    envelope = {
        "schema": "gpuopt.profile.diff/v2",
        "data": {
            "kind": "nsys",
            "by": "kernel",
            "table": {"rows": [{"key": kernel, "flagged": True, "change_pct": -12.5}], "truncated": False},
        },
    }
    diff.write_text(json.dumps(envelope))
    out = tmp_path / "eager.pftrace"
    result = perfetto.export_nsys(path, out, diff=perfetto.flagged_of_diff(diff))
    got = decode(out)
    # 176 kernels + 32 memcpys + 58 memsets (tests/data/README.md) on the GPU streams.
    gaps = nsys.open(path).gaps().height
    names = set(got["tracks"].values())
    assert "profile diff: flagged kernels" in names
    instances = int(nsys.open(path).kernels().filter(nsys_name_is(kernel))["instances"][0])
    launches = len(got["flows_out"])
    nvtx = 29
    assert got["slices"] == 176 + 32 + 58 + launches + nvtx + gaps + instances
    assert got["flows_out"] == got["flows_in"]
    assert result.flagged_keys == 1


def nsys_name_is(name: str) -> Any:
    import polars as pl

    return pl.col("name") == name


def test_cli_export(shared: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    run = gpuopt(
        "torch", "export", "perfetto", str(shared / "h200/torch/eager_trace.json"), "--out", str(out)
    )
    assert run.code == 0, run.stderr
    assert "ui.perfetto.dev" in run.stdout
    decode(out)
    out2 = tmp_path / "n.pftrace"
    run = gpuopt(
        "nsys", "export", "perfetto", str(shared / "h200/nsys/eager.sqlite"), "--out", str(out2), "--json"
    )
    assert run.code == 0, run.stderr
    assert run.json()["data"]["format"] == "perfetto-protobuf"
    decode(out2)
    bad = gpuopt("nsys", "export", "perfetto", str(shared / "h200/nsys/eager.sqlite"), "--out", str(tmp_path))
    assert bad.code == 2


def test_nsys_window_keeps_only_the_ranges_and_calls_it_overlaps(shared: Path, tmp_path: Path) -> None:
    # Found by a hostile trial: --window filtered the GPU work but wrote all 29 NVTX ranges (and with
    # --all-api every API call) whatever the window.
    export = str(shared / "h200/nsys/eager.sqlite")
    out = tmp_path / "w.pftrace"
    run = gpuopt("nsys", "export", "perfetto", export, "--out", str(out), "--window", "0:1", "--all-api")
    assert run.code == 0, run.stderr
    assert decode(out)["slices"] == 0  # nothing of the capture lies in its first nanosecond
    whole = tmp_path / "all.pftrace"
    assert gpuopt("nsys", "export", "perfetto", export, "--out", str(whole)).code == 0
    assert decode(whole)["slices"] > 0


def _trace_processor() -> Any:
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    shell = os.environ.get("PERFETTO_TRACE_PROCESSOR_SHELL")
    return TraceProcessor, (TraceProcessorConfig(bin_path=shell) if shell else TraceProcessorConfig())


def test_trace_processor_reads_the_slices(shared: Path, tmp_path: Path) -> None:
    trace = torch_trace.open(shared / "h200/graphs/graph_trace.json")
    out = tmp_path / "graph.pftrace"
    result = perfetto.export_torch(trace, out)
    processor, config = _trace_processor()
    try:
        tp = processor(trace=str(out), config=config)
    except Exception as e:  # the binary is downloaded on first use; no network, no binary
        pytest.skip(f"Perfetto's trace_processor_shell cannot be had here: {type(e).__name__}: {e}")
    try:
        rows = list(tp.query("select count(*) as n from slice"))
        assert rows[0].n == result.slices
        flows = list(tp.query("select count(*) as n from flow"))
        assert flows[0].n == result.flows
    finally:
        tp.close()


def test_a_diff_that_is_not_a_profile_diff_is_refused_field_by_field(shared: Path, tmp_path: Path) -> None:
    # Found by a hostile trial: deep nesting was a RecursionError and rows of the wrong type an
    # AttributeError (exit 1); a wrong schema, dimension, kind or flag passed unnoticed (exit 0).
    good = {
        "schema": "gpuopt.profile.diff/v2",
        "data": {
            "kind": "nsys",
            "by": "kernel",
            "table": {"rows": [{"key": "k", "flagged": True, "change_pct": 1.0}], "truncated": False},
        },
    }
    path = tmp_path / "diff.json"

    def with_(edit: Any) -> dict[str, Any]:
        doc = json.loads(json.dumps(good))
        edit(doc)
        return doc

    bad: list[Any] = [
        "[" * 100_000 + "]" * 100_000,
        with_(lambda d: d.update(schema="gpuopt.profile.diff/v999")),
        with_(lambda d: d["data"].update(kind="torch")),
        with_(lambda d: d["data"].update(by="stream")),
        with_(lambda d: d["data"]["table"].update(rows=[[1, 2, 3]])),
        with_(lambda d: d["data"]["table"].update(rows={"a": 1})),
        with_(lambda d: d["data"]["table"]["rows"][0].update(flagged="yes")),
        with_(lambda d: d["data"]["table"]["rows"][0].update(key=7)),
        with_(lambda d: d["data"]["table"]["rows"][0].update(change_pct="12")),
    ]
    export = str(shared / "h200/nsys/eager.sqlite")
    for doc in bad:
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        run = gpuopt(
            "nsys",
            "export",
            "perfetto",
            export,
            "--out",
            str(tmp_path / "o.pftrace"),
            "--diff",
            str(path),
            "--json",
        )
        assert run.code == 2, (str(doc)[:80], run.stdout[-400:], run.stderr[-400:])
        assert run.json()["errors"][0]["code"] == "perfetto_diff_invalid", str(doc)[:80]
    path.write_text(
        json.dumps(with_(lambda d: d["data"]["table"]["rows"][0].update(change_pct=float("nan"))))
    )
    with pytest.raises(errors.InputError, match="row 0"):
        perfetto.flagged_of_diff(path, "nsys")
    path.write_text(json.dumps(good))
    assert perfetto.flagged_of_diff(path, "nsys").keys == {"k": 1.0}
