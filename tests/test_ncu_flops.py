"""``gpuopt ncu flops``: roofline points with the datasheet peak of the report's GPU beside the report's."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from conftest import gpuopt
from gpuopt import flops, ncu

pytest.importorskip("ncu_report")


def test_h200_points_against_the_datasheet(shared: Path) -> None:
    frame, gpus = flops.ncu_flops(ncu.open(shared / "h200/ncu/kernels_full.ncu-rep"))
    assert {g.key for g in gpus if g is not None} == {"h200"}
    assert (frame["achieved_flop_per_s"] > 0).all()
    wmma = frame.filter(pl.col("kernel_function") == "wmma_gemm")
    assert set(wmma["datasheet_peak"]) == {"fp16_tensor"}
    assert set(wmma["datasheet_peak_tflop_per_s"]) == {989.5}
    row = wmma.row(0, named=True)
    assert row["flop_pct_of_datasheet_peak"] == pytest.approx(100 * row["achieved_flop_per_s"] / 989.5e12)
    assert row["dram_pct_of_datasheet_peak"] == pytest.approx(100 * row["dram_bytes_per_s"] / 4.8e12)
    vec = frame.filter(pl.col("kernel_function") == "vec_add")
    assert set(vec["datasheet_peak"]) == {"fp32"} and set(vec["datasheet_peak_tflop_per_s"]) == {67.0}


def test_precisions_map_to_datasheet_columns() -> None:
    assert flops.ncu_peak("tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on") == ("bf16_tensor", 2.0)
    assert flops.ncu_peak("tensor_src_tf32_dst_fp32") == ("tf32_tensor", 1.0)
    assert flops.ncu_peak("tensor_src_fp8_sparsity_off") == ("fp8_tensor", 1.0)
    assert flops.ncu_peak("fp16") == (None, 1.0)
    assert flops.ncu_peak("tensor_src_int8") == (None, 1.0)


def test_a100_report_and_cli(shared: Path) -> None:
    report = sorted((shared / "public/ncu").glob("*.ncu-rep"))[0]
    _, gpus = flops.ncu_flops(ncu.open(report))
    assert {g.key for g in gpus if g is not None} == {"a100-pcie-80gb"}
    run = gpuopt("ncu", "flops", str(report), "--gpu", "a100-sxm4-80gb", "--json")
    assert run.code == 0, run.stderr
    rows = run.json()["data"]["table"]["rows"]
    assert {r["datasheet_gpu"] for r in rows} == {"a100-sxm4-80gb"}
    assert gpuopt("ncu", "flops", str(report), "--gpu", "x", "--json").code == 2
