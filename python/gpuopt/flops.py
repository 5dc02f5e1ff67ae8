"""FLOPs and bandwidth per op from recorded shapes, and the datasheet peaks they are compared with.

``torch_flops(trace)`` models each ``cpu_op`` of a Kineto trace recorded with ``record_shapes`` (GEMMs
``2·M·N·K``, convolutions, attention, elementwise ops, reductions, norms, copies; unknown ops are
``unmodeled``, never guessed) and gives, per (op, shape): FLOPs and bytes per instance, achieved TFLOP/s
and GB/s over the GPU time the op launched, arithmetic intensity and % of the GPU's datasheet peak; and
per ``ProfilerStep`` the model FLOPs and MFU. ``peaks()`` is the datasheet table
(``references/gpu-peaks.md``)::

    from gpuopt import flops, torch_trace
    result = flops.torch_flops(torch_trace.open("trace.json.gz"))
    result.ops.filter(pl.col("class") == "gemm")
    result.steps["mfu_pct"]

The documents ``gpuopt torch flops`` and ``gpuopt ncu flops`` print, as :class:`gpuopt.answer.Answer`:
:func:`torch_flops_document` and :func:`ncu_flops_document`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuopt import _native
from gpuopt._columns import Column
from gpuopt.models.envelope import UnmodeledItem
from gpuopt.models.flops import GpuChoice, GpuPeaks

if TYPE_CHECKING:
    from pathlib import Path

    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.flops import TorchFlopsData
    from gpuopt.models.table import TableResult
    from gpuopt.ncu import NcuReport, Reader
    from gpuopt.torch_trace import TorchTrace

__all__ = [
    "NcuFlops",
    "TorchFlops",
    "ncu_flops",
    "ncu_flops_document",
    "ncu_peak",
    "peaks",
    "torch_flops",
    "torch_flops_document",
]


@dataclass(frozen=True)
class TorchFlops:
    """Per-op and per-step tables, the datasheet row used per rank, and the ops without a formula."""

    ops: pl.DataFrame
    steps: pl.DataFrame
    gpus: list[GpuChoice]
    unmodeled: list[UnmodeledItem]


def torch_flops(trace: TorchTrace, *, gpu: str | None = None) -> TorchFlops:
    """FLOPs, bytes and rates of every op of ``trace`` (``gpu``: a peak-table key to use instead of the
    trace's device name). Raises ``InputError`` (``gpu_peaks_unknown``) for an unknown key."""
    from gpuopt._tables import to_polars

    ops, steps, gpus, unmodeled = _native.torch_flops(trace._native, gpu)
    items = [
        UnmodeledItem(kind="op_flops", name=f"{u['name']}: {u['reason']}", count=u["count"])
        for u in json.loads(unmodeled)
    ]
    return TorchFlops(
        ops=to_polars(ops),
        steps=to_polars(steps),
        gpus=[GpuChoice.model_validate(g) for g in json.loads(gpus)],
        unmodeled=items,
    )


def peaks() -> list[GpuPeaks]:
    """The datasheet peak table, one row per GPU model."""
    return [GpuPeaks.model_validate(row) for row in json.loads(_native.gpu_peaks_json())["gpus"]]


# ncu roofline precisions -> (datasheet column, factor): the tensor paths ncu names after their source
# type (`tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off`, `tensor_src_fp8_sparsity_on`, ...); a
# `sparsity_on` path is compared with the datasheet's sparse figure, twice the dense one.
_TENSOR_TYPES = (
    ("bf16", "bf16_tensor"),
    ("tf32", "tf32_tensor"),
    ("fp8", "fp8_tensor"),
    ("fp64", "fp64_tensor"),
    ("dmma", "fp64_tensor"),
    ("fp16", "fp16_tensor"),
    ("hmma", "fp16_tensor"),
)


def ncu_peak(precision: str) -> tuple[str | None, float]:
    """The datasheet column an ncu roofline precision is compared with, and the factor on it (2 for a
    sparse tensor path); ``(None, 1)`` when the datasheets have no figure (the fp16 HFMA2 pipe, integer
    tensor paths)."""
    if precision in ("fp64", "fp32"):
        return precision, 1.0
    if not precision.startswith("tensor_"):
        return None, 1.0
    factor = 2.0 if "sparsity_on" in precision else 1.0
    for token, column in _TENSOR_TYPES:
        if token in precision:
            return column, factor
    return None, 1.0


NCU_COLUMNS: tuple[Column, ...] = (
    Column("device_name", "String", "none", "The launch's GPU as the report names it"),
    Column(
        "datasheet_gpu",
        "String",
        "none",
        "The datasheet row used (references/gpu-peaks.md); null when the GPU is not in the table",
    ),
    Column(
        "datasheet_peak",
        "String",
        "none",
        "The datasheet column compared with (fp64, fp32, bf16_tensor, ...; 'sparse' for a sparsity_on"
        " tensor path); null where the datasheets give no figure (fp16 HFMA2 pipe, integer paths)",
    ),
    Column(
        "datasheet_peak_tflop_per_s",
        "Float64",
        "tflop_per_s",
        "That peak (TFLOP/s; a sparse path's is twice the dense figure)",
    ),
    Column("flop_pct_of_datasheet_peak", "Float64", "pct", "achieved_flop_per_s / datasheet peak (%)"),
    Column("datasheet_peak_gb_per_s", "Float64", "gbps", "The GPU's datasheet memory bandwidth (GB/s)"),
    Column(
        "dram_pct_of_datasheet_peak",
        "Float64",
        "pct",
        "dram_bytes_per_s / datasheet memory bandwidth (%)",
    ),
)
"""The columns :func:`ncu_flops` puts after ``gpuopt ncu roofline``'s (``ncu.flops``): the launch's device
and the datasheet figures."""


def ncu_flops(report: NcuReport, *, gpu: str | None = None) -> tuple[pl.DataFrame, list[GpuPeaks | None]]:
    """``gpuopt ncu roofline``'s points (per launch x precision that ran) with the datasheet peak of the
    report's GPU beside the report's own: ``datasheet_peak_tflop_per_s``, ``flop_pct_of_datasheet_peak``,
    ``datasheet_peak_gb_per_s``, ``dram_pct_of_datasheet_peak`` (null where the datasheet has no figure
    or the GPU is not in the table). ``gpu``: a peak-table key instead of the report's device name."""
    import polars as pl

    from gpuopt.errors import InputError

    table = {p.key: p for p in peaks()}
    by_name = {n: p for p in table.values() for n in p.device_names}
    if gpu is not None and gpu not in table:
        raise InputError(
            "gpu_peaks_unknown",
            f"no GPU named {gpu!r} in the datasheet peak table",
            path="gpu",
            expected=", ".join(table),
        )
    points = report.roofline().filter(pl.col("achieved_flop_per_s") > 0)
    devices = report.launches.select("launch_id", "device_name")
    points = points.join(devices, on="launch_id", how="left")
    rows: list[dict[str, object]] = []
    chosen: dict[str, GpuPeaks | None] = {}
    for p in points.iter_rows(named=True):
        name = p["device_name"] or ""
        row = table[gpu] if gpu is not None else by_name.get(name.strip())
        chosen[name] = row
        column, factor = ncu_peak(p["precision"])
        value = getattr(row, column) if row is not None and column is not None else None
        peak = value * factor if value is not None else None
        rate = p["achieved_flop_per_s"]
        dram = p["dram_bytes_per_s"]
        rows.append(
            {
                "datasheet_gpu": row.key if row is not None else None,
                "datasheet_peak": None if peak is None else f"{column}{' sparse' if factor == 2 else ''}",
                "datasheet_peak_tflop_per_s": peak,
                "flop_pct_of_datasheet_peak": None if peak is None else 100 * rate / (peak * 1e12),
                "datasheet_peak_gb_per_s": row.memory_gb_per_s if row is not None else None,
                "dram_pct_of_datasheet_peak": (
                    None if row is None or dram is None else 100 * dram / (row.memory_gb_per_s * 1e9)
                ),
            }
        )
    dtypes = {"String": pl.String, "Float64": pl.Float64}
    extra = pl.DataFrame(rows, schema={c.name: dtypes[c.dtype] for c in NCU_COLUMNS[1:]})
    return pl.concat([points, extra], how="horizontal"), list(chosen.values())


# --- documents: what `gpuopt torch flops` and `gpuopt ncu flops` print under `data` ------------------


def torch_flops_document(
    path: str | Path,
    *,
    steps: str | None = None,
    window: str | None = None,
    gpu: str | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[TorchFlopsData]:
    """``gpuopt torch flops``: :func:`torch_flops` of a trace (or folder of ranks) restricted to ``steps``
    or ``window`` (``gpuopt.torch_trace.scope``). The tables ``flops`` (per op, in ``sort`` order) and
    ``flops_steps``; ``unmodeled`` lists the trace's and the ops without a formula."""
    from gpuopt import torch_trace
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.flops import TorchFlopsData

    trace, chosen = torch_trace.open_scoped(path, steps=steps, window=window)
    result = torch_flops(trace, gpu=gpu)
    ops = sorted_by(result.ops, sort)
    data = TorchFlopsData(
        table=table_data("flops", ops, limit),
        steps=table_data("flops_steps", result.steps, limit),
        gpus=result.gpus,
        scope=chosen.text if chosen else None,
    )
    tables = {"flops": ops, "flops_steps": result.steps}
    return Answer(data, trace.inputs(), [*trace.unmodeled(), *result.unmodeled], tables, source=trace)


@dataclass(frozen=True)
class NcuFlops:
    """What :func:`ncu_flops_document` read: the report, and the datasheet row chosen per device name
    (None: the GPU is not in the table)."""

    report: NcuReport
    gpus: list[GpuPeaks | None]


def ncu_flops_document(
    path: str | Path,
    *,
    gpu: str | None = None,
    session: str | Path | None = None,
    details: str | Path | None = None,
    reader: Reader = "auto",
    limit: int = 50,
    sort: str | None = None,
) -> Answer[TableResult]:
    """``gpuopt ncu flops``: :func:`ncu_flops` of a report as the table ``ncu_flops`` (in ``sort`` order);
    the answer's ``source`` is an :class:`NcuFlops` (the datasheet rows used)."""
    from gpuopt import ncu
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.table import TableResult

    report = ncu.open(path, session=session, details=details, reader=reader)
    frame, gpus = ncu_flops(report, gpu=gpu)
    frame = sorted_by(frame, sort)
    data = TableResult(table=table_data("ncu_flops", frame, limit))
    return Answer(data, report.inputs(), [], {"ncu_flops": frame}, source=NcuFlops(report, gpus))
