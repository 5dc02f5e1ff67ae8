"""``--steps`` / ``--window`` (issue 16): every torch fact restricted to steady-state steps or a window.

The truth is computed here from the JSON itself (decimal microseconds read exactly as ``Decimal``), on a
real trace with five ``ProfilerStep#101..105`` ranges (HTA's ns-resolution test trace).
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from gpuopt import torch_trace
from gpuopt.errors import InputError

STEPS = "public/torch/hta_ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
HOST = {"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver"}
GPU = {"kernel", "gpu_memcpy", "gpu_memset"}


def _ns(us: Any) -> int:
    return int(Decimal(str(us)) * 1000)


@pytest.fixture(scope="module")
def events(shared: Path) -> list[dict[str, Any]]:
    with gzip.open(shared / STEPS, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def _extent(events: list[dict[str, Any]], first: int, last: int) -> tuple[int, int]:
    steps = [
        e for e in events if e["name"].startswith("ProfilerStep#") and first <= int(e["name"][13:]) <= last
    ]
    return min(_ns(e["ts"]) for e in steps), max(_ns(e["ts"]) + _ns(e["dur"]) for e in steps)


def _kernels_launched_in(events: list[dict[str, Any]], lo: int, hi: int) -> list[dict[str, Any]]:
    """Kernels whose launching runtime call starts in [lo, hi) (the steps rule; all kernels here link)."""
    calls = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") == "cuda_runtime" and lo <= _ns(e["ts"]) < hi and "correlation" in e.get("args", {})
    }
    return [e for e in events if e.get("cat") == "kernel" and e["args"]["correlation"] in calls]


def test_steps_restrict_kernels_ops_and_steps(shared: Path, events: list[dict[str, Any]]) -> None:
    lo, hi = _extent(events, 102, 104)
    kernels = _kernels_launched_in(events, lo, hi)
    ops = [e for e in events if e.get("cat") == "cpu_op" and lo <= _ns(e["ts"]) < hi]
    assert 0 < len(kernels) < sum(e.get("cat") == "kernel" for e in events)

    trace = torch_trace.open(shared / STEPS)
    scoped = trace.scoped(steps=(102, 104))
    k = scoped.kernels()
    assert int(k["count"].sum()) == len(kernels)
    assert int(k["total_ns"].sum()) == sum(_ns(e["dur"]) for e in kernels)
    o = scoped.ops()
    assert int(o["count"].sum()) == len(ops)
    assert int(o["total_cpu_ns"].sum()) == sum(_ns(e["dur"]) for e in ops)
    steps = scoped.steps().filter(scoped.steps()["name"].str.starts_with("ProfilerStep#"))
    assert steps["name"].to_list() == ["ProfilerStep#102", "ProfilerStep#103", "ProfilerStep#104"]
    # Times stay relative to the file's origin: the scoped rows equal the unscoped ones.
    whole = trace.steps().filter(trace.steps()["name"].is_in(steps["name"].to_list()))
    assert steps["start_ns"].to_list() == whole["start_ns"].to_list()
    assert steps["gpu_time_ns"].to_list() == whole["gpu_time_ns"].to_list()
    # The summary counts only what is in scope.
    (summary,) = scoped.summary().traces
    assert summary.counts.kernels == len(kernels)
    assert summary.counts.cpu_ops == len(ops)
    assert summary.profiler_steps == 3


def test_window_keeps_events_overlapping_it(shared: Path, events: list[dict[str, Any]]) -> None:
    origin = min(_ns(e["ts"]) for e in events if e.get("cat") in HOST | GPU)
    lo, hi = _extent(events, 103, 103)
    start, end = lo - origin, hi - origin
    kernels = [
        e
        for e in events
        if e.get("cat") == "kernel" and _ns(e["ts"]) < hi and _ns(e["ts"]) + _ns(e["dur"]) > lo
    ]
    scoped = torch_trace.open(shared / STEPS).scoped(window=(start, end))
    k = scoped.kernels()
    assert int(k["count"].sum()) == len(kernels) > 0
    assert int(k["total_ns"].sum()) == sum(_ns(e["dur"]) for e in kernels)


def test_steps_outside_the_trace_are_an_input_error(shared: Path) -> None:
    with pytest.raises(InputError) as err:
        torch_trace.open(shared / STEPS).scoped(steps=(1, 5))
    assert err.value.code == "torch_trace_steps_missing"
    assert "101..105" in str(err.value.observed)


def test_cli_steps_and_window(shared: Path, events: list[dict[str, Any]]) -> None:
    lo, hi = _extent(events, 102, 104)
    run = gpuopt("torch", "kernels", str(shared / STEPS), "--steps", "102:104", "--limit", "0", "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["scope"] == "steps 102:104"
    assert sum(r["count"] for r in data["table"]["rows"]) == len(_kernels_launched_in(events, lo, hi))
    run = gpuopt("torch", "summary", str(shared / STEPS), "--steps", "102:", "--json")
    assert run.code == 0, run.stderr
    assert run.json()["data"]["scope"] == "steps 102:"
    assert run.json()["data"]["traces"][0]["profiler_steps"] == 4
    people = gpuopt("torch", "timeline", str(shared / STEPS), "--window", "0:1ms")
    assert people.code == 0, people.stderr
    assert "scope: window 0:1ms" in people.stdout


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--steps", "x:2"], "torch_trace_scope_invalid"),
        (["--steps", "4:2"], "torch_trace_scope_invalid"),
        (["--steps", "0:9223372036854775808"], "torch_trace_scope_invalid"),  # was an OverflowError, exit 1
        (["--window", "5ms:1ms"], "window_invalid"),  # one --window grammar and code everywhere
        (["--steps", "1:2", "--window", "0:1"], "torch_trace_scope_invalid"),
        (["--steps", "1:5"], "torch_trace_steps_missing"),
    ],
)
def test_cli_bad_scope_exits_2(shared: Path, args: list[str], code: str) -> None:
    run = gpuopt("torch", "kernels", str(shared / STEPS), *args, "--json")
    assert run.code == 2, run.stdout
    assert run.json()["errors"][0]["code"] == code
