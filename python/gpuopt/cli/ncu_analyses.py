"""``gpuopt ncu flops``: per launch, achieved FLOP/s and DRAM bandwidth against the GPU's datasheet peaks.

The command joins the ``gpuopt ncu`` group of :mod:`gpuopt.cli.ncu` (the registry loads ``ncu`` from
here, so the group has it whenever it is shown); it is its options and one call to
:func:`gpuopt.flops.ncu_flops_document`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli import _views
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import NCU_FILE
from gpuopt.cli._tables import answered, current_sort, for_people, render_frame, table_options
from gpuopt.cli.ncu import _PATH, _source_options, ncu

if TYPE_CHECKING:
    from gpuopt.flops import NcuFlops
    from gpuopt.ncu import Reader

__all__ = ["ncu"]

_SHOWN = [
    "launch_id",
    "kernel_function",
    "precision",
    "achieved_flop_per_s",
    "dram_bytes_per_s",
    "arithmetic_intensity_flop_per_byte",
    "datasheet_peak",
    "flop_pct_of_datasheet_peak",
    "dram_pct_of_datasheet_peak",
    "flop_pct_of_peak",
]


@ncu.command(name="flops")
@click.argument("path", type=_PATH, help=NCU_FILE)
@_source_options
@click.option(
    "--gpu",
    metavar="KEY",
    help="Take peaks from this datasheet row (e.g. h100-sxm) instead of the report's device name.",
)
@table_options
@command("gpuopt.ncu.flops/v1")
def flops(
    path: Path,
    session: Path | None,
    details: Path | None,
    reader: Reader,
    gpu: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Per launch x precision that ran: FLOPs, FLOP/s, DRAM bytes/s, intensity, % of the datasheet peak.

    The points of `gpuopt ncu roofline` (ncu's roofline formulas over the SASS thread-instruction and
    tensor-pipe counters; precisions with 0 FLOP left out), with the datasheet peak of the report's GPU
    (gpuopt.flops.peaks(); references/gpu-peaks.md) beside the report's own: a sparse tensor path is
    compared with the datasheet's sparse figure, the fp16 HFMA2 pipe with none.

    \b
    Examples:
      gpuopt ncu flops report.ncu-rep
      gpuopt ncu flops report.ncu-rep --gpu a100-sxm4-80gb --json | jq '.data.table.rows'
    """
    from gpuopt import flops as lib

    answer = lib.ncu_flops_document(
        path, gpu=gpu, session=session, details=details, reader=reader, limit=limit, sort=current_sort()
    )
    read: NcuFlops = answer.source
    named = sorted({g.key for g in read.gpus if g is not None})
    header = f"datasheet peaks: {', '.join(named) or 'none (the report names no GPU in the table; --gpu)'}"
    frame = answer.table
    shown = _views.columns(frame, _SHOWN)
    return answered(
        answer, lambda: "\n".join([header, render_frame(for_people(frame, shown), limit)]), out=out
    )
