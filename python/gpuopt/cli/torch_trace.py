"""``gpuopt torch ...``: PyTorch profiler (Kineto) traces."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from gpuopt.cli import analyses
from gpuopt.cli._html import html_option, render_html
from gpuopt.cli._many import is_many, many_options, many_outcome
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._render import section, table
from gpuopt.cli._tables import render_frame, table_data, table_options, write_table
from gpuopt.errors import InputError

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.envelope import FileIdentity
    from gpuopt.models.torch_trace import TorchSummary, TraceSummary
    from gpuopt.torch_trace import TorchTrace

F = TypeVar("F", bound=Callable[..., Any])

_DEFAULT_KERNEL_WAIT_NS = 30_000


@dataclass(frozen=True)
class Source:
    """PATH with the scope asked for (``--steps`` or ``--window``), as text for the record."""

    path: Path
    steps: str | None = None
    window: str | None = None

    @property
    def scope(self) -> str | None:
        if self.steps is not None:
            return f"steps {self.steps}"
        return f"window {self.window}" if self.window is not None else None


def _path(fn: F) -> F:
    """PATH plus ``--steps`` / ``--window``, handed to the command as one :class:`Source`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, path: Path, steps: str | None, window: str | None, **kwargs: Any) -> Any:
        return fn(*args, path=Source(path, steps, window), **kwargs)

    argument = click.argument("path", type=click.Path(path_type=Path))
    return cast("F", argument(_scope_options(wrapper)))


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


def files_argument(fn: F) -> F:
    """PATH... plus ``--steps`` / ``--window``, handed to the command as one :class:`Sources`."""

    @functools.wraps(fn)
    def wrapper(
        *args: Any, paths: tuple[Path, ...], steps: str | None, window: str | None, **kwargs: Any
    ) -> Any:
        return fn(*args, paths=Sources(paths, steps, window), **kwargs)

    argument = click.argument(
        "paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH..."
    )
    return cast("F", argument(_scope_options(wrapper)))


@dataclass(frozen=True)
class Sources:
    """PATH... with the scope asked for; every path is scoped alike."""

    paths: tuple[Path, ...]
    steps: str | None = None
    window: str | None = None

    def first(self) -> Source:
        return Source(self.paths[0], self.steps, self.window)


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
      gpuopt torch report trace.json --html trace.html
    """


def _inputs(trace: TorchTrace) -> list[FileIdentity]:
    from gpuopt.provenance import file_identity

    return [file_identity(p) for p in trace.files()]


_SCOPE_INVALID = "torch_trace_scope_invalid"


def _steps(text: str) -> tuple[int, int]:
    """``"FIRST:LAST"`` -> step numbers (either side may be empty: from the first / to the last step)."""
    sides = [s.strip() for s in text.split(":")]
    if len(sides) != 2 or not all(not s or s.isdigit() for s in sides):
        raise InputError(
            _SCOPE_INVALID,
            f"cannot read {text!r} as steps",
            path="steps",
            expected="FIRST:LAST step numbers, e.g. 2:9 (either side may be empty)",
            observed=text,
        )
    first, last = sides
    return (int(first) if first else 0, int(last) if last else 2**63 - 1)


def _scope(source: Source | Sources) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The parsed ``--steps`` and ``--window`` (at most one of them)."""
    from gpuopt._window import parse_window

    if source.steps is not None and source.window is not None:
        raise InputError(
            _SCOPE_INVALID,
            "--steps and --window cannot be combined",
            path="steps",
            expected="one of --steps FIRST:LAST and --window START:END",
            observed=f"--steps {source.steps} --window {source.window}",
        )
    steps = _steps(source.steps) if source.steps is not None else None
    window = None
    if source.window is not None:
        start, end = parse_window(source.window, open_ends=True)
        window = (0 if start is None else start, 2**63 - 1 if end is None else end)
    return steps, window


def _open(source: Source) -> TorchTrace:
    from gpuopt import torch_trace as lib
    from gpuopt.provenance import identify_in_background

    steps, window = _scope(source)
    identify_in_background(
        source.path
    )  # hashing (on a cache miss) overlaps parsing; a folder is hashed after
    trace = lib.open(source.path)
    return trace if steps is None and window is None else trace.scoped(steps=steps, window=window)


def _table_command(
    sources: Sources,
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

    if is_many(sources.paths):
        steps, window = _scope(sources)
        kwargs: dict[str, Any] = {"fact": fact, "steps": steps, "window": window, **options}
        fn = functools.partial(lib.table, **kwargs)
        return many_outcome(
            name, sources.paths, fn, workers=workers, dask_scheduler=dask_scheduler, limit=limit, out=out
        )
    source = sources.first()
    trace = _open(source)
    frame = trace.table(fact, **options)
    return _table(name, trace, frame, limit=limit, out=out, gpu=gpu, scope=source.scope)


def _table(
    name: str,
    trace: TorchTrace,
    frame: pl.DataFrame,
    *,
    limit: int,
    out: Path | None,
    gpu: bool,
    scope: str | None = None,
) -> Outcome:
    from gpuopt.models.torch_trace import TorchTable

    if out is not None:
        write_table(frame, out)
    not_present = trace.not_present() if gpu else []
    data = TorchTable(table=table_data(name, frame, limit), not_present=not_present, scope=scope)

    def render() -> str:
        body = render_frame(frame, limit) if frame.height else "(no rows)"
        return "\n".join([*([f"scope: {scope}"] if scope else []), *not_present, body])

    return Outcome(data=data, render=render, inputs=_inputs(trace), unmodeled=trace.unmodeled())


@torch.command()
@_path
@_threshold
@command("gpuopt.torch.summary/v1")
def summary(path: Source, kernel_wait_ns: int) -> Outcome:
    """Identity, event counts, links and GPU breakdowns (temporal, idle by cause, kernel type).

    \b
    Examples:
      gpuopt torch summary trace.json.gz
      gpuopt torch summary traces/ --json | jq '.data.traces[].gpu.devices'
    """
    trace = _open(path)
    doc = trace.summary(kernel_wait_threshold_ns=kernel_wait_ns).model_copy(update={"scope": path.scope})
    return Outcome(
        data=doc, render=lambda: _render_summary(doc), inputs=_inputs(trace), unmodeled=trace.unmodeled()
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.kernels/v1")
def kernels(
    paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None
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
@command("gpuopt.torch.api/v1")
def api(paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None) -> Outcome:
    """Per CUDA runtime/driver call name: count, total, mean, median, min, max, stddev (ns) and share
    of the rank's call time (host time inside the calls, like `nsys api`)."""
    return _table_command(
        paths, "api", "api", workers=workers, dask_scheduler=dask_scheduler, limit=limit, out=out, gpu=False
    )


@torch.command()
@files_argument
@many_options
@table_options
@command("gpuopt.torch.ops/v1")
def ops(paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None) -> Outcome:
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
    paths: Sources,
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
    paths: Sources,
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
def steps(paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None) -> Outcome:
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
    paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None
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
def graphs(paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None) -> Outcome:
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
    paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None
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
    paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None
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
def comm(paths: Sources, workers: int, dask_scheduler: str | None, limit: int, out: Path | None) -> Outcome:
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


@torch.command()
@_path
@html_option(required=True)
@command("gpuopt.html-report/v1")
def report(path: Source, html_out: Path) -> Outcome:
    """An HTML report of the trace: GPU timeline per device and stream, top kernels and operators.

    One self-contained file (plotly.js inlined: it opens offline). Up to 5,000 GPU events each is
    drawn; above that the timeline shows per-stream busy fractions in 1,000 time bins.

    \b
    Examples:
      gpuopt torch report trace.json.gz --html trace.html
    """
    from gpuopt.html import page, profiles

    page.prepare(html_out)
    trace = _open(path)
    data = profiles.torch_page(trace, html_out)
    return Outcome(data=data, render=lambda: render_html(data), inputs=_inputs(trace))


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
    head = [f"scope: {doc.scope} (every fact below is restricted to it)"] if doc.scope else []
    return "\n\n".join([*head, *(_render_trace(t) for t in doc.traces)])


for _analysis in analyses.commands("torch"):
    torch.add_command(_analysis)
