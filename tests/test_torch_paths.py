"""``gpuopt torch paths``: every row against an independent reading of the fixtures (``kineto_oracle``),
and hand counts: graph replays belong to the op stack that launched the cudaGraphLaunch."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from conftest import gpuopt
from gpuopt import torch_trace
from kineto_oracle import load
from kineto_oracle import paths as oracle_paths

FIXTURES = [
    "h200/torch/eager_trace.json",
    "h200/graphs/graph_trace.json",
    "gpuopt/h200/decode/decode_eager_trace.json.gz",
]
SUMS = [
    "instances",
    "cpu_inclusive_ns",
    "cpu_exclusive_ns",
    "gpu_events_inclusive",
    "gpu_inclusive_ns",
    "gpu_events_exclusive",
    "gpu_exclusive_ns",
    "graph_replay_events_inclusive",
    "graph_replay_inclusive_ns",
]


@pytest.mark.parametrize("rel", FIXTURES)
def test_every_path_equals_the_oracle(shared: Path, rel: str) -> None:
    table = torch_trace.open(shared / rel).paths()
    truth = oracle_paths(load(shared / rel))
    got = {tuple(row["path"].split(" > ")): {k: row[k] for k in SUMS} for row in table.iter_rows(named=True)}
    assert got == truth
    # Depth first: each row's parent comes before it and is one level up.
    ids = dict(zip(table["path_id"], table["depth"], strict=True))
    for row in table.iter_rows(named=True):
        if row["parent_path_id"] is None:
            assert row["depth"] == 1
        else:
            assert row["parent_path_id"] < row["path_id"]
            assert ids[row["parent_path_id"]] == row["depth"] - 1


def test_graph_replays_are_attributed_to_the_launching_op(shared: Path) -> None:
    trace = torch_trace.open(shared / "h200/graphs/graph_trace.json")
    paths = trace.paths()
    region = paths.filter(pl.col("path") == "Torch-Compiled Region: 0/0").row(0, named=True)
    # Six cudaGraphLaunch calls replaying 52 kernels each (counted in the JSON by hand).
    assert region["graph_replay_events_inclusive"] == 6 * 52
    assert region["instances"] == 6
    kernels = trace.kernel_paths()
    replayed = kernels.filter(pl.col("launch") == "graph_replay")
    assert replayed["events"].sum() == 312
    assert set(replayed["call"]) == {"cudaGraphLaunch"}
    assert set(replayed["path"]) == {
        "Torch-Compiled Region: 0/0 > ## Call CompiledFxGraph "
        "fmp7c2klmqu5g754lbu2yhf5uc3wocbd6j7y6pzcwkaiqgsulvub ##"
    }
    # Every GPU event is in exactly one group.
    assert kernels["events"].sum() == 454 + 30 + 4


def test_decode_gemms_sit_under_their_linear_layers(shared: Path) -> None:
    kernels = torch_trace.open(shared / "gpuopt/h200/decode/decode_eager_trace.json.gz").kernel_paths()
    mm = kernels.filter(pl.col("path") == "aten::linear > aten::matmul > aten::mm")
    assert mm["events"].sum() == 171
    assert mm["gpu_time_ns"].sum() == 1_028_284
    # cuBLAS launches through cudaLaunchKernelExC and the driver's cuLaunchKernelEx.
    assert set(mm["call"]) == {"cudaLaunchKernelExC", "cuLaunchKernelEx"}
    assert set(mm["launch"]) == {"direct"}


def test_cli_paths_and_kernels(shared: Path) -> None:
    path = shared / "h200/graphs/graph_trace.json"
    result = gpuopt("torch", "paths", str(path), "--json", "--limit", "0")
    assert result.code == 0, result.stderr
    doc = result.json()
    assert doc["schema"] == "gpuopt.torch.paths/v1"
    assert doc["data"]["table"]["name"] == "paths"
    result = gpuopt("torch", "paths", str(path), "--kernels", "--json")
    assert result.code == 0, result.stderr
    assert result.json()["data"]["table"]["name"] == "kernel_paths"
    human = gpuopt("torch", "paths", str(path), "--limit", "0")
    assert human.code == 0 and "Region: 0/0" in human.stdout
