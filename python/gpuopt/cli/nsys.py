"""``gpuopt nsys ...``: Nsight Systems facts from an nsys SQLite export (or a ``.nsys-rep``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt.cli import analyses
from gpuopt.cli._html import html_option, render_html
from gpuopt.cli._many import files_argument, is_many, many_options, many_outcome
from gpuopt.cli._nsys_render import render_coverage, render_graphs, render_timeline
from gpuopt.cli._output import Outcome, command, json_requested
from gpuopt.cli._render import section, table
from gpuopt.cli._tables import current_columns, current_sort, table_data, table_options, write_table

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.envelope import FileIdentity, UnmodeledItem
    from gpuopt.models.nsys import NsysSelection, Timeline
    from gpuopt.nsys import Report

F = TypeVar("F", bound=Callable[..., Any])

TABLE_SCHEMA = "gpuopt.nsys.table/v1"


def _selection_options(fn: F) -> F:
    fn = click.option(
        "--nvtx",
        "nvtx_range",
        metavar="RANGE",
        help="Only work launched inside this NVTX range (its text, e.g. step_3, or DOMAIN:TEXT).",
    )(fn)
    fn = click.option(
        "--window",
        metavar="START:END",
        help="Only events overlapping this time window (ns on the capture clock, or with ns/us/ms/s).",
    )(fn)
    return fn


def _file_argument(fn: F) -> F:
    return click.argument("file", type=click.Path(path_type=Path, dir_okay=False))(fn)


def _open(file: Path, window: str | None, nvtx: str | None) -> tuple[Report, NsysSelection, Any]:
    from gpuopt import nsys
    from gpuopt.provenance import identify_in_background

    identify_in_background(file)  # hashing (on a cache miss) overlaps the engine's work
    parsed = nsys.parse_window(window) if window else None
    return nsys.open(file), nsys.selection(parsed, nvtx), parsed


def _inputs(file: Path) -> list[FileIdentity]:
    from gpuopt.provenance import file_identity

    return [file_identity(file)]


def _unmodeled(report: Report) -> list[UnmodeledItem]:
    from gpuopt.models.envelope import UnmodeledItem

    return [UnmodeledItem(kind="table", name=name) for name in report.unread_tables()]


def _header(report: Report, name: str, sel: NsysSelection, missing: list[str]) -> str:
    parts = [f"{name} — {report.path}"]
    if sel.window_start_ns is not None or sel.window_end_ns is not None:
        parts.append(f"window {sel.window_start_ns}:{sel.window_end_ns}")
    if sel.nvtx:
        parts.append(f"launched in NVTX range {sel.nvtx!r}")
    text = ", ".join(parts)
    if missing:
        text += f"\nnot captured: {', '.join(missing)}"
    return text


# Tables whose rows are of two levels that overlap in time: no totals row (a sum would count twice).
_LEVELS = {
    "gaps": [
        "stream_id —: the whole device was idle; a stream id: that stream was idle (others may have run);",
        "one interval can show at both levels, so no total is given (--level device: only the device's)",
    ]
}


def _table_outcome(
    file: Path,
    report: Report,
    sel: NsysSelection,
    name: str,
    fact: str,
    frame: pl.DataFrame,
    *,
    limit: int,
    out: Path | None,
    render: Callable[[], str] | None = None,
) -> Outcome:
    from gpuopt.cli._tables import render_frame
    from gpuopt.models.nsys import NsysTableData

    if out is not None:
        write_table(frame, out)
    missing = report.not_captured(fact)
    coverage = report.coverage(fact)
    data = NsysTableData(
        path=report.path,
        source=report.source,
        selection=sel,
        report=name,
        not_captured=missing,
        coverage=coverage,
        table=table_data(name, frame, limit),
    )

    def default_render() -> str:
        body = render_frame(frame, limit, totals=name not in _LEVELS)
        text = "\n".join([_header(report, name, sel, missing), *_LEVELS.get(name, []), body])
        return text + ("\n\n" + render_coverage(coverage) if coverage else "")

    return Outcome(data=data, render=render or default_render, inputs=_inputs(file))


@click.group()
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
def summary(file: Path, window: str | None, nvtx_range: str | None) -> Outcome:
    """The export's identity (versions, GPUs, what was captured) and headline timeline facts."""
    from gpuopt.models.nsys import NsysSummaryData

    report, sel, parsed = _open(file, window, nvtx_range)
    info = report.info()
    timeline, graph_facts = report.timeline_and_graphs(window=parsed, nvtx=nvtx_range)
    data = NsysSummaryData(
        path=report.path,
        source=report.source,
        selection=sel,
        info=info,
        timeline=timeline,
        graphs=graph_facts,
    )

    def render() -> str:
        e = info.export
        parts = [
            section(
                f"nsys export — {report.path}",
                [
                    ("schema", f"{e.schema_version} ({e.metadata_table})"),
                    ("product", f"{e.product_name or 'nsys'} {e.product_version or '?'}"),
                    ("exported by", report.source.nsys_version if report.source else None),
                    ("gpus", ", ".join(f"{g.id}: {g.name or '?'}" for g in info.gpus) or "none recorded"),
                    ("nvtx ranges", f"{info.nvtx_ranges} ({info.nvtx_open_ranges} open)"),
                    ("cuda graph trace", info.graph_trace_mode or "not recorded (no option, no graph rows)"),
                ],
            ),
            "Sources\n"
            + table(
                ["table", "in file", "rows"],
                [[s.table, s.actual or "not captured", s.rows] for s in info.sources],
            ),
            render_timeline(timeline, sel),
        ]
        if graph_facts.executions:
            parts.append(render_graphs(graph_facts))
        return "\n\n".join(parts)

    return Outcome(data=data, render=render, inputs=_inputs(file), unmodeled=_unmodeled(report))


def _per_device(fn: F) -> F:
    return click.option(
        "--per-device",
        is_flag=True,
        help="One block of rows per device (device_id first); API calls and NVTX ranges by the process "
        "that used the device, time_pct within the device.",
    )(fn)


def _table_command(
    files: tuple[Path, ...],
    fact: str,
    name: str,
    window: str | None,
    nvtx_range: str | None,
    *,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
    render: Callable[[Report, pl.DataFrame], str] | None = None,
    **options: Any,
) -> Outcome:
    """One table of one export (the command's own output), or of several (one table keyed by file)."""
    from gpuopt import nsys as lib

    if is_many(files):
        parsed = lib.parse_window(window) if window else None
        kwargs: dict[str, Any] = {"fact": fact, "window": parsed, "nvtx": nvtx_range, **options}
        fn = functools.partial(lib.table, **kwargs)
        return many_outcome(
            name, files, fn, workers=workers, dask_scheduler=dask_scheduler, limit=limit, out=out
        )
    file = files[0]
    report, sel, parsed = _open(file, window, nvtx_range)
    frame = report.table(fact, window=parsed, nvtx=nvtx_range, **options)
    coverage_fact = {"api": "cuda_api_sum"}.get(fact, fact)
    shown = (lambda: render(report, frame)) if render else None
    return _table_outcome(file, report, sel, name, coverage_fact, frame, limit=limit, out=out, render=shown)


@nsys.command("kernels")
@files_argument
@_selection_options
@click.option("--short-names", is_flag=True, help="Group by shortName (nsys' :base) instead of demangled.")
@_per_device
@many_options
@table_options
@command(TABLE_SCHEMA)
def kernels(
    files: tuple[Path, ...],
    window: str | None,
    nvtx_range: str | None,
    short_names: bool,
    per_device: bool,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Kernel time by name: cuda_gpu_kern_sum (Time %, total, instances, avg/med/min/max/stddev).

    Several FILEs or a glob: one table keyed by `file` (see `gpuopt nsys --help`).
    """
    return _table_command(
        files,
        "kernels",
        "cuda_gpu_kern_sum",
        window,
        nvtx_range,
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        short_names=short_names,
        per_device=per_device,
    )


@nsys.command("api")
@files_argument
@_selection_options
@_per_device
@many_options
@table_options
@command(TABLE_SCHEMA)
def api(
    files: tuple[Path, ...],
    window: str | None,
    nvtx_range: str | None,
    per_device: bool,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """CUDA runtime/driver call time by name: cuda_api_sum (--per-device: by the calling process's device)."""
    return _table_command(
        files,
        "api",
        "cuda_api_sum",
        window,
        nvtx_range,
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        per_device=per_device,
    )


@nsys.command("mem")
@files_argument
@_selection_options
@many_options
@table_options
@command(TABLE_SCHEMA)
def mem(
    files: tuple[Path, ...],
    window: str | None,
    nvtx_range: str | None,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Memcpy/memset by device and kind: count, bytes, time, bandwidth (GB/s), pageable vs pinned."""
    return _table_command(
        files,
        "memory",
        "memory",
        window,
        nvtx_range,
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
    )


@nsys.command("nvtx")
@files_argument
@_selection_options
@click.option("--per-instance", is_flag=True, help="One row per range instance instead of per range name.")
@_per_device
@many_options
@table_options
@command(TABLE_SCHEMA)
def nvtx(
    files: tuple[Path, ...],
    window: str | None,
    nvtx_range: str | None,
    per_instance: bool,
    per_device: bool,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """GPU work per NVTX push/pop range: kernel time inclusive/exclusive, GPU projection.

    --per-device: per device, the ranges of the processes that used it and the work they launched on it.
    """
    name = "nvtx_instances" if per_instance else "nvtx_ranges"
    return _table_command(
        files,
        "nvtx",
        name,
        window,
        nvtx_range,
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        per_instance=per_instance,
        per_device=per_device,
    )


@nsys.command("gaps")
@files_argument
@_selection_options
@click.option(
    "--level",
    type=click.Choice(["device", "stream"]),
    help="Only gaps of the whole device (no operation on any stream) or only those of single streams.",
)
@many_options
@table_options
@command(TABLE_SCHEMA)
def gaps(
    files: tuple[Path, ...],
    window: str | None,
    nvtx_range: str | None,
    level: str | None,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Every idle interval between GPU operations, per device and per stream, with its neighbours.

    `--limit K` (without --out; 0 = all) keeps only K gaps while reading, in a heap of K so memory does not
    grow with the number of gaps: the first K in the table's order, or with `--sort duration_ns` the K
    longest; `total_rows` is then K. Rows with stream_id empty are gaps of the whole device; `--level
    device` keeps only those.

    \b
    Examples:
      gpuopt nsys gaps report.sqlite --level device --sort duration_ns --limit 5
    """
    sort = current_sort()
    bounded = limit > 0 and out is None
    longest = bounded and sort in ("duration_ns", "duration_ns:desc", "duration", "duration:desc")
    return _table_command(
        files,
        "gaps",
        "gaps",
        window,
        nvtx_range,
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        top=limit if longest else None,
        first=limit if bounded and sort is None else None,
        level=level,
    )


@nsys.command("comm")
@files_argument
@_selection_options
@many_options
@table_options
@command(TABLE_SCHEMA)
def comm(
    files: tuple[Path, ...],
    window: str | None,
    nvtx_range: str | None,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Communication vs. compute per device (stream empty) and per NCCL stream: time, overlap, exposed.

    Collectives are kernels named nccl*/rccl* (or gloo:). Busy times are interval unions per device;
    overlap = communication ∩ compute; exposed = communication busy - overlap.
    """
    return _table_command(
        files,
        "comm",
        "comm",
        window,
        nvtx_range,
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
    )


def _stats_printed_natively(
    files: tuple[Path, ...],
    report_name: str,
    as_csv: bool,
    window: str | None,
    nvtx_range: str | None,
    *,
    limit: int,
    out: Path | None,
) -> Outcome | None:
    """``nsys stats`` of one ``.sqlite`` export printed as CSV or as the --json envelope, both made by
    the engine (``_native.NsysStatsDoc``): no DataFrame, no pydantic model, so neither polars nor
    pydantic is imported. None where the general path is needed (several files, a ``.nsys-rep``,
    ``--out``/``--sort``/``--columns``, the table for people, a file name that is not UTF-8)."""
    from gpuopt import _identity, _native, _window
    from gpuopt import nsys as lib

    as_json = json_requested()
    if not (as_json or as_csv) or is_many(files) or out is not None:
        return None
    if current_sort() is not None or current_columns() is not None:
        return None
    file = files[0]
    if file.suffix.lower() in (".nsys-rep", ".qdrep"):
        return None
    try:
        str(file).encode("utf-8")
    except UnicodeEncodeError:
        return None
    if as_json:
        _identity.identify_in_background(file)  # hashing (on a cache miss) overlaps the engine's work
    start, end = _window.parse_window(window, open_ends=True) if window else (None, None)
    try:
        before = _identity.stat_key(str(file))
    except OSError:
        before = None  # the engine reports a missing or unreadable file with its own error
    native = _native.nsys_open(str(file))
    doc = native.stats_doc(report_name, start, end, nvtx_range)
    captured = set(native.captured_tables())
    missing = [t for t in lib.SOURCES.get(report_name, ()) if t not in captured]
    if not as_json:
        if before is not None:  # no hash to wait for here, but a rewritten file is still no answer
            _identity.check_unchanged(str(file), before)
        text = doc.csv(str(file), missing).rstrip("\n")
        return Outcome(data=None, render=lambda: text)
    from gpuopt import __version__

    identity = _identity.identity(file)
    envelope = doc.envelope(
        limit,
        TABLE_SCHEMA,
        __version__,
        missing,
        (identity["path"], identity["size_bytes"], identity["blake3"], identity["from_cache"]),
    )
    return Outcome(data=None, render=lambda: envelope, json_text=envelope)


@nsys.command("stats")
@files_argument
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
def stats(
    files: tuple[Path, ...],
    report_name: str,
    as_csv: bool,
    window: str | None,
    nvtx_range: str | None,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """An `nsys stats` report by its nsys name, equal to NVIDIA's own output (unrounded in --json)."""
    from gpuopt import nsys as lib

    if as_csv and is_many(files):
        raise click.UsageError("--csv prints one file's report; give one FILE (or use --out x.csv)")
    fast = _stats_printed_natively(files, report_name, as_csv, window, nvtx_range, limit=limit, out=out)
    if fast is not None:
        return fast

    def render_csv(report: Report, frame: pl.DataFrame) -> str:
        missing = report.not_captured(report_name)
        return lib.stats_csv(frame, report_name, path=str(files[0]), missing=missing).rstrip("\n")

    return _table_command(
        files,
        report_name,
        report_name,
        window,
        nvtx_range,
        workers=workers,
        dask_scheduler=dask_scheduler,
        limit=limit,
        out=out,
        render=render_csv if as_csv else None,
    )


@nsys.command("ranks")
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False), metavar="FILE..."
)
@click.option("--step", "step_range", metavar="RANGE", help="NVTX range whose instances are the steps.")
@table_options
@command("gpuopt.nsys.ranks/v1")
def ranks(files: tuple[Path, ...], step_range: str | None, limit: int, out: Path | None) -> Outcome:
    """Ranks side by side: step time, collective wait, latest rank and skew per collective, stragglers.

    One rank per process that ran kernels, in FILE order and then by pid (exports carry no rank
    metadata). The k-th NCCL kernel of every rank is taken as the same collective; a rank arrives when
    its kernel starts; skew = last - first arrival; wait = last arrival - own arrival.
    """
    from gpuopt import many
    from gpuopt import nsys as lib
    from gpuopt.cli._ranks import ranks_outcome

    paths = many.expand(files)
    return ranks_outcome(lib.ranks(paths, step=step_range), _inputs_of(paths), limit=limit, out=out)


def _inputs_of(paths: list[Path]) -> list[FileIdentity]:
    from gpuopt.provenance import file_identity

    return [file_identity(p) for p in paths]


@nsys.command("timeline")
@_file_argument
@_selection_options
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Streams to show or put in the JSON envelope per device, the busiest (0 = all); device rows "
    "always cover every stream.",
)
@command("gpuopt.nsys.timeline/v1")
def timeline(file: Path, window: str | None, nvtx_range: str | None, limit: int) -> Outcome:
    """Per device and stream: busy/idle, gaps, concurrency, compute/copy overlap, sync, launch latency."""
    from gpuopt.models.nsys import NsysTimelineData

    report, sel, parsed = _open(file, window, nvtx_range)
    facts, left_out = _busiest_streams(report.timeline(window=parsed, nvtx=nvtx_range), limit)
    data = NsysTimelineData(
        path=report.path, source=report.source, selection=sel, timeline=facts, streams_left_out=left_out
    )

    def render() -> str:
        text = render_timeline(facts, sel, report.path)
        if left_out:
            text += f"\n\n({left_out} less busy streams left out; --limit 0 shows all)"
        return text

    return Outcome(data=data, render=render, inputs=_inputs(file), unmodeled=_unmodeled(report))


def _busiest_streams(facts: Timeline, limit: int) -> tuple[Timeline, int]:
    """``facts`` with at most ``limit`` streams per device (the busiest, kept in stream order)."""
    if limit == 0:
        return facts, 0
    devices, left_out = [], 0
    for d in facts.devices:
        keep = sorted(d.streams, key=lambda s: (-s.busy_ns, s.stream_id))[:limit]
        left_out += len(d.streams) - len(keep)
        devices.append(d.model_copy(update={"streams": sorted(keep, key=lambda s: s.stream_id)}))
    return facts.model_copy(update={"devices": devices}), left_out


@nsys.command("graphs")
@_file_argument
@_selection_options
@command("gpuopt.nsys.graphs/v1")
def graphs(file: Path, window: str | None, nvtx_range: str | None) -> Outcome:
    """Per CUDA graph: launches, executions, GPU time per execution, kernels per execution, host time.

    Graph-level traces (--cuda-graph-trace=graph) give one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row per
    execution; node-level traces (node) give the kernels, grouped by their cudaGraphLaunch call.
    """
    from gpuopt.models.nsys import NsysGraphsData

    report, sel, parsed = _open(file, window, nvtx_range)
    facts = report.graphs(window=parsed, nvtx=nvtx_range)
    coverage = report.coverage("graphs")
    data = NsysGraphsData(
        path=report.path, source=report.source, selection=sel, graphs=facts, coverage=coverage
    )

    def render() -> str:
        text = _header(report, "graphs", sel, []) + "\n" + render_graphs(facts)
        return text + ("\n\n" + render_coverage(coverage) if coverage else "")

    return Outcome(data=data, render=render, inputs=_inputs(file), unmodeled=_unmodeled(report))


@nsys.command("report")
@_file_argument
@_selection_options
@html_option(required=True)
@command("gpuopt.html-report/v1")
def report(file: Path, window: str | None, nvtx_range: str | None, html_out: Path) -> Outcome:
    """An HTML report of the export: GPU timeline per device and stream, top kernels, NVTX ranges.

    One self-contained file (plotly.js inlined: it opens offline). Up to 5,000 operations each is
    drawn; above that the timeline shows per-stream busy fractions in 1,000 time bins.

    \b
    Examples:
      gpuopt nsys report profile.sqlite --html profile.html
      gpuopt nsys report profile.sqlite --nvtx step_3 --html step3.html
    """
    from gpuopt.html import page, profiles

    page.prepare(html_out)
    opened, _, parsed = _open(file, window, nvtx_range)
    data = profiles.nsys_page(opened, html_out, window=parsed, nvtx_range=nvtx_range)
    return Outcome(data=data, render=lambda: render_html(data), inputs=_inputs(file))


for _analysis in analyses.commands("nsys"):
    nsys.add_command(_analysis)
