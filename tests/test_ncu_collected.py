"""A report made by `gpuopt ncu collect` on an H200 (tests/data/ncu_collect) reads back as facts."""

from __future__ import annotations

import json
from pathlib import Path

from gpuopt import ncu
from gpuopt.models.ncu import NcuCollection

COLLECTED = Path(__file__).parent / "data" / "ncu_collect"


def test_collection_record_names_the_exact_command_and_identity() -> None:
    record = NcuCollection.model_validate(json.loads((COLLECTED / "gpuopt-collect.json").read_text()))
    assert record.exit_code == 0
    assert record.argv[1:3] == ["--clock-control", "none"]  # never changes the GPU's clocks
    assert record.ncu.version == "2025.3.1.0"
    assert record.gpus is not None and record.gpus.gpus[0].name == "NVIDIA H200"
    assert record.gpus.gpus[0].compute_capability == "9.0"


def test_collected_report_reads_back_per_launch() -> None:
    report = ncu.open(COLLECTED / "report.ncu-rep")
    assert report.info.tool.version == "2025.3.1.0"
    assert report.info.clock_control.value == "none"
    launches = report.launches
    assert launches["kernel_name"].to_list() == ["vec_add", "strided_copy", "local_spill", "wmma_gemm"] * 2
    spill = launches.filter(launches["kernel_name"] == "local_spill")
    assert spill["local_store_inst"].to_list() == [8_388_608.0, 8_388_608.0]
    gemm = launches.filter(launches["kernel_name"] == "wmma_gemm")
    assert all(v > 4.0 for v in gemm["tensor_pipe_active_pct"].to_list())
    others = launches.filter(launches["kernel_name"] != "wmma_gemm")
    assert set(others["tensor_pipe_active_pct"].to_list()) == {0.0}
