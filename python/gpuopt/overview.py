"""``gpuopt profile overview``: what is in a capture, in one call, for any kind gpuopt reads.

>>> from gpuopt import overview
>>> answer = overview.overview_document(["profile.sqlite", "trace.json.gz", "kernels.ncu-rep"])
>>> answer.data.files[0].top_kernels.table.rows     # the 5 kernels with the most GPU time
>>> answer.data.files[0].top_kernels.command        # the command that prints that table whole

Each file is opened once, through its area's library (:mod:`gpuopt.nsys`, :mod:`gpuopt.torch_trace`,
:mod:`gpuopt.ncu`); each section is a few facts those libraries compute, or the first rows of one of
their tables in the order the cited command prints it, so a section's numbers are that command's. A file
that cannot be read is an entry with its error; the answer is a failure only when every file failed.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt.errors import GpuoptError, InputError

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.envelope import FileIdentity, UnmodeledItem
    from gpuopt.models.overview import FileOverview, OverviewData, OverviewIterations, OverviewTop

#: The top tables of one file, by table name (what people see of them).
Tables = dict[str, "pl.DataFrame"]

#: What reading one file gives: its overview, the identity of the files read, its unmodeled content.
Read = tuple["FileOverview", list["FileIdentity"], list["UnmodeledItem"]]

#: Rows of each top table.
TOP = 5

#: The columns a top table keeps, per table (the cited command prints them all).
_TOP_COLUMNS = {
    "cuda_gpu_kern_sum": ["name", "instances", "total_time_ns", "time_pct", "avg_ns"],
    "nvtx_ranges": ["range", "instances", "cpu_total_ns", "kernels", "kernel_inclusive_ns"],
    "kernels": ["rank", "name", "count", "total_ns", "share_pct", "mean_ns"],
    "ops": ["rank", "name", "count", "gpu_time_ns", "self_cpu_ns", "gpu_events"],
    "ncu_kernels": ["kernel_function", "grid", "block", "launches", "duration_ns_sum", "duration_ns_mean"],
}


def overview_document(
    files: str | Path | Sequence[str | Path], *, marker: str | None = None
) -> Answer[OverviewData]:
    """The overview of every file (glob patterns expanded): identity, totals, busy/idle, top kernels /
    ops / NVTX ranges, CUDA graphs, steps, warnings and unmodeled content, each section naming the
    command that prints it whole. The answer's tables are the top tables as people see them, keyed
    ``"I:TABLE"`` (I: the file's index in ``data.files``, TABLE: the section's ``table.name``).
    ``marker`` names the range whose instances are steps (matched as
    ``--marker`` of ``gpuopt profile diff``); by default ProfilerStep#N."""
    from gpuopt import many
    from gpuopt.answer import Answer
    from gpuopt.models.overview import OverviewData

    given = [files] if isinstance(files, (str, Path)) else list(files)
    if not given:
        raise InputError("files_none", "no capture given", expected="one or more capture files or globs")
    entries, inputs, unmodeled, tables = [], [], [], {}
    for i, path in enumerate(many.expand(given)):
        shown: Tables = {}
        entry, read, items = _one(path, marker, shown)
        entries.append(entry)
        inputs += read
        unmodeled += items
        tables.update({f"{i}:{name}": frame for name, frame in shown.items()})
    failed = sum(1 for e in entries if e.error is not None)
    failure = None
    if failed == len(entries):
        codes = sorted({e.error.code for e in entries if e.error is not None})
        failure = InputError(
            "files_all_failed",
            f"every one of the {failed} files failed (each entry carries its error)",
            observed=", ".join(codes),
        )
    data = OverviewData(files=entries, failed=failed)
    return Answer(data, inputs, unmodeled, tables, failure=failure)


def _one(path: Path, marker: str | None, shown: Tables) -> Read:
    """One file's overview, identity and unmodeled content, or an entry holding the error that stopped
    it; its top tables go to ``shown``."""
    from gpuopt._profile_sources import detect_kind
    from gpuopt.models.overview import FileError, FileOverview

    try:
        kind = detect_kind(path)
        reader = {"nsys": _nsys, "torch": _torch, "ncu": _ncu}[kind]
        return reader(path, marker, shown)
    except GpuoptError as exc:
        error = FileError(**exc.to_dict())
    except Exception as exc:  # a defect reading one file must not lose the others' overviews
        error = FileError(code="internal_error", message=f"{type(exc).__name__}: {exc}")
    empty: dict[str, Any] = dict.fromkeys(
        ("identity", "totals", "busy", "top_kernels", "top_ops", "top_ranges", "graphs", "iterations")
    )
    return FileOverview(path=str(path), kind=None, error=error, warnings=[], unmodeled={}, **empty), [], []


def _kinds(items: Sequence[UnmodeledItem]) -> dict[str, int]:
    """How many unmodeled items of each kind."""
    return dict(Counter(item.kind for item in items))


def _cite(*words: str | Path) -> str:
    return shlex.join(["gpuopt", *(str(w) for w in words)])


def _top(name: str, frame: pl.DataFrame, sort: str, command: str, shown: Tables) -> OverviewTop:
    """The first :data:`TOP` rows of ``frame`` in ``sort`` order, its key columns only (also put in
    ``shown`` under ``name``, for people)."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.models.overview import OverviewTop

    ordered = sorted_by(frame, sort)
    kept = ordered.select([c for c in _TOP_COLUMNS[name] if c in ordered.columns])
    shown[name] = kept.head(TOP)
    return OverviewTop(command=f"{command} --sort {sort}", table=table_data(name, kept, TOP))


def _steps(
    names: Sequence[str], marker: str | None, count: Any, host_ns: Any, gpu_ns: Any, command: str
) -> OverviewIterations | None:
    """Steps from a table of ranges: ``count``, ``host_ns`` and ``gpu_ns`` give, for a list of range
    names, their instances, summed host time and summed GPU time."""
    from gpuopt.models.overview import OverviewIterations
    from gpuopt.names import matches, resolve

    if marker is not None:
        wanted = resolve(marker, names, option="--marker", what="range")
    else:
        wanted = sorted({n for n in names if matches("ProfilerStep", n.removeprefix(":"))})
    if not wanted:
        return None
    steps = int(count(wanted))
    return OverviewIterations(
        command=command,
        marker=marker or "ProfilerStep#N",
        ranges=wanted,
        steps=steps,
        mean_host_ns=float(host_ns(wanted)) / steps if steps else None,
        gpu_time_ns=int(gpu_ns(wanted)),
    )


# --- nsys -------------------------------------------------------------------------------------------


def _nsys(path: Path, marker: str | None, shown: Tables) -> Read:
    import polars as pl

    from gpuopt import nsys
    from gpuopt.models.overview import (
        FileOverview,
        OverviewBusy,
        OverviewDeviceBusy,
        OverviewGpu,
        OverviewGraphs,
        OverviewIdentity,
        OverviewTotals,
    )
    from gpuopt.provenance import file_identity, identify_in_background

    identify_in_background(path)  # hashing (on a cache miss) overlaps the engine's work
    report = nsys.open(path)
    info = report.info()
    timeline, graphs = report.timeline_and_graphs()
    kernels = report.table("kernels")
    ranges = report.table("nvtx")
    devices = timeline.devices
    e = info.export
    identity = OverviewIdentity(
        command=_cite("nsys", "summary", path),
        tool=f"{e.product_name or 'nsys'} {e.product_version or 'unknown'} "
        f"(export schema {e.schema_version})",
        driver=_driver(info.driver_version, info.cuda_driver_version),
        gpus=[
            OverviewGpu(
                device=g.id,
                name=g.name,
                compute_capability=g.compute_capability,
                memory_bytes=g.total_memory_bytes,
            )
            for g in info.gpus
        ],
        trace_mode=info.graph_trace_mode,
    )
    totals = OverviewTotals(
        command=_cite("nsys", "summary", path),
        kernels=sum(d.kernels for d in devices),
        kernel_time_ns=int(kernels["total_time_ns"].sum()),
        memcpys=sum(d.memcpys for d in devices),
        memsets=sum(d.memsets for d in devices),
        graph_executions=sum(d.graph_executions for d in devices),
        span_ns=max((d.span_ns for d in devices), default=0),
    )
    busy = OverviewBusy(
        command=_cite("nsys", "timeline", path),
        devices=[
            OverviewDeviceBusy(
                device=d.device_id,
                rank=None,
                span_ns=d.span_ns,
                busy_ns=d.busy_ns,
                idle_ns=d.idle_ns,
                busy_pct=d.busy_pct,
            )
            for d in devices
        ],
    )
    gpu = pl.col("kernel_inclusive_ns") + pl.col("graph_inclusive_ns")

    def of(names: list[str], column: Any) -> Any:
        return ranges.filter(pl.col("range").is_in(names)).select(column).to_series().sum()

    warnings = _nsys_warnings(report, info, timeline, graphs)
    unmodeled = report.unmodeled()
    entry = FileOverview(
        path=str(path),
        kind="nsys",
        error=None,
        identity=identity,
        totals=totals,
        busy=busy,
        top_kernels=_top(
            "cuda_gpu_kern_sum", kernels, "total_time_ns", _cite("nsys", "kernels", path), shown
        ),
        top_ops=None,
        top_ranges=_top("nvtx_ranges", ranges, "cpu_total_ns", _cite("nsys", "nvtx", path), shown),
        graphs=OverviewGraphs(
            command=_cite("nsys", "graphs", path), graphs=len(graphs.graphs), executions=graphs.executions
        ),
        iterations=_steps(
            [str(r) for r in ranges["range"].to_list()],
            marker,
            lambda n: of(n, "instances"),
            lambda n: of(n, "cpu_total_ns"),
            lambda n: of(n, gpu),
            _cite("nsys", "nvtx", path),
        ),
        warnings=warnings,
        unmodeled=_kinds(unmodeled),
    )
    return entry, [file_identity(path)], unmodeled


def _driver(nv: str | None, cuda: str | None) -> str | None:
    if not nv and not cuda:
        return None
    return f"{nv or 'unknown'} (CUDA {cuda or 'unknown'})"


def _nsys_warnings(report: Any, info: Any, timeline: Any, graphs: Any) -> list[Any]:
    from gpuopt.models.overview import OverviewWarning

    out = [
        OverviewWarning(
            code="activity_left_out",
            message=f"{c.rows} rows of {c.table} are left out of the timeline facts: {c.note}",
        )
        for c in timeline.coverage
    ]
    missing = report.not_captured("kernels")
    if missing:
        out.append(
            OverviewWarning(
                code="not_captured", message=f"the capture lacks {', '.join(missing)}: no kernels"
            )
        )
    if info.nvtx_open_ranges:
        out.append(
            OverviewWarning(
                code="nvtx_open_ranges",
                message=f"{info.nvtx_open_ranges} NVTX ranges have no end; they are closed at the last "
                "timestamp",
            )
        )
    out += [OverviewWarning(code="graphs_note", message=note) for note in graphs.notes]
    overhead = timeline.profiler_overhead
    if overhead.total_ns:
        out.append(
            OverviewWarning(
                code="profiler_overhead",
                message=f"the profiler's own overhead: {overhead.intervals} intervals, "
                f"{overhead.total_ns / 1e6:.3f} ms in total (gpuopt nsys timeline subtracts it where it "
                "says so)",
            )
        )
    return out


# --- torch ------------------------------------------------------------------------------------------


def _torch(path: Path, marker: str | None, shown: Tables) -> Read:
    import polars as pl

    from gpuopt import torch_trace
    from gpuopt.models.overview import FileOverview, OverviewBusy, OverviewGraphs, OverviewIdentity
    from gpuopt.provenance import identify_in_background

    identify_in_background(path)
    trace = torch_trace.open(path)
    traces = trace.summary().traces
    graphs = trace.graphs()
    steps = trace.steps()
    headers = [t.header for t in traces]
    cite = str(path)
    identity = OverviewIdentity(
        command=_cite("torch", "summary", cite),
        tool=", ".join(
            sorted({f"kineto schema {h.schema_version}, cupti {h.cupti_version}" for h in headers})
        ),
        driver=", ".join(sorted({str(h.cuda_driver_version) for h in headers if h.cuda_driver_version}))
        or None,
        gpus=_torch_gpus(headers),
        trace_mode=None,
    )

    def of(names: list[str], column: str) -> Any:
        return steps.filter(pl.col("name").is_in(names))[column].sum()

    entry = FileOverview(
        path=str(path),
        kind="torch",
        error=None,
        identity=identity,
        totals=_torch_totals(traces, graphs, _cite("torch", "summary", cite)),
        busy=OverviewBusy(command=_cite("torch", "summary", cite), devices=_torch_busy(traces)),
        top_kernels=_top("kernels", trace.kernels(), "total_ns", _cite("torch", "kernels", cite), shown),
        top_ops=_top("ops", trace.ops(), "gpu_time_ns", _cite("torch", "ops", cite), shown),
        top_ranges=None,
        graphs=OverviewGraphs(
            command=_cite("torch", "graphs", cite),
            graphs=graphs.height,
            executions=int(graphs["executions"].sum()),
        ),
        iterations=_steps(
            [str(n) for n in steps["name"].to_list()],
            marker,
            lambda n: steps.filter(pl.col("name").is_in(n)).height,
            lambda n: of(n, "cpu_duration_ns"),
            lambda n: of(n, "gpu_time_ns"),
            _cite("torch", "steps", cite),
        ),
        warnings=_torch_warnings(traces, trace.not_present()),
        unmodeled=_kinds(trace.unmodeled()),
    )
    return entry, trace.inputs(), trace.unmodeled()


def _torch_gpus(headers: Sequence[Any]) -> list[Any]:
    from gpuopt.models.overview import OverviewGpu

    seen = {}
    for h in headers:
        for d in h.devices:
            seen[(d.id, d.name)] = OverviewGpu(
                device=d.id,
                name=d.name,
                compute_capability=d.compute_capability,
                memory_bytes=d.total_memory_bytes,
            )
    return list(seen.values())


def _torch_totals(traces: Sequence[Any], graphs: pl.DataFrame, command: str) -> Any:
    from gpuopt.models.overview import OverviewTotals

    spans = [d.last_end_ns - d.first_start_ns for t in traces if t.gpu for d in t.gpu.devices]
    return OverviewTotals(
        command=command,
        kernels=sum(t.counts.kernels for t in traces),
        kernel_time_ns=sum(t.gpu.kernel_time_ns for t in traces if t.gpu),
        memcpys=sum(t.counts.memcpys for t in traces),
        memsets=sum(t.counts.memsets for t in traces),
        graph_executions=int(graphs["executions"].sum()),
        span_ns=max(spans, default=0),
    )


def _torch_busy(traces: Sequence[Any]) -> list[Any]:
    from gpuopt.models.overview import OverviewDeviceBusy

    out = []
    for t in traces:
        for d in t.gpu.devices if t.gpu else []:
            span = d.last_end_ns - d.first_start_ns
            out.append(
                OverviewDeviceBusy(
                    device=d.device,
                    rank=t.global_rank,
                    span_ns=span,
                    busy_ns=d.busy_ns,
                    idle_ns=span - d.busy_ns,
                    busy_pct=100.0 * d.busy_ns / span if span else 0.0,
                )
            )
    return out


def _torch_warnings(traces: Sequence[Any], not_present: list[str]) -> list[Any]:
    from gpuopt.models.overview import OverviewWarning

    out = [OverviewWarning(code="not_present", message=text) for text in not_present]
    for t in traces:
        if t.header.log_lines.error:
            out.append(
                OverviewWarning(
                    code="kineto_errors",
                    message=f"{t.path}: Kineto saved {t.header.log_lines.error} ERROR lines, e.g. "
                    + "; ".join(t.header.log_lines.errors[:2]),
                )
            )
        if t.links.gpu_unlinked:
            out.append(
                OverviewWarning(
                    code="gpu_events_unlinked",
                    message=f"{t.path}: {t.links.gpu_unlinked} of {t.links.gpu_events} GPU events have no "
                    "runtime call in the trace: no op is credited with their time",
                )
            )
    return out


# --- ncu --------------------------------------------------------------------------------------------


def _ncu(path: Path, marker: str | None, shown: Tables) -> Read:
    from gpuopt import ncu
    from gpuopt.models.overview import FileOverview, OverviewGpu, OverviewIdentity, OverviewTotals

    if marker is not None:
        raise InputError(
            "marker_unavailable",
            f"--marker counts steps of nsys and torch captures; {path} is an ncu report",
            path=str(path),
        )
    report = ncu.open(path)
    info = report.info
    kernels = report.kernels
    summary = _cite("ncu", "summary", path)
    identity = OverviewIdentity(
        command=summary,
        tool=f"ncu {info.tool.version or 'unknown'}",
        driver=None,
        gpus=[
            OverviewGpu(device=None, name=name, compute_capability=None, memory_bytes=None)
            for name in sorted(set(info.devices))
        ],
        trace_mode=None,
    )
    totals = OverviewTotals(
        command=summary,
        kernels=info.launches,
        kernel_time_ns=int(kernels["duration_ns_sum"].sum()),
        memcpys=None,
        memsets=None,
        graph_executions=None,
        span_ns=None,
    )
    entry = FileOverview(
        path=str(path),
        kind="ncu",
        error=None,
        identity=identity,
        totals=totals,
        busy=None,
        top_kernels=_top(
            "ncu_kernels", kernels, "duration_ns_sum", _cite("ncu", "table", path, "kernels"), shown
        ),
        top_ops=None,
        top_ranges=None,
        graphs=None,
        iterations=None,
        warnings=_ncu_warnings(info),
        unmodeled=_kinds(report.unmodeled),
    )
    return entry, report.inputs(), report.unmodeled


def _ncu_warnings(info: Any) -> list[Any]:
    from gpuopt.models.overview import OverviewWarning

    out = []
    clock = info.clock_control
    if clock is not None and clock.value != "none":
        out.append(
            OverviewWarning(
                code="clocks_locked",
                message=f"clock control {clock.value} ({clock.source}): durations are at locked clocks, "
                "not the clocks the workload runs at",
            )
        )
    if not info.alias_table_verified:
        out.append(
            OverviewWarning(
                code="alias_table_unverified",
                message=f"which metric each fact reads ({info.alias_table}) is not verified on this ncu "
                "version",
            )
        )
    return out
