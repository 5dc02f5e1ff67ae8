"""``gpuopt nsys ...``: Nsight Systems facts from an nsys SQLite export (or a ``.nsys-rep``).

Every command is its options and one call to :mod:`gpuopt.nsys` (a ``*_document`` function; the table
commands through :func:`gpuopt.cli._table_command.table_command`), rendered by
:mod:`gpuopt.cli._nsys_render`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gpuopt.cli import analyses
from gpuopt.cli._html import html_option, render_html
from gpuopt.cli._many import files_argument, many_options
from gpuopt.cli._nsys_render import render_graphs_data, render_summary, render_timeline_data
from gpuopt.cli._output import Outcome, command, json_requested
from gpuopt.cli._params import NSYS_FILE, count
from gpuopt.cli._registry import Group
from gpuopt.cli._table_command import table_command
from gpuopt.cli._tables import answered, current_columns, current_sort, table_options

F = TypeVar("F", bound=Callable[..., Any])

TABLE_SCHEMA = "gpuopt.nsys.table/v1"


def _selection_options(fn: F) -> F:
    fn = click.option(
        "--nvtx",
        metavar="RANGE",
        help="Only work launched inside this NVTX range (its text, e.g. step_3, or DOMAIN:TEXT).",
    )(fn)
    fn = click.option(
        "--window",
        metavar="START:END",
        help="Only events overlapping this time window (ns on the capture clock, or with ns/us/ms/s).",
    )(fn)
    return fn


_files = files_argument(NSYS_FILE)


def _file_argument(fn: F) -> F:
    return click.argument("file", type=click.Path(path_type=Path, dir_okay=False), help=NSYS_FILE)(fn)


def _per_device(fn: F) -> F:
    return click.option(
        "--per-device",
        is_flag=True,
        help="One block of rows per device (device_id first); API calls and NVTX ranges by the process "
        "that used the device, time_pct within the device.",
    )(fn)


@click.group(cls=Group)
def nsys() -> None:
    """Nsight Systems: facts from an nsys SQLite export (`nsys export --type sqlite`).

    A .nsys-rep is exported first when nsys is installed (exit 3 when it is not). Summaries equal
    NVIDIA's `nsys stats` reports; --window and --nvtx restrict every fact.

    Table commands (kernels, api, mem, nvtx, gaps, comm, stats) take several FILEs or a glob
    ('runs/*.sqlite', quoted): one table with a `file` key column, read by --workers N threads or on a
    Dask cluster (--dask-scheduler); a file that fails is a row with its error (error_code, error); the
    exit status is 2 only when every file failed.

    \b
    Examples:
      gpuopt nsys summary profile.sqlite
      gpuopt nsys kernels profile.sqlite --nvtx step_3
      gpuopt nsys stats profile.sqlite --report cuda_gpu_kern_sum --csv
      gpuopt nsys timeline profile.sqlite --window 7.2s:7.3s --json
      gpuopt nsys graphs profile.sqlite
      gpuopt nsys report profile.sqlite --html profile.html
      gpuopt nsys kernels profile.sqlite --per-device
      gpuopt nsys kernels 'runs/*.sqlite' --workers 2 --out kernels.parquet
      gpuopt nsys ranks rank0.sqlite rank1.sqlite
    """


@nsys.command("summary")
@_file_argument
@_selection_options
@command("gpuopt.nsys.summary/v1")
def summary(file: Path, window: str | None, nvtx: str | None) -> Outcome:
    """The export's identity (versions, GPUs, what was captured) and headline timeline facts.

    \b
    Example:
      gpuopt nsys summary decode_eager.sqlite
    """
    from gpuopt import nsys as lib

    answer = lib.summary_document(file, window=window, nvtx=nvtx)
    return answered(answer, lambda: render_summary(answer.data))


@nsys.command("kernels")
@_files
@_selection_options
@click.option("--short-names", is_flag=True, help="Group by shortName (nsys' :base) instead of demangled.")
@_per_device
@many_options
@table_options
@command(TABLE_SCHEMA)
def kernels(files: tuple[Path, ...], **options: Any) -> Outcome:
    """Kernel time by name: cuda_gpu_kern_sum (Time %, total, instances, avg/med/min/max/stddev).

    Several FILEs or a glob: one table keyed by `file` (see `gpuopt nsys --help`).

    \b
    Example:
      gpuopt nsys kernels decode_eager.sqlite --sort total_time_ns --limit 5
    """
    return table_command("nsys", "kernels", files, **options)


@nsys.command("api")
@_files
@_selection_options
@_per_device
@many_options
@table_options
@command(TABLE_SCHEMA)
def api(files: tuple[Path, ...], **options: Any) -> Outcome:
    """CUDA runtime/driver call time by name: cuda_api_sum (--per-device: by the calling process's device).

    \b
    Example:
      gpuopt nsys api decode_eager.sqlite --limit 5
    """
    return table_command("nsys", "api", files, **options)


@nsys.command("mem")
@_files
@_selection_options
@many_options
@table_options
@command(TABLE_SCHEMA)
def mem(files: tuple[Path, ...], **options: Any) -> Outcome:
    """Memcpy/memset by device and kind: count, bytes, time, bandwidth (GB/s), pageable vs pinned.

    \b
    Example:
      gpuopt nsys mem decode_eager.sqlite
    """
    return table_command("nsys", "memory", files, **options)


@nsys.command("nvtx")
@_files
@_selection_options
@click.option("--per-instance", is_flag=True, help="One row per range instance instead of per range name.")
@_per_device
@many_options
@table_options
@command(TABLE_SCHEMA)
def nvtx(files: tuple[Path, ...], **options: Any) -> Outcome:
    """GPU work per NVTX push/pop range: kernel time inclusive/exclusive, GPU projection.

    --per-device: per device, the ranges of the processes that used it and the work they launched on it.

    \b
    Example:
      gpuopt nsys nvtx decode_eager.sqlite --sort cpu_total_ns
    """
    return table_command("nsys", "nvtx", files, **options)


@nsys.command("gaps")
@_files
@_selection_options
@click.option(
    "--level",
    type=click.Choice(["device", "stream"]),
    help="Only gaps of the whole device (no operation on any stream) or only those of single streams.",
)
@many_options
@table_options
@command(TABLE_SCHEMA)
def gaps(files: tuple[Path, ...], **options: Any) -> Outcome:
    """Every idle interval between GPU operations, per device and per stream, with its neighbours.

    `--limit K` (without --out; 0 = all) keeps only K gaps while reading, in a heap of K so memory does not
    grow with the number of gaps: the first K in the table's order, or with `--sort duration_ns` the K
    longest; `total_rows` is then K. Rows with stream_id empty are gaps of the whole device; `--level
    device` keeps only those.

    \b
    Examples:
      gpuopt nsys gaps report.sqlite --level device --sort duration_ns --limit 5
    """
    return table_command("nsys", "gaps", files, **options)


@nsys.command("comm")
@_files
@_selection_options
@many_options
@table_options
@command(TABLE_SCHEMA)
def comm(files: tuple[Path, ...], **options: Any) -> Outcome:
    """Communication vs. compute per device (stream empty) and per NCCL stream: time, overlap, exposed.

    Collectives are kernels named nccl*/rccl* (or gloo:). Busy times are interval unions per device;
    overlap = communication ∩ compute; exposed = communication busy - overlap.

    \b
    Example:
      gpuopt nsys comm decode_eager.sqlite
    """
    return table_command("nsys", "comm", files, **options)


def _printed_natively(files: tuple[Path, ...], out: Path | None) -> bool:
    """Whether ``nsys stats --json`` of these files is printed by the engine (:func:`gpuopt.nsys.
    stats_envelope`): one ``.sqlite`` export whose name is UTF-8, with neither ``--out``, ``--sort`` nor
    ``--columns``. Neither polars nor pydantic is imported then."""
    from gpuopt import many, nsys

    if not json_requested() or many.is_many(files) or out is not None or nsys.is_report(files[0]):
        return False
    if current_sort() is not None or current_columns() is not None:
        return False
    try:
        str(files[0]).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@nsys.command("stats")
@_files
@click.option(
    "--report",
    "report_name",
    required=True,
    metavar="NAME",
    help="cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum, "
    "cuda_kern_exec_sum or nvtx_kern_sum.",
)
@click.option("--csv", "as_csv", is_flag=True, help="Print exactly what `nsys stats --format csv` prints.")
@_selection_options
@many_options
@table_options
@command(TABLE_SCHEMA)
def stats(files: tuple[Path, ...], report_name: str, as_csv: bool, **options: Any) -> Outcome:
    """An `nsys stats` report by its nsys name, equal to NVIDIA's own output (unrounded in --json).

    \b
    Example:
      gpuopt nsys stats decode_eager.sqlite --report cuda_gpu_kern_sum --csv
    """
    from gpuopt import many
    from gpuopt import nsys as lib

    if as_csv and many.is_many(files):
        raise click.UsageError("--csv prints one file's report; give one FILE (or use --out x.csv)")
    selected = {"window": options["window"], "nvtx": options["nvtx"]}
    if _printed_natively(files, options["out"]):
        limit = options["limit"]
        envelope = lib.stats_envelope(files[0], report_name, limit=limit, schema=TABLE_SCHEMA, **selected)
        return Outcome(data=None, render=lambda: envelope, json_text=envelope)
    if not as_csv or json_requested():
        return table_command("nsys", report_name, files, **options)
    if options["out"] is not None:  # --out writes the whole table as well
        table_command("nsys", report_name, files, **options)
    text = lib.stats_csv(files[0], report_name, **selected).rstrip("\n")
    return Outcome(data=None, render=lambda: text)


@nsys.command("ranks")
@click.argument(
    "files",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE...",
    help="The ranks' Nsight Systems captures (SQLite exports or .nsys-rep), one or more per rank.",
)
@click.option("--step", "step_range", metavar="RANGE", help="NVTX range whose instances are the steps.")
@table_options
@command("gpuopt.nsys.ranks/v1")
def ranks(files: tuple[Path, ...], step_range: str | None, limit: int, out: Path | None) -> Outcome:
    """Ranks side by side: step time, collective wait, latest rank and skew per collective, stragglers.

    One rank per process that ran kernels, in FILE order and then by pid (exports carry no rank
    metadata). The k-th NCCL kernel of every rank is taken as the same collective; a rank arrives when
    its kernel starts; skew = last - first arrival; wait = last arrival - own arrival.

    \b
    Example:
      gpuopt nsys ranks mfu_2gpu_before.sqlite --limit 5
    """
    from gpuopt import nsys as lib
    from gpuopt.cli._ranks import render_ranks

    answer = lib.ranks_document(files, step=step_range, limit=limit, sort=current_sort())
    return answered(answer, lambda: render_ranks(answer, limit), out=out)


@nsys.command("timeline")
@_file_argument
@_selection_options
@click.option(
    "--limit",
    type=count(0),
    default=50,
    show_default=True,
    help="Streams to show or put in the JSON envelope per device, the busiest (0 = all); device rows "
    "always cover every stream.",
)
@command("gpuopt.nsys.timeline/v1")
def timeline(file: Path, window: str | None, nvtx: str | None, limit: int) -> Outcome:
    """Per device and stream: busy/idle, gaps, concurrency, compute/copy overlap, sync, launch latency.

    \b
    Example:
      gpuopt nsys timeline decode_eager.sqlite --window 0:1s
    """
    from gpuopt import nsys as lib

    answer = lib.timeline_document(file, window=window, nvtx=nvtx, limit=limit)
    return answered(answer, lambda: render_timeline_data(answer.data))


@nsys.command("graphs")
@_file_argument
@_selection_options
@command("gpuopt.nsys.graphs/v1")
def graphs(file: Path, window: str | None, nvtx: str | None) -> Outcome:
    """Per CUDA graph: launches, executions, GPU time per execution, kernels per execution, host time.

    Graph-level traces (--cuda-graph-trace=graph) give one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row per
    execution; node-level traces (node) give the kernels, grouped by their cudaGraphLaunch call.

    \b
    Example:
      gpuopt nsys graphs graph_graph.sqlite
    """
    from gpuopt import nsys as lib

    answer = lib.graphs_document(file, window=window, nvtx=nvtx)
    return answered(answer, lambda: render_graphs_data(answer.data))


@nsys.command("report")
@_file_argument
@_selection_options
@html_option(required=True)
@command("gpuopt.html-report/v1")
def report(file: Path, window: str | None, nvtx: str | None, html_out: Path) -> Outcome:
    """An HTML report of the export: GPU timeline per device and stream, top kernels, NVTX ranges.

    One self-contained file (plotly.js inlined: it opens offline). Up to 5,000 operations each is
    drawn; above that the timeline shows per-stream busy fractions in 1,000 time bins.

    \b
    Examples:
      gpuopt nsys report profile.sqlite --html profile.html
      gpuopt nsys report profile.sqlite --nvtx step_3 --html step3.html
    """
    from gpuopt.html import profiles

    answer = profiles.nsys_report_document(file, html_out, window=window, nvtx=nvtx)
    return answered(answer, lambda: render_html(answer.data))


for _analysis in analyses.commands("nsys"):
    nsys.add_command(_analysis)
