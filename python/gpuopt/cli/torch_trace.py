"""``gpuopt torch ...``: PyTorch profiler (Kineto) traces."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt.cli._many import is_many, many_options, many_outcome
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._render import section, table
from gpuopt.cli._tables import render_frame, table_data, table_options, write_table

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.envelope import FileIdentity
    from gpuopt.models.torch_trace import TorchSummary, TraceSummary
    from gpuopt.torch_trace import TorchTrace

F = TypeVar("F", bound=Callable[..., Any])

_DEFAULT_KERNEL_WAIT_NS = 30_000


def _path(fn: F) -> F:
    return click.argument("path", type=click.Path(path_type=Path))(fn)


def files_argument(fn: F) -> F:
    return click.argument(
        "paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH..."
    )(fn)


def _threshold(fn: F) -> F:
    return click.option(
        "--kernel-wait-ns",
        type=click.IntRange(min=0),
        default=_DEFAULT_KERNEL_WAIT_NS,
        show_default=True,
        help="Gaps shorter than this (and not host wait) count as kernel wait (HTA's rule).",
    )(fn)


@click.group(name="torch")
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
    """


def _inputs(trace: TorchTrace) -> list[FileIdentity]:
    from gpuopt.provenance import file_identity

    return [file_identity(p) for p in trace.files()]


def _open(path: Path) -> TorchTrace:
    from gpuopt import torch_trace as lib
    from gpuopt.provenance import identify_in_background

    identify_in_background(path)  # hashing (on a cache miss) overlaps parsing; a folder is hashed after
    return lib.open(path)


def _table_command(
    paths: tuple[Path, ...],
    fact: str,
    name: str,
    *,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
    gpu: bool,
    **options: int,
) -> Outcome:
    """One trace (file or folder of ranks): the command's own table; several or a glob: one table keyed
    by ``file`` (:mod:`gpuopt.cli._many`)."""
    from gpuopt import torch_trace as lib

    if is_many(paths):
        kwargs: dict[str, Any] = {"fact": fact, **options}
        fn = functools.partial(lib.table, **kwargs)
        return many_outcome(
            name, paths, fn, workers=workers, dask_scheduler=dask_scheduler, limit=limit, out=out
        )
    trace = _open(paths[0])
    return _table(name, trace, trace.table(fact, **options), limit=limit, out=out, gpu=gpu)


def _table(
    name: str, trace: TorchTrace, frame: pl.DataFrame, *, limit: int, out: Path | None, gpu: bool
) -> Outcome:
    from gpuopt.models.torch_trace import TorchTable

    if out is not None:
        write_table(frame, out)
    not_present = trace.not_present() if gpu else []
    data = TorchTable(table=table_data(name, frame, limit), not_present=not_present)

    def render() -> str:
        body = render_frame(frame, limit) if frame.height else "(no rows)"
        return "\n".join([*not_present, body])

    return Outcome(data=data, render=render, inputs=_inputs(trace), unmodeled=trace.unmodeled())


@torch.command()
@_path
@_threshold
@command("gpuopt.torch.summary/v1")
def summary(path: Path, kernel_wait_ns: int) -> Outcome:
    """Identity, event counts, links and GPU breakdowns (temporal, idle by cause, kernel type).

    \b
    Examples:
      gpuopt torch summary trace.json.gz
      gpuopt torch summary traces/ --json | jq '.data.traces[].gpu.devices'
    """
    trace = _open(path)
    doc = trace.summary(kernel_wait_threshold_ns=kernel_wait_ns)
    return Outcome(
        data=doc, render=lambda: _render_summary(doc), inputs=_inputs(trace), unmodeled=trace.unmodeled()
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.kernels/v1")
def kernels(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Per kernel name: count, total, mean, median, min, max, stddev (ns) and share of kernel time."""
    return _table_command(
        paths,
        "kernels",
        "kernels",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=True,
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.ops/v1")
def ops(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Per cpu_op name: CPU total/self time and the GPU time of the work it launched."""
    return _table_command(
        paths, "ops", "ops", workers=workers, dask_scheduler=dask_scheduler, limit=limit, out=out, gpu=False
    )


@torch.command()
@files_argument
@_threshold
@many_options
@table_options
@command("gpuopt.torch.timeline/v1")
def timeline(
    paths: tuple[Path, ...],
    kernel_wait_ns: int,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Per GPU stream: busy and idle time, gaps, and idle time by cause (host wait, kernel wait, other)."""
    return _table_command(
        paths,
        "streams",
        "streams",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=True,
        kernel_wait_threshold_ns=kernel_wait_ns,
    )


@torch.command()
@files_argument
@_threshold
@many_options
@table_options
@command("gpuopt.torch.gaps/v1")
def gaps(
    paths: tuple[Path, ...],
    kernel_wait_ns: int,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Every idle gap on every GPU stream: when, how long, its cause and the event that ended it."""
    return _table_command(
        paths,
        "gaps",
        "gaps",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=True,
        kernel_wait_threshold_ns=kernel_wait_ns,
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.steps/v1")
def steps(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Per record_function / ProfilerStep#N range: CPU time and the GPU work launched inside it."""
    return _table_command(
        paths,
        "steps",
        "steps",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=False,
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.launches/v1")
def launches(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Per GPU event: runtime call, launch latency, launching op and launch configuration."""
    return _table_command(
        paths,
        "launches",
        "launches",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=True,
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.graphs/v1")
def graphs(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Per CUDA graph: replays of cudaGraphLaunch (executions, GPU time per execution, host time).

    Kineto records no graph id: a graph is keyed by the ordered names of its kernels (graph_key).
    """
    return _table_command(
        paths,
        "graphs",
        "graphs",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=True,
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.transfers/v1")
def transfers(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Per memcpy/memset: bytes, duration and bandwidth (bytes / duration)."""
    return _table_command(
        paths,
        "transfers",
        "transfers",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=True,
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.collectives/v1")
def collectives(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Per NCCL kernel: collective, dtype, element counts, bytes and overlap with compute kernels."""
    return _table_command(
        paths,
        "collectives",
        "collectives",
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        gpu=True,
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.comm/v1")
def comm(
    paths: tuple[Path, ...], workers: int, dask_scheduler: str | None, limit: int, out: Path | None
) -> Outcome:
    """Communication vs. compute per rank/device (stream empty) and per NCCL stream: overlap, exposed.

    Busy times are interval unions per device; overlap = communication ∩ compute kernels; exposed =
    communication busy - overlap. Per-collective sizes and algbw: `gpuopt torch collectives`.
    """
    return _table_command(
        paths, "comm", "comm", workers=workers, dask_scheduler=dask_scheduler, limit=limit, out=out, gpu=True
    )


@torch.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")
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
    from gpuopt import many
    from gpuopt import torch_trace as lib
    from gpuopt.cli._ranks import ranks_outcome

    trace = lib.open_paths(many.expand(paths))
    return ranks_outcome(trace.ranks(), _inputs(trace), limit=limit, out=out)


def _ms(ns: int | None) -> str | None:
    return None if ns is None else f"{ns / 1e6:.3f} ms"


def _render_trace(t: TraceSummary) -> str:
    h, c = t.header, t.counts
    calls = c.runtime_calls + c.driver_calls
    device_names = ", ".join(d.name or "?" for d in h.devices) or None
    parts = [
        section(
            f"Trace {t.path} (rank {t.global_rank}, {t.global_rank_source})",
            [
                ("platform", t.platform),
                ("format", f"{t.format}, schema {h.schema_version}"),
                ("devices", device_names),
                ("CUPTI / CUDA runtime", f"{h.cupti_version} / {h.cuda_runtime_version}"),
                ("duration", _ms(t.duration_ns)),
                (
                    "events",
                    f"{c.events} ({c.cpu_ops} cpu_op, {calls} runtime/driver, {c.kernels} kernel,"
                    f" {c.memcpys} memcpy, {c.memsets} memset)",
                ),
                ("record_function ranges", f"{t.record_functions} ({t.profiler_steps} ProfilerStep)"),
                (
                    "links",
                    f"{t.links.gpu_linked_to_runtime}/{t.links.gpu_events} GPU events to a runtime call,"
                    f" {t.links.gpu_linked_to_op} to an op; {t.links.gpu_unlinked} unlinked",
                ),
            ],
        )
    ]
    if t.gpu is None:
        parts.append(f"GPU\n  {t.gpu_absent}")
        return "\n\n".join(parts)
    for d in t.gpu.devices:
        tb, idle = d.temporal, d.idle_by_cause
        parts.append(
            section(
                f"GPU {d.device} ({d.streams} streams)",
                [
                    ("window", _ms(tb.window_ns)),
                    ("compute", _ms(tb.compute_ns)),
                    ("communication", _ms(tb.communication_ns)),
                    ("memory", _ms(tb.memory_ns)),
                    ("idle", _ms(tb.idle_ns)),
                    ("  host wait", _ms(idle.host_wait_ns)),
                    (
                        "  kernel wait",
                        f"{_ms(idle.kernel_wait_ns)} (gaps < {idle.kernel_wait_threshold_ns} ns)",
                    ),
                    ("  other", _ms(idle.other_ns)),
                ],
            )
        )
        parts.append(
            table(
                ["kernel type", "time", "% of busy"],
                [[k.kind, _ms(k.time_ns), f"{k.busy_pct:.1f}"] for k in d.kernel_types],
            )
        )
    if t.gpu.launch_latency is not None:
        lat = t.gpu.launch_latency
        parts.append(
            table(
                ["launch latency (ns)", "n", "min", "p50", "p90", "p99", "max"],
                [
                    [label, x.count, x.min_ns, x.p50_ns, x.p90_ns, x.p99_ns, x.max_ns]
                    for label, x in (
                        ("from call start", lat.from_call_start),
                        ("from call end", lat.from_call_end),
                        ("graph: execution from call start", lat.graph.launch_latency if lat.graph else None),
                        ("graph: kernel after previous kernel", lat.graph.node_gap if lat.graph else None),
                    )
                    if x is not None
                ],
            )
        )
    if t.gpu.transfers:
        parts.append(
            table(
                ["transfer", "count", "bytes", "time", "GB/s"],
                [
                    [
                        x.name,
                        x.count,
                        x.bytes,
                        _ms(x.duration_ns),
                        None if x.bandwidth_gbps is None else f"{x.bandwidth_gbps:.1f}",
                    ]
                    for x in t.gpu.transfers
                ],
            )
        )
    if t.gpu.collectives is not None:
        coll = t.gpu.collectives
        parts.append(
            section(
                "Collectives",
                [
                    ("kernels", coll.kernels),
                    ("busy", _ms(coll.busy_ns)),
                    ("overlapping compute", _ms(coll.compute_overlap_ns)),
                ],
            )
        )
    return "\n\n".join(parts)


def _render_summary(doc: TorchSummary) -> str:
    return "\n\n".join(_render_trace(t) for t in doc.traces)
