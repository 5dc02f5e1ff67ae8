"""``gpuopt torch paths | flops | export perfetto``: call paths, FLOPs and bandwidth, a Perfetto trace.

These commands join the ``gpuopt torch`` group of :mod:`gpuopt.cli.torch_trace` (the registry loads
``torch`` from here, so the group has them whenever it is shown). Each is its options and one library
call (``gpuopt.torch_trace.table_document``, ``gpuopt.flops.torch_flops_document``,
``gpuopt.perfetto.export_torch_document``), rendered by :mod:`gpuopt.cli._torch_render`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gpuopt.cli._many import many_options
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import output_path
from gpuopt.cli._render import render_export
from gpuopt.cli._table_command import table_command
from gpuopt.cli._tables import answered, current_sort, table_options
from gpuopt.cli._torch_render import render_flops, render_paths
from gpuopt.cli.torch_trace import _path, _threshold, files_argument, torch

__all__ = ["torch"]


@torch.command()
@files_argument
@click.option(
    "--kernels",
    "by_kernel",
    is_flag=True,
    help="One row per (path, launching call, launch kind, GPU event name): each kernel's op ancestry.",
)
@many_options
@table_options
@command("gpuopt.torch.paths/v1")
def paths(paths: tuple[Path, ...], by_kernel: bool, **options: Any) -> Outcome:
    """Call paths: per op stack, inclusive and exclusive CPU and GPU time; --kernels: each kernel's stack.

    A path is the chain of cpu_op and record_function ranges enclosing a runtime call on its thread,
    outermost first (ProfilerStep#N ranges and python_function frames are see-through). A GPU event
    belongs to the path of the call that launched it; a CUDA graph replay's kernels belong to the path
    of the cudaGraphLaunch that replayed them (launch = graph_replay; graph_replay_* columns).
    Inclusive = the path and every path under it; exclusive = the path alone.

    \b
    Examples:
      gpuopt torch paths trace.json.gz --sort gpu_inclusive_ns --limit 20
      gpuopt torch paths trace.json.gz --kernels --json | jq '.data.table.rows[0]'
    """
    if by_kernel:
        return table_command("torch", "kernel_paths", paths, **options)
    # People see the tree: each name indented by its depth, the time columns beside it.
    return table_command("torch", "paths", paths, render=render_paths, **options)


@torch.command()
@_path
@click.option(
    "--gpu",
    metavar="KEY",
    help="Take peaks from this datasheet row (e.g. h100-sxm, a100-sxm4-80gb) instead of the trace's "
    "device name (an unknown key's error lists the keys).",
)
@table_options
@command("gpuopt.torch.flops/v1")
def flops(
    path: Path, steps: str | None, window: str | None, gpu: str | None, limit: int, out: Path | None
) -> Outcome:
    """FLOPs and bytes per op from recorded shapes; achieved TFLOP/s, GB/s, % of datasheet peak; step MFU.

    Needs a trace recorded with record_shapes=True (Input Dims, Input type). GEMMs count 2·M·N·K;
    convolutions 2 · output elements · weight elements per output channel; attention 4·B·H·Lq·Lk·E
    (dense, as torch.utils.flop_counter); elementwise ops one FLOP per output element. Bytes: each
    tensor read once and each output written once. An op without a formula is unmodeled (listed),
    never guessed. A row is counted when no enclosing op has a formula (linear counts, the mm inside
    it does not). Peaks: the datasheet table (gpuopt.flops.peaks(); references/gpu-peaks.md).

    \b
    Examples:
      gpuopt torch flops trace.json.gz --limit 20
      gpuopt torch flops trace.json.gz --gpu h100-sxm --json | jq '.data.steps.rows'
      gpuopt torch flops trace.json.gz --out flops.parquet
    """
    from gpuopt import flops as lib

    answer = lib.torch_flops_document(
        path, steps=steps, window=window, gpu=gpu, limit=limit, sort=current_sort()
    )
    return answered(answer, lambda: render_flops(answer, limit), out=out)


@torch.group(name="export")
def export() -> None:
    """Write the trace in another tool's format (perfetto: the Perfetto UI's own trace format)."""


@export.command(name="perfetto")
@_path
@_threshold
@click.option("--out", "out", required=True, type=output_path(), help="The trace to write.")
@click.option(
    "--diff",
    "diff",
    type=click.Path(path_type=Path),
    help="A saved `gpuopt profile diff --json --limit 0` envelope: its flagged keys become a track.",
)
@command("gpuopt.torch.export/v1")
def perfetto(
    path: Path,
    steps: str | None,
    window: str | None,
    kernel_wait_threshold_ns: int,
    out: Path,
    diff: Path | None,
) -> Outcome:
    """A Perfetto trace (open it in ui.perfetto.dev): threads, GPU streams, launch flows, gpuopt's facts.

    Tracks: per host thread the ops, record_function ranges and runtime calls (nested); per GPU stream
    the kernels, memcpys and memsets; a flow from each launching call to its first GPU event; and
    gpuopt's facts: idle gaps by cause per stream, CUDA graph executions, and with --diff the
    occurrences of the keys a profile diff flagged. Protobuf TracePackets (references/perfetto.md).

    \b
    Examples:
      gpuopt torch export perfetto trace.json.gz --out trace.pftrace
      gpuopt torch export perfetto trace.json.gz --out t.pftrace --diff diff.json
    """
    from gpuopt import perfetto as lib

    answer = lib.export_torch_document(
        path, out, steps=steps, window=window, diff=diff, kernel_wait_threshold_ns=kernel_wait_threshold_ns
    )
    return answered(answer, lambda: render_export(answer.data))
