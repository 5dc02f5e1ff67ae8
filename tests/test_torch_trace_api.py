"""``gpuopt torch api``: per runtime/driver call name, exact against sums made here from the JSON events."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import torch_trace


def _by_hand(path: Path) -> dict[tuple[str, str], list[int]]:
    """Durations (ns) of every complete cuda_runtime/cuda_driver event, from the decimal µs text."""
    events = json.loads(path.read_text(), parse_float=Decimal)["traceEvents"]
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            ns = (Decimal(e["dur"]) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP)
            found[(e["name"], e["cat"])].append(int(ns))
    return found


def test_api_table_equals_the_sums_of_the_json_events(shared: Path) -> None:
    path = shared / "h200" / "torch" / "eager_trace.json"
    truth = _by_hand(path)
    frame = torch_trace.open(path).api()
    assert frame.columns == [
        "rank", "name", "category", "count", "total_ns", "mean_ns", "median_ns", "min_ns", "max_ns",
        "stddev_ns", "share_pct",
    ]  # fmt: skip
    assert frame.height == len(truth) == 8
    everything = sum(sum(v) for v in truth.values())
    for row in frame.iter_rows(named=True):
        durations = truth[(row["name"], row["category"])]
        assert row["rank"] == 0
        assert row["count"] == len(durations)
        assert row["total_ns"] == sum(durations)
        assert (row["min_ns"], row["max_ns"]) == (min(durations), max(durations))
        assert row["mean_ns"] == pytest.approx(statistics.fmean(durations), rel=1e-12)
        assert row["median_ns"] == pytest.approx(statistics.median(durations), rel=1e-12)
        assert row["stddev_ns"] == pytest.approx(statistics.stdev(durations), rel=1e-12)
        assert row["share_pct"] == pytest.approx(100 * sum(durations) / everything, rel=1e-12)
    # Largest total first; the numbers a reader checks by eye.
    top = frame.row(0, named=True)
    assert (top["name"], top["count"], top["total_ns"]) == ("cudaStreamSynchronize", 3, 813_191)
    launch = frame.filter(frame["name"] == "cuLaunchKernelEx").row(0, named=True)
    assert (launch["category"], launch["count"], launch["total_ns"]) == ("cuda_driver", 30, 191_014)
    assert frame["total_ns"].sum() == everything == 1_434_216


def test_cli_prints_a_sortable_table_with_totals(shared: Path) -> None:
    path = str(shared / "h200" / "torch" / "eager_trace.json")
    run = gpuopt("torch", "api", path, "--sort", "count", "--limit", "2", "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]["table"]
    assert data["name"] == "api" and data["total_rows"] == 8
    assert [(r["name"], r["count"]) for r in data["rows"]] == [
        ("cudaLaunchKernel", 36),
        ("cuLaunchKernelEx", 30),
    ]
    people = gpuopt("torch", "api", path)
    assert people.code == 0, people.stderr
    assert "cudaStreamSynchronize" in people.stdout and "813.19 µs" in people.stdout
    assert "119" in people.stdout and "1.43 ms" in people.stdout  # totals: 119 calls, 1.434 ms


def test_a_cpu_only_trace_has_no_rows(shared: Path) -> None:
    path = next((shared / "public" / "torch").glob("hta_cpu_only_*"))
    assert torch_trace.open(path).api().height == 0
