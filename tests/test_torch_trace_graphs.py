"""CUDA-graph replays in Kineto traces and per-op GPU totals (issue 12), on the real H200 traces; the
truth is computed here from the JSON events."""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from conftest import gpuopt
from gpuopt import torch_trace


def _ns(us: float) -> int:
    return int((Decimal(str(us)) * 1000).to_integral_value())


@pytest.fixture(scope="module")
def graph_trace(shared: Path) -> Path:
    return shared / "h200" / "graphs" / "graph_trace.json"


def _replays(path: Path) -> list[tuple[int, int, int, int]]:
    """(gpu time, latency from call start, call duration, events) of each cudaGraphLaunch, from the JSON."""
    events = json.loads(path.read_text())["traceEvents"]
    by_corr: dict[int, list[dict[str, object]]] = defaultdict(list)
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            by_corr[e["args"]["correlation"]].append(e)
    out = []
    for call in (e for e in events if e.get("cat") == "cuda_runtime" and e["name"] == "cudaGraphLaunch"):
        gpu = by_corr[call["args"]["correlation"]]
        start = min(_ns(g["ts"]) for g in gpu)  # type: ignore[arg-type]
        end = max(_ns(g["ts"]) + _ns(g["dur"]) for g in gpu)  # type: ignore[arg-type]
        out.append((end - start, start - _ns(call["ts"]), _ns(call["dur"]), len(gpu)))
    return out


def test_graph_table_equals_the_replays_in_the_json(graph_trace: Path) -> None:
    replays = _replays(graph_trace)
    [row] = torch_trace.open(graph_trace).graphs().to_dicts()
    gpu = sorted(r[0] for r in replays)
    assert row["executions"] == row["launches"] == len(replays) == 6
    assert row["kernels_per_execution"] == 52
    assert row["gpu_total_ns"] == sum(gpu)
    assert (row["gpu_median_ns"], row["gpu_p90_ns"], row["gpu_max_ns"]) == (gpu[2], gpu[5], gpu[5])
    assert row["host_max_ns"] == max(r[2] for r in replays)
    assert row["launch_latency_median_ns"] == sorted(r[1] for r in replays)[2]


def test_graph_kernels_are_measured_apart(graph_trace: Path) -> None:
    """Defect 4: the 312 graph kernels are not measured from the cudaGraphLaunch of their graph."""
    [summary] = torch_trace.open(graph_trace).summary().traces
    assert summary.gpu is not None and summary.gpu.launch_latency is not None
    lat = summary.gpu.launch_latency
    assert lat.graph_kernels == 312
    assert lat.from_call_start is not None and lat.from_call_start.count == 454 - 312
    assert lat.graph is not None and lat.graph.executions == 6
    assert lat.graph.launch_latency.p50_ns == sorted(r[1] for r in _replays(graph_trace))[2]


def test_nested_same_name_op_counts_gpu_work_once(shared: Path) -> None:
    """Defect 3: aten::sum inside aten::sum launched 6 GPU events (36,385 ns), not 12 (72,770 ns)."""
    ops = torch_trace.open(shared / "h200" / "torch" / "eager_trace.json").ops()
    row = ops.filter(pl.col("name") == "aten::sum").to_dicts()[0]
    assert (row["count"], row["gpu_events_total"], row["gpu_time_total_ns"]) == (6, 6, 36_385)


def test_cli_torch_graphs(graph_trace: Path) -> None:
    run = gpuopt("torch", "graphs", str(graph_trace), "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["schema"] == "gpuopt.torch.graphs/v1"
    assert doc["data"]["table"]["rows"][0]["executions"] == 6
    human = gpuopt("torch", "summary", str(graph_trace))
    assert "graph: execution from call start" in human.stdout
