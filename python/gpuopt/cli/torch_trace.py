"""``gpuopt torch ...``: PyTorch profiler (Kineto) traces.

Every command is its options and one call to :mod:`gpuopt.torch_trace` (a ``*_document`` function; the
table commands through :func:`gpuopt.cli._table_command.table_command`), rendered by
:mod:`gpuopt.cli._torch_render`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gpuopt.cli import analyses
from gpuopt.cli._html import html_option, render_html
from gpuopt.cli._many import many_options
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import TORCH_PATH, count
from gpuopt.cli._registry import Group
from gpuopt.cli._table_command import table_command
from gpuopt.cli._tables import answered, current_sort, table_options
from gpuopt.cli._torch_render import render_summary

F = TypeVar("F", bound=Callable[..., Any])

_DEFAULT_KERNEL_WAIT_NS = 30_000


def _scope_options(fn: F) -> F:
    window_opt = click.option(
        "--window",
        metavar="START:END",
        help="Only events overlapping this window: ns from the trace's first event, or with ns/us/ms/s"
        " (either side may be empty).",
    )
    steps_opt = click.option(
        "--steps",
        metavar="FIRST:LAST",
        help="Only ProfilerStep#FIRST..ProfilerStep#LAST (inclusive) and the GPU work they launched,"
        " e.g. --steps 2:9 to drop warm-up and the last step.",
    )
    return steps_opt(window_opt(fn))


def _path(fn: F) -> F:
    """PATH plus ``--steps`` / ``--window``."""
    return click.argument("path", type=click.Path(path_type=Path), help=TORCH_PATH)(_scope_options(fn))


def files_argument(fn: F) -> F:
    """PATH... plus ``--steps`` / ``--window`` (every path scoped alike)."""
    argument = click.argument(
        "paths",
        nargs=-1,
        required=True,
        type=click.Path(path_type=Path),
        metavar="PATH...",
        help=f"{TORCH_PATH.rstrip('.')}; several, or a quoted glob, give one table keyed by file.",
    )
    return argument(_scope_options(fn))


def _threshold(fn: F) -> F:
    return click.option(
        "--kernel-wait-ns",
        "kernel_wait_threshold_ns",
        type=count(0),
        default=_DEFAULT_KERNEL_WAIT_NS,
        show_default=True,
        help="Gaps shorter than this (and not host wait) count as kernel wait (HTA's rule).",
    )(fn)


@click.group(name="torch", cls=Group)
def torch() -> None:
    """PyTorch profiler (Kineto) Chrome traces: kernels, ops, GPU timeline, record_function steps.

    PATH is a trace file (.json or .json.gz) or a folder of per-rank traces. Table commands take
    several PATHs or a glob: one table with a `file` key column (--workers N threads, or
    --dask-scheduler); a path that fails is a row with its error; exit 2 only when every path failed.
    Times are integer nanoseconds counted from the trace's first event; `rank` is the distributed
    rank. Traces without GPU activity (CPU-only, MTIA) load, and GPU facts say "not present".

    \b
    Examples:
      gpuopt torch summary trace.json.gz
      gpuopt torch kernels trace.json --limit 20
      gpuopt torch ops traces/ --out ops.parquet
      gpuopt torch timeline trace.json --json | jq '.data.table.rows'
      gpuopt torch report trace.json --html trace.html
    """


@torch.command()
@_path
@_threshold
@command("gpuopt.torch.summary/v1")
def summary(path: Path, steps: str | None, window: str | None, kernel_wait_threshold_ns: int) -> Outcome:
    """Identity, event counts, links and GPU breakdowns (temporal, idle by cause, kernel type).

    \b
    Examples:
      gpuopt torch summary trace.json.gz
      gpuopt torch summary traces/ --json | jq '.data.traces[].gpu.devices'
    """
    from gpuopt import torch_trace as lib

    answer = lib.summary_document(
        path, steps=steps, window=window, kernel_wait_threshold_ns=kernel_wait_threshold_ns
    )
    return answered(answer, lambda: render_summary(answer.data))


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.kernels/v1")
def kernels(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per kernel name: count, total, mean, median, min, max, stddev (ns) and share of kernel time.

    \b
    Example:
      gpuopt torch kernels decode_eager_trace.json.gz --sort total_ns --limit 5
    """
    return table_command("torch", "kernels", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.api/v1")
def api(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per CUDA runtime/driver call name: count, total, mean, median, min, max, stddev (ns) and share
    of the rank's call time (host time inside the calls, like `nsys api`).

    \b
    Example:
      gpuopt torch api decode_eager_trace.json.gz
    """
    return table_command("torch", "api", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.ops/v1")
def ops(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per cpu_op name: CPU total/self time and the GPU time of the work it launched.

    \b
    Example:
      gpuopt torch ops decode_eager_trace.json.gz --sort gpu_time_ns --limit 5
    """
    return table_command("torch", "ops", paths, **options)


@torch.command()
@files_argument
@_threshold
@many_options
@table_options
@command("gpuopt.torch.timeline/v1")
def timeline(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per GPU stream: busy and idle time, gaps, and idle time by cause (host wait, kernel wait, other).

    \b
    Example:
      gpuopt torch timeline decode_eager_trace.json.gz
    """
    return table_command("torch", "streams", paths, **options)


@torch.command()
@files_argument
@_threshold
@many_options
@table_options
@command("gpuopt.torch.gaps/v1")
def gaps(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Every idle gap on every GPU stream: when, how long, its cause and the event that ended it.

    \b
    Example:
      gpuopt torch gaps decode_eager_trace.json.gz --sort duration_ns --limit 5
    """
    return table_command("torch", "gaps", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.steps/v1")
def steps(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per record_function / ProfilerStep#N range: CPU time and the GPU work launched inside it.

    \b
    Example:
      gpuopt torch steps decode_eager_trace.json.gz
    """
    return table_command("torch", "steps", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.launches/v1")
def launches(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per GPU event: runtime call, launch latency, launching op and launch configuration.

    \b
    Example:
      gpuopt torch launches decode_eager_trace.json.gz --limit 10
    """
    return table_command("torch", "launches", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.graphs/v1")
def graphs(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per CUDA graph: replays of cudaGraphLaunch (executions, GPU time per execution, host time).

    Kineto records no graph id: a graph is keyed by the ordered names of its kernels (graph_key).

    \b
    Example:
      gpuopt torch graphs graph_trace.json
    """
    return table_command("torch", "graphs", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.transfers/v1")
def transfers(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per memcpy/memset: bytes, duration and bandwidth (bytes / duration).

    \b
    Example:
      gpuopt torch transfers decode_eager_trace.json.gz
    """
    return table_command("torch", "transfers", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.collectives/v1")
def collectives(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Per NCCL kernel: collective, dtype, element counts, bytes and overlap with compute kernels.

    \b
    Example:
      gpuopt torch collectives decode_eager_trace.json.gz
    """
    return table_command("torch", "collectives", paths, **options)


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.comm/v1")
def comm(paths: tuple[Path, ...], **options: Any) -> Outcome:
    """Communication vs. compute per rank/device (stream empty) and per NCCL stream: overlap, exposed.

    Busy times are interval unions per device; overlap = communication ∩ compute kernels; exposed =
    communication busy - overlap. Per-collective sizes and algbw: `gpuopt torch collectives`.

    \b
    Example:
      gpuopt torch comm decode_eager_trace.json.gz
    """
    return table_command("torch", "comm", paths, **options)


@torch.command()
@click.argument(
    "paths",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path),
    metavar="PATH...",
    help="The ranks' Kineto traces (.json, .json.gz) or folders of them.",
)
@table_options
@command("gpuopt.torch.ranks/v1")
def ranks(paths: tuple[Path, ...], limit: int, out: Path | None) -> Outcome:
    """Ranks side by side: step time, collective wait, latest rank and skew per collective, stragglers.

    PATHs are the ranks' trace files (or folders of them); ranks come from each trace's distributedInfo,
    or from the order given when a trace lacks it (stated as rank_source). The k-th NCCL kernel of
    every rank is taken as the same collective; a rank arrives when its kernel starts; skew = last -
    first arrival; wait = last arrival - own arrival. Steps are ProfilerStep#N ranges.

    \b
    Examples:
      gpuopt torch ranks rank0.json.gz rank1.json.gz
      gpuopt torch ranks traces/ --json | jq '.data.stragglers.rows'
    """
    from gpuopt import torch_trace as lib
    from gpuopt.cli._ranks import render_ranks

    answer = lib.ranks_document(paths, limit=limit, sort=current_sort())
    return answered(answer, lambda: render_ranks(answer, limit), out=out)


@torch.command()
@_path
@html_option(required=True)
@command("gpuopt.html-report/v1")
def report(path: Path, steps: str | None, window: str | None, html_out: Path) -> Outcome:
    """An HTML report of the trace: GPU timeline per device and stream, top kernels and operators.

    One self-contained file (plotly.js inlined: it opens offline). Up to 5,000 GPU events each is
    drawn; above that the timeline shows per-stream busy fractions in 1,000 time bins.

    \b
    Examples:
      gpuopt torch report trace.json.gz --html trace.html
    """
    from gpuopt.html import profiles

    answer = profiles.torch_report_document(path, html_out, steps=steps, window=window)
    return answered(answer, lambda: render_html(answer.data))


for _analysis in analyses.commands("torch"):
    torch.add_command(_analysis)
