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
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuopt import _native
from gpuopt.models.envelope import UnmodeledItem
from gpuopt.models.flops import GpuChoice, GpuPeaks

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.torch_trace import TorchTrace

__all__ = ["TorchFlops", "peaks", "torch_flops"]


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
