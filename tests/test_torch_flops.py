"""``gpuopt torch flops``: FLOPs of the decode trace's linear layers equal 2·M·N·K from the recorded
``Input Dims`` (computed here from the JSON), counted once (the ``aten::mm`` inside each ``aten::linear`` is
not counted again), rates over the GPU time each op launched, peaks from the datasheet table."""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from conftest import gpuopt
from gpuopt import flops, torch_trace
from gpuopt.errors import InputError

DECODE = "gpuopt/h200/decode/decode_eager_trace.json.gz"


def _linear_shapes(path: Path) -> Counter[tuple[int, int, int]]:
    """(M, N, K) of every aten::linear in the trace, from Input Dims: x [..., K], weight [N, K]."""
    doc = json.loads(gzip.decompress(path.read_bytes()))
    out: Counter[tuple[int, int, int]] = Counter()
    for ev in doc["traceEvents"]:
        if ev.get("cat") == "cpu_op" and ev["name"] == "aten::linear":
            x, w = ev["args"]["Input Dims"][:2]
            out[(math.prod(x[:-1]), w[0], x[-1])] += 1
    return out


def test_linear_flops_are_two_m_n_k(shared: Path) -> None:
    shapes = _linear_shapes(shared / DECODE)
    # By hand from the trace: the prefill (4 x 256 tokens) and 6 decode steps (4 x 1) of 4 layers.
    assert shapes == {
        (1024, 1024, 1024): 8,
        (1024, 512, 1024): 4,
        (1024, 5632, 1024): 4,
        (1024, 1024, 2816): 4,
        (4, 32000, 1024): 7,
        (4, 1024, 1024): 48,
        (4, 512, 1024): 24,
        (4, 5632, 1024): 24,
        (4, 1024, 2816): 24,
    }
    result = flops.torch_flops(torch_trace.open(shared / DECODE))
    linear = result.ops.filter(pl.col("name") == "aten::linear")
    assert set(linear["class"]) == {"gemm"} and set(linear["precision"]) == {"bf16"}
    assert linear["counted"].all()
    got: Counter[int] = Counter()
    for row in linear.iter_rows(named=True):
        got[row["flop"]] += row["instances"]
    assert got == Counter({2 * m * n * k: c for (m, n, k), c in shapes.items()})
    assert linear.filter(pl.col("input_dims") == "[[4, 256, 1024], [1024, 1024], []]")["flop"].to_list() == [
        2_147_483_648
    ]
    total = sum(2 * m * n * k * c for (m, n, k), c in shapes.items())
    assert linear["total_flop"].sum() == total == 96_341_065_728
    # The mm inside each linear has the same FLOPs and is not counted again.
    mm = result.ops.filter(pl.col("name") == "aten::mm")
    assert not mm["counted"].any()
    assert mm["total_flop"].sum() == total


def test_rates_and_peaks_of_the_h200(shared: Path) -> None:
    result = flops.torch_flops(torch_trace.open(shared / DECODE))
    (choice,) = result.gpus
    assert (choice.key, choice.how, choice.device_names) == ("h200", "device_name", ["NVIDIA H200"])
    big = result.ops.filter(pl.col("input_dims") == "[[4, 256, 1024], [5632, 1024], []]").row(0, named=True)
    assert big["peak"] == "bf16_tensor" and big["peak_tflop_per_s"] == 989.5
    assert big["achieved_tflop_per_s"] == pytest.approx(big["total_flop"] / big["gpu_time_ns"] / 1e3)
    assert big["flop_pct_of_peak"] == pytest.approx(100 * big["achieved_tflop_per_s"] / 989.5)
    assert big["bandwidth_pct_of_peak"] == pytest.approx(100 * big["achieved_gb_per_s"] / 4800)
    assert big["bytes"] == (1024 * 1024 + 5632 * 1024 + 1024 * 5632) * 2
    (step,) = result.steps.iter_rows(named=True)
    assert step["step"] == "(trace)"
    assert step["peak_basis"] == "bf16 bf16_tensor"
    assert step["mfu_pct"] == pytest.approx(
        100 * step["model_flop"] / (step["duration_ns"] * 1e-9 * 989.5e12)
    )


def test_a_rate_above_the_peak_says_its_inputs_are_wrong(shared: Path, tmp_path: Path) -> None:
    """A trial made every kernel 0 long, or an op's shapes 2^20 x 2^20: 8,858 % and 3.35e9 % of peak
    were printed as facts. The numbers stay (they are what the trace says) and the note says why no op
    can run that fast; the rows of the real trace carry no such note."""
    doc = json.loads(gzip.decompress((shared / DECODE).read_bytes()))
    for event in doc["traceEvents"]:
        if event.get("cat") == "kernel":
            event["dur"] = round(event["dur"] / 1000, 3)
    (tmp_path / "fast.json").write_text(json.dumps(doc))
    fast = flops.torch_flops(torch_trace.open(tmp_path / "fast.json")).ops
    over = fast.filter(pl.col("flop_pct_of_peak") > 100)
    assert over.height > 0
    assert all("above the GPU's datasheet peak" in (n or "") for n in over["note"])
    real = flops.torch_flops(torch_trace.open(shared / DECODE)).ops
    assert real.filter(pl.col("flop_pct_of_peak") > 100).height == 0
    assert not any("datasheet peak" in (n or "") for n in real["note"])


def test_unknown_ops_are_unmodeled_never_guessed(shared: Path) -> None:
    result = flops.torch_flops(torch_trace.open(shared / DECODE))
    unmodeled = result.ops.filter(pl.col("class") == "unmodeled")
    assert unmodeled["flop"].null_count() == unmodeled.height
    assert "aten::index_select" in set(unmodeled["name"])
    names = {u.name for u in result.unmodeled}
    assert "aten::index_select: no formula for this op" in names


def test_a_trace_without_shapes_is_unmodeled(shared: Path) -> None:
    result = flops.torch_flops(torch_trace.open(shared / "h200/graphs/graph_trace.json"), gpu="h100-sxm")
    mm = result.ops.filter(pl.col("name") == "aten::mm")
    assert mm.height and set(mm["class"]) <= {"gemm", "unmodeled"}
    with pytest.raises(InputError) as err:
        flops.torch_flops(torch_trace.open(shared / DECODE), gpu="h900")
    assert err.value.code == "gpu_peaks_unknown"


def test_peak_table_rows() -> None:
    rows = {p.key: p for p in flops.peaks()}
    assert {"h100-sxm", "h100-pcie", "h200", "a100-sxm4-40gb", "a100-sxm4-80gb", "l40s", "b200"} <= set(rows)
    assert rows["h100-sxm"].bf16_tensor == 989.5 and rows["h100-sxm"].memory_gb_per_s == 3350
    assert rows["a100-sxm4-80gb"].fp8_tensor is None
    assert all(p.source and p.date for p in rows.values())


def test_cli_flops(shared: Path) -> None:
    result = gpuopt("torch", "flops", str(shared / DECODE), "--json", "--limit", "5")
    assert result.code == 0, result.stderr
    doc = result.json()
    assert doc["schema"] == "gpuopt.torch.flops/v1"
    assert doc["data"]["gpus"][0]["key"] == "h200"
    assert any(u["kind"] == "op_flops" for u in doc["unmodeled"])
    bad = gpuopt("torch", "flops", str(shared / DECODE), "--gpu", "h900", "--json")
    assert bad.code == 2 and bad.json()["errors"][0]["code"] == "gpu_peaks_unknown"
