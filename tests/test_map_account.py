"""``gpuopt map account`` (spec §8, acceptance 53): the pinned examples, window clipping, zero-length events,
the three input formats, microsecond rounding, every bad-input code, and a real nsys trace whose union must
equal the busy time gpuopt's nsys engine reports for the same device and stream."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from fixture_data import unpacked
from gpuopt import map as maps
from gpuopt.errors import InputError

FIXTURES = unpacked()
NSYS = FIXTURES / "h200" / "nsys"


def _ev(timeline: str, start: Any, end: Any, category: str = "k", name: str = "a") -> dict[str, Any]:
    return {"timeline": timeline, "start_ns": start, "end_ns": end, "category": category, "name": name}


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


PINNED = [_ev("s1", 0, 10, name="a"), _ev("s2", 5, 15, name="b"), _ev("s1", 15, 20, name="a")]


def _code(fn: Any, *args: Any, **kw: Any) -> tuple[str, str | None]:
    with pytest.raises(InputError) as info:
        fn(*args, **kw)
    return info.value.code, info.value.path


def test_pinned_examples(tmp_path: Path) -> None:
    out = maps.account(_jsonl(tmp_path / "e.jsonl", PINNED))
    t = out.data.totals
    assert (t.union_ns, t.overlap_excess_ns, t.max_concurrency, t.serial_ns, t.idle_ns) == (20, 5, 2, 25, 0)
    assert (t.window_ns, t.events, t.zero_length_events) == (20, 3, 0)
    assert out.data.window.model_dump() == {"start_ns": 0, "end_ns": 20, "explicit": False}
    assert out.data.timelines == ["s1", "s2"]
    groups = {g.key["name"]: g for g in out.data.groups}
    assert (groups["a"].count, groups["a"].serial_ns, groups["a"].union_ns, groups["a"].exclusive_ns) == (
        2,
        15,
        15,
        10,
    )
    assert (groups["b"].union_ns, groups["b"].exclusive_ns, groups["b"].share_of_window) == (10, 5, 0.5)
    assert out.groups.columns == [
        "category",
        "name",
        "count",
        "zero_length",
        "serial_ns",
        "union_ns",
        "exclusive_ns",
        "share_of_window",
    ]
    assert out.groups["union_ns"].to_list() == [15, 10]

    back = maps.account(_jsonl(tmp_path / "b.jsonl", [_ev("s", 0, 10), _ev("s", 10, 20)]))
    assert (back.data.totals.max_concurrency, back.data.totals.overlap_excess_ns) == (1, 0)
    assert back.data.totals.union_ns == 20


def test_window_timelines_and_zero_length(tmp_path: Path) -> None:
    rows = [*PINNED, _ev("s2", 30, 40, name="b"), _ev("s3", 12, 12, name="c"), _ev("s3", 50, 50, name="c")]
    path = _jsonl(tmp_path / "e.jsonl", rows)
    out = maps.account(path, window="8:32")
    t = out.data.totals
    # clipped: [8,10) [8,15) [15,20) [30,32); the instant at 12 is inside, the one at 50 is not
    assert (t.window_ns, t.union_ns, t.idle_ns, t.serial_ns, t.overlap_excess_ns) == (24, 14, 10, 16, 2)
    assert (t.events, t.zero_length_events, t.max_concurrency) == (5, 1, 2)
    c = next(g for g in out.data.groups if g.key["name"] == "c")
    assert (c.count, c.zero_length, c.union_ns, c.share_of_window) == (1, 1, 0, 0.0)
    only = maps.account(path, timelines=["s1"], group_by="timeline,name")
    assert only.data.timelines == ["s1"]
    assert (only.data.totals.union_ns, only.data.totals.window_ns) == (15, 20)
    assert [g.key for g in only.data.groups] == [{"timeline": "s1", "name": "a"}]
    globbed = maps.account(path, timelines=["s[23]"])
    assert globbed.data.timelines == ["s2", "s3"]
    assert globbed.data.totals.zero_length_events == 2
    # a window holding no event is all idle, and groups with no event in it are left out
    empty = maps.account(path, window=(60, 70))
    assert (empty.data.totals.idle_ns, empty.data.totals.events, empty.data.groups) == (10, 0, [])


def test_parquet_arrow_and_microseconds_agree(tmp_path: Path) -> None:
    frame = pl.DataFrame(PINNED)
    frame.write_parquet(tmp_path / "e.parquet")
    frame.write_ipc(tmp_path / "e.arrow")
    frame.write_ipc_stream(tmp_path / "e.arrows")
    expected = maps.account(_jsonl(tmp_path / "e.jsonl", PINNED)).data
    for name, fmt in (("e.parquet", "parquet"), ("e.arrow", "arrow"), ("e.arrows", "arrow")):
        got = maps.account(tmp_path / name).data
        assert got.source.format == fmt
        assert got.model_dump(exclude={"source"}) == expected.model_dump(exclude={"source"})
    # microseconds round to the nearest ns: 0.0104 us -> 10 ns, 0.0046 us -> 5 ns
    us = [
        {"timeline": "s1", "start_us": 0, "end_us": 0.0104, "category": "k", "name": "a"},
        {"timeline": "s2", "start_us": 0.0046, "end_us": 0.015, "category": "k", "name": "b"},
        {"timeline": "s1", "start_us": 0.015, "end_us": 0.02, "category": "k", "name": "a"},
    ]
    got = maps.account(_jsonl(tmp_path / "us.jsonl", us)).data
    assert got.source.time_unit == "us"
    assert got.model_dump(exclude={"source"}) == expected.model_dump(exclude={"source"})
    pl.DataFrame(us).write_parquet(tmp_path / "us.parquet")
    assert maps.account(tmp_path / "us.parquet").data.totals == expected.totals


def test_bad_input_codes(tmp_path: Path) -> None:
    def jsonl_code(text: str, **kw: Any) -> tuple[str, str | None]:
        path = tmp_path / "bad.jsonl"
        path.write_text(text)
        return _code(maps.account, path, **kw)

    good = json.dumps(_ev("s", 0, 10))
    assert jsonl_code(good + "\n" + json.dumps(_ev("s", -1, 10))) == (
        "event_time_negative",
        "events[1].start_ns",
    )
    assert jsonl_code(json.dumps(_ev("s", 9, 3))) == ("event_time_reversed", "events[0].end_ns")
    assert jsonl_code(json.dumps(_ev("s", 1.5, 3))) == ("value_type_invalid", "events[0].start_ns")
    assert jsonl_code(json.dumps(_ev("s", True, 3))) == ("value_type_invalid", "events[0].start_ns")
    assert jsonl_code(json.dumps(_ev("s", 0, "3"))) == ("value_type_invalid", "events[0].end_ns")
    no_name = {k: v for k, v in _ev("s", 0, 1).items() if k != "name"}
    assert jsonl_code(json.dumps(no_name)) == ("column_missing", "events[0].name")
    assert jsonl_code('{"timeline": "s", "timeline": "t"}') == ("events_invalid", "events[0]")
    assert jsonl_code(good.replace("10", "NaN")) == ("events_invalid", "events[0]")
    assert jsonl_code("[1, 2]") == ("events_invalid", "events[0]")
    both = {**_ev("s", 0, 1), "start_us": 0.0, "end_us": 1.0}
    assert jsonl_code(json.dumps(both))[0] == "events_time_columns_ambiguous"
    us_bad = {"timeline": "s", "start_us": -0.5, "end_us": 1, "category": "k", "name": "a"}
    assert jsonl_code(json.dumps(us_bad)) == ("event_time_invalid", "events[0].start_us")
    assert jsonl_code(good, timelines=["gpu*"])[0] == "timeline_not_found"
    assert jsonl_code(good, window="5:5")[0] == "window_invalid"
    assert jsonl_code(good, window="a:b")[0] == "window_invalid"
    assert jsonl_code(good, group_by="category,stream")[0] == "group_by_invalid"
    assert jsonl_code(good, root=tmp_path)[0] == "map_binding_incomplete"
    assert jsonl_code("\n")[0] == "events_none_selected"

    frame = pl.DataFrame([_ev("s", 0, 10), _ev("s", 5, 2)])
    frame.write_parquet(tmp_path / "rev.parquet")
    assert _code(maps.account, tmp_path / "rev.parquet") == ("event_time_reversed", "events[1].end_ns")
    frame.drop("category").write_parquet(tmp_path / "nocat.parquet")
    assert _code(maps.account, tmp_path / "nocat.parquet") == ("column_missing", "category")
    frame.with_columns(pl.col("start_ns").cast(pl.Float64)).write_parquet(tmp_path / "float.parquet")
    assert _code(maps.account, tmp_path / "float.parquet") == ("value_type_invalid", "start_ns")
    frame.with_columns(pl.Series("name", ["a", None])).write_ipc(tmp_path / "null.arrow")
    assert _code(maps.account, tmp_path / "null.arrow") == ("value_missing", "events[1].name")
    (tmp_path / "trunc.parquet").write_bytes((tmp_path / "nocat.parquet").read_bytes()[:40])
    assert _code(maps.account, tmp_path / "trunc.parquet")[0] == "events_invalid"
    assert _code(maps.account, tmp_path / "absent.jsonl")[0] == "file_not_found"


def test_cli_envelope_and_exit_codes(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "e.jsonl", PINNED)
    run = [sys.executable, "-m", "gpuopt", "map", "account", str(path), "--json"]
    ok = subprocess.run(run, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    env = json.loads(ok.stdout)
    assert (env["schema"], env["ok"]) == ("gpuopt.map.account/v1", True)
    assert env["data"]["totals"]["overlap_excess_ns"] == 5
    assert env["provenance"]["inputs"][0]["path"].endswith("e.jsonl")
    bad = subprocess.run([*run, "--window", "9:1"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    err = json.loads(bad.stdout)
    assert (err["ok"], err["errors"][0]["code"]) == (False, "window_invalid")
    assert "Traceback" not in bad.stderr
    human = subprocess.run([*run[:-1], "--group-by", "timeline"], capture_output=True, text=True, check=False)
    assert human.returncode == 0
    assert "overlap_excess_ns   5" in human.stdout


def _nsys_events(tmp_path: Path) -> Path:
    """NVIDIA's own ``cuda_gpu_trace`` rows of the eager fixture as events (one timeline per stream)."""
    rows = []
    with (NSYS / "stats_cuda_gpu_trace.csv").open(newline="") as f:
        for r in csv.DictReader(f):
            name = r["Name"]
            category = "memcpy" if "memcpy" in name else "memset" if "memset" in name else "kernel"
            start = int(r["Start (ns)"])
            rows.append(
                {
                    "timeline": f"{r['Device']}/stream{r['Strm']}",
                    "start_ns": start,
                    "end_ns": start + int(r["Duration (ns)"]),
                    "category": category,
                    "name": name,
                }
            )
    out = tmp_path / "gpu_trace.parquet"
    pl.DataFrame(rows).write_parquet(out)
    return out


def test_real_trace_agrees_with_the_nsys_engine(tmp_path: Path) -> None:
    from gpuopt import nsys

    device = nsys.open(NSYS / "eager.sqlite").timeline().devices[0]
    events = _nsys_events(tmp_path)
    out = maps.account(events, group_by="category")
    t = out.data.totals
    assert (t.events, t.window_ns) == (266, device.span_ns)
    assert (t.union_ns, t.idle_ns) == (device.busy_ns, device.idle_ns) == (14_515_843, 1_191_235_371)
    by = {g.key["category"]: g for g in out.data.groups}
    assert by["kernel"].count == device.kernels == 176
    assert by["kernel"].union_ns == by["kernel"].exclusive_ns == device.kernel_busy_ns == 7_405_583
    assert t.serial_ns == t.union_ns + t.overlap_excess_ns
    stream7 = next(s for s in device.streams if s.stream_id == 7)
    one = maps.account(events, timelines=["*stream7"])
    assert one.data.totals.union_ns == stream7.busy_ns == 14_514_243
    # per kernel name: each name's union is its total time in NVIDIA's kernel summary (no kernel overlap)
    names = maps.account(events, group_by="category,name").groups.filter(pl.col("category") == "kernel")
    with (NSYS / "stats_cuda_gpu_kern_sum.csv").open(newline="") as f:
        summary = {r["Name"]: int(r["Total Time (ns)"]) for r in csv.DictReader(f)}
    assert dict(zip(names["name"], names["union_ns"], strict=True)) == summary
