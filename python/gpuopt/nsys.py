"""Nsight Systems facts from an nsys SQLite export (or a ``.nsys-rep``, exported with ``nsys``).

>>> from gpuopt import _window
from gpuopt import nsys
>>> report = nsys.open("profile.sqlite")
>>> report.stats("cuda_gpu_kern_sum")          # NVIDIA's report, number for number (polars)
>>> report.timeline(nvtx="step_3").devices      # busy/idle/gaps/overlap of one NVTX range (pydantic)

Every method takes ``window=(start_ns, end_ns)`` (either end may be None) and/or ``nvtx="NAME"`` to
restrict the facts; see ``references/formats/nsys-sqlite.md`` for the definitions.
"""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import _native, _window
from gpuopt._columns import Column
from gpuopt.errors import InputError
from gpuopt.ranks import Ranks

if TYPE_CHECKING:  # the models (pydantic) are imported where a method builds one, not on import
    import polars as pl

    from gpuopt.models.nsys import Coverage, Graphs, NsysExportTool, NsysInfo, NsysSelection, Timeline

Window = tuple[int | None, int | None]

#: The ``nsys stats`` reports gpuopt reproduces, by their nsys names.
STATS_REPORTS: tuple[str, ...] = tuple(_native.nsys_stats_reports())

#: The source tables each fact reads (an absent one means "not captured", not an error).
SOURCES: dict[str, tuple[str, ...]] = {
    "cuda_gpu_kern_sum": ("CUPTI_ACTIVITY_KIND_KERNEL",),
    "cuda_api_sum": ("CUPTI_ACTIVITY_KIND_RUNTIME",),
    "cuda_gpu_mem_time_sum": ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"),
    "cuda_gpu_mem_size_sum": ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"),
    "nvtx_sum": ("NVTX_EVENTS",),
    "cuda_kern_exec_sum": ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "nvtx_kern_sum": ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "kernels": ("CUPTI_ACTIVITY_KIND_KERNEL",),
    "memory": ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"),
    "nvtx": ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"),
    "comm": ("CUPTI_ACTIVITY_KIND_KERNEL",),
    "gaps": ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"),
    "timeline": (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    ),
}

_REPORT_SUFFIXES = (".nsys-rep", ".qdrep")
_EXPORT_TIMEOUT_S = 3600


PER_DEVICE = Column(
    "device_id", "Int64", "id", "Device (CUDA device id) this block of rows belongs to (--per-device)"
)
"""The leading column :meth:`Report.per_device` puts before an nsys table read ``--per-device``."""


class Report:
    """An opened, validated nsys export. Methods return polars DataFrames or pydantic documents."""

    def __init__(self, native: _native.NsysReport, source: NsysExportTool | None = None) -> None:
        self._native = native
        self.source = source

    @property
    def path(self) -> str:
        """The SQLite file read (for a ``.nsys-rep``, its export)."""
        return self._native.path

    def captured(self) -> list[str]:
        """The source tables this export has (by gpuopt's names; ``_V<n>`` versions resolved)."""
        return self._native.captured_tables()

    def not_captured(self, fact: str) -> list[str]:
        """The source tables ``fact`` reads that this export lacks."""
        have = set(self.captured())
        return [t for t in SOURCES.get(fact, ()) if t not in have]

    def unread_tables(self) -> list[str]:
        """Tables in the file that no gpuopt fact reads (reported as ``unmodeled``)."""
        return self._native.unread_tables()

    def info(self) -> NsysInfo:
        """Versions, capture options, GPUs and row counts of every source table."""
        from gpuopt.models.nsys import NsysInfo

        return NsysInfo.model_validate_json(self._native.info_json())

    def graph_trace_mode(self) -> str | None:
        """How the capture traced CUDA graphs (``nsys profile --cuda-graph-trace``): ``"graph"`` or
        ``"node"`` as the capture option ``CUDA_GRAPH_TRACE_OPTIONS:MODE`` records it (``"graph+node"``
        when processes differ), else as the rows show it (graph-execution rows: graph; kernels with a
        ``graphNodeId``: node); None when neither says. Cheap: a few metadata rows, not the events
        (``info().graph_trace_mode`` is the same value)."""
        return self._native.graph_trace_mode()

    def stats(
        self, report: str, *, window: Window | None = None, nvtx: str | None = None, device: int | None = None
    ) -> pl.DataFrame:
        """One ``nsys stats`` report by its nsys name (:data:`STATS_REPORTS`), unrounded.

        :func:`stats_csv` renders it exactly as ``nsys stats --format csv`` does. ``device`` keeps
        that device's GPU work and the CPU events (API calls, NVTX ranges) of the processes that used it.
        """
        from gpuopt._tables import to_polars

        start, end = window or (None, None)
        return to_polars(self._native.stats(report, start, end, nvtx, device))

    def devices(self) -> list[int]:
        """Every device that ran GPU work (kernels, memcpys, memsets), ascending."""
        return self._native.devices()

    def per_device(self, build: Callable[[int], pl.DataFrame]) -> pl.DataFrame:
        """``build(device)`` for every device, stacked under a leading ``device_id`` column."""
        import polars as pl

        key = PER_DEVICE.name
        frames = [build(d).select(pl.lit(d, dtype=pl.Int64).alias(key), pl.all()) for d in self.devices()]
        if frames:
            return pl.concat(frames)
        return build(-1).select(pl.lit(None, dtype=pl.Int64).alias(key), pl.all()).clear()

    def kernel_summary(self, *, window: Window | None = None, nvtx: str | None = None) -> pl.DataFrame:
        """``cuda_gpu_kern_sum``: kernel time by (demangled) name."""
        return self.stats("cuda_gpu_kern_sum", window=window, nvtx=nvtx)

    def api_summary(
        self, *, window: Window | None = None, nvtx: str | None = None, device: int | None = None
    ) -> pl.DataFrame:
        """``cuda_api_sum``: CUDA runtime and driver call time by name (``device``: only the calls of
        the processes that used that device)."""
        return self.stats("cuda_api_sum", window=window, nvtx=nvtx, device=device)

    def kernels(
        self,
        *,
        short_names: bool = False,
        window: Window | None = None,
        nvtx: str | None = None,
        device: int | None = None,
    ) -> pl.DataFrame:
        """Kernel time by name (``shortName`` with ``short_names=True``), as ``cuda_gpu_kern_sum``
        (``device``: that device's kernels only; ``time_pct`` is then the share of its kernel time)."""
        from gpuopt._tables import to_polars

        start, end = window or (None, None)
        return to_polars(self._native.kernels(short_names, start, end, nvtx, device))

    def memory(self, *, window: Window | None = None, nvtx: str | None = None) -> pl.DataFrame:
        """Memcpy/memset by device and kind: count, bytes, time, bandwidth, host memory kind."""
        from gpuopt._tables import to_polars

        start, end = window or (None, None)
        return to_polars(self._native.memory(start, end, nvtx))

    def nvtx(
        self,
        *,
        per_instance: bool = False,
        window: Window | None = None,
        nvtx: str | None = None,
        device: int | None = None,
    ) -> pl.DataFrame:
        """GPU work attributed to push/pop ranges (inclusive, exclusive, GPU projection); ``device``:
        ranges of the processes that used it, and only the work they launched on it."""
        from gpuopt._tables import to_polars

        start, end = window or (None, None)
        return to_polars(self._native.nvtx(per_instance, start, end, nvtx, device))

    def comm(self, *, window: Window | None = None, nvtx: str | None = None) -> pl.DataFrame:
        """Communication (NCCL/RCCL kernels) vs. compute per device and communication stream:
        communication time and busy union, compute busy union, their overlap and the exposed
        communication (not hidden by compute). ``stream`` is null on a device's total row."""
        from gpuopt._tables import to_polars

        start, end = window or (None, None)
        return to_polars(self._native.comm(start, end, nvtx))

    def gaps(
        self,
        *,
        window: Window | None = None,
        nvtx: str | None = None,
        top: int | None = None,
        level: str | None = None,
        first: int | None = None,
    ) -> pl.DataFrame:
        """Every idle interval between GPU operations, per device and per stream (by lane, then time);
        with ``top``, only the ``top`` longest, longest first (ties: device, stream, start); with
        ``first``, only the first ``first`` rows in that order; either kept in a heap of that many so
        memory does not grow with the number of gaps. ``level``: only the gaps of the whole device
        (``device``: no operation on any stream; ``stream_id`` null) or of single streams (``stream``);
        with ``top`` or ``first`` as well, every gap is read and the rows of that level kept."""
        import polars as pl

        from gpuopt._tables import to_polars

        if level not in (None, "device", "stream"):
            raise InputError("gaps_level_invalid", f"level {level!r}: device or stream", observed=str(level))
        start, end = window or (None, None)
        if level is None:
            return to_polars(self._native.gaps(start, end, nvtx, top, first))
        frame = to_polars(self._native.gaps(start, end, nvtx, None))
        frame = frame.filter(pl.col("stream_id").is_null() == (level == "device"))
        if top is None:
            return frame if first is None else frame.head(first)
        keys = ["duration_ns", "device_id", "stream_id", "start_ns"]
        return frame.sort(keys, descending=[True, False, False, False], nulls_last=False).head(top)

    def operations(self, *, window: Window | None = None, nvtx: str | None = None) -> pl.DataFrame:
        """One row per GPU operation (kernel, memcpy, memset, graph execution): device, stream, kind,
        interval clipped to the window, name as ``cuda_gpu_trace`` names it, bytes."""
        from gpuopt._tables import to_polars

        start, end = window or (None, None)
        return to_polars(self._native.operations(start, end, nvtx))

    def timeline(self, *, window: Window | None = None, nvtx: str | None = None) -> Timeline:
        """Busy/idle, gaps, concurrency, overlap, synchronization and launch latency."""
        from gpuopt.models.nsys import Timeline

        start, end = window or (None, None)
        return Timeline.model_validate_json(self._native.timeline_json(start, end, nvtx))

    def graphs(self, *, window: Window | None = None, nvtx: str | None = None) -> Graphs:
        """Facts per CUDA graph: launches, executions, GPU time per execution, host time per launch."""
        from gpuopt.models.nsys import Graphs

        start, end = window or (None, None)
        return Graphs.model_validate_json(self._native.graphs_json(start, end, nvtx))

    def timeline_and_graphs(
        self, *, window: Window | None = None, nvtx: str | None = None
    ) -> tuple[Timeline, Graphs]:
        """``timeline()`` and ``graphs()`` from one read of the operations and one join to their calls
        (what ``gpuopt nsys summary`` shows: half the work of asking for each)."""
        from gpuopt.models.nsys import Graphs, Timeline

        start, end = window or (None, None)
        timeline, graphs = self._native.timeline_graphs_json(start, end, nvtx)
        return Timeline.model_validate_json(timeline), Graphs.model_validate_json(graphs)

    def table(
        self,
        fact: str,
        *,
        window: Window | None = None,
        nvtx: str | None = None,
        per_device: bool = False,
        short_names: bool = False,
        per_instance: bool = False,
        top: int | None = None,
        level: str | None = None,
        first: int | None = None,
    ) -> pl.DataFrame:
        """One table by name: ``kernels``, ``api``, ``memory``, ``nvtx``, ``gaps``, ``comm`` or an nsys
        stats report name; ``per_device`` (kernels, api, nvtx, stats) stacks it per device; ``top``
        (gaps) keeps only the ``top`` longest gaps, ``first`` (gaps) the first rows."""

        def build(device: int | None) -> pl.DataFrame:
            if fact == "kernels":
                return self.kernels(short_names=short_names, window=window, nvtx=nvtx, device=device)
            if fact == "api":
                return self.api_summary(window=window, nvtx=nvtx, device=device)
            if fact == "nvtx":
                return self.nvtx(per_instance=per_instance, window=window, nvtx=nvtx, device=device)
            if fact == "memory":
                return self.memory(window=window, nvtx=nvtx)
            if fact == "gaps":
                return self.gaps(window=window, nvtx=nvtx, top=top, level=level, first=first)
            if fact == "comm":
                return self.comm(window=window, nvtx=nvtx)
            return self.stats(fact, window=window, nvtx=nvtx, device=device)

        return self.per_device(build) if per_device else build(None)

    def coverage(self, fact: str) -> list[Coverage]:
        """GPU activity in the export that ``fact`` (``timeline``, ``kernels``, a report name) leaves out."""
        from pydantic import TypeAdapter

        from gpuopt.models.nsys import Coverage

        return TypeAdapter(list[Coverage]).validate_json(self._native.coverage_json(fact))


def open(path: str | os.PathLike[str]) -> Report:
    """Opens an nsys SQLite export, or exports a ``.nsys-rep`` first (needs ``nsys``; exit 3 without)."""
    p = Path(path)
    if p.suffix.lower() in _REPORT_SUFFIXES:
        sqlite, tool = export_report(p)
        return Report(_native.nsys_open(str(sqlite)), tool)
    return Report(_native.nsys_open(str(p)))


def table(path: str | os.PathLike[str], fact: str, **options: object) -> pl.DataFrame:
    """``open(path).table(fact, **options)``: the per-file function of ``gpuopt.many`` (picklable)."""
    return open(path).table(fact, **options)  # type: ignore[arg-type]


def ranks(paths: Sequence[str | os.PathLike[str]], *, step: str | None = None) -> Ranks:
    """The ranks of one job across exports: one rank per process that ran kernels, in file order then
    by pid (exports carry no rank metadata). ``step`` names the NVTX range whose instances are steps."""
    from gpuopt._tables import to_polars

    ranks_, collectives, stragglers, clock = _native.nsys_ranks([str(p) for p in paths], step)
    return Ranks(to_polars(ranks_), to_polars(collectives), to_polars(stragglers), "file_order", clock)


def _cache_dir() -> Path:
    root = os.environ.get("GPUOPT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gpuopt"
    )
    return Path(root) / "nsys"


def export_report(report: Path) -> tuple[Path, NsysExportTool]:
    """Exports a ``.nsys-rep`` with ``nsys export --type sqlite`` into gpuopt's cache (keyed by the
    report's SHA-256 and the nsys version), never beside the user's file."""
    from gpuopt.models.nsys import NsysExportTool
    from gpuopt.provenance import file_identity
    from gpuopt.tools import require_tool

    tool = require_tool("nsys")
    identity = file_identity(report)
    version = re.sub(r"[^0-9A-Za-z.]", "_", tool.version or "unknown")
    cache = _cache_dir()
    target = cache / f"{identity.blake3[:32]}-nsys{version}.sqlite"
    facts = dict(report_path=str(report), sqlite_path=str(target), nsys_path=tool.path)
    if target.is_file():
        return target, NsysExportTool(**facts, nsys_version=tool.version, cached=True)
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial.sqlite")
    command = [tool.path, "export", "--type", "sqlite", "--force-overwrite", "true"]
    command += ["--output", str(partial), str(report)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, errors="replace", timeout=_EXPORT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(
            "nsys_export_failed", f"nsys export of {report} failed: {exc}", path=str(report)
        ) from exc
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise InputError(
            "nsys_export_failed",
            f"nsys export of {report} exited {done.returncode}",
            path=str(report),
            observed=" | ".join(tail) or None,
        )
    os.replace(partial, target)
    return target, NsysExportTool(**facts, nsys_version=tool.version, cached=False)


def parse_window(text: str) -> Window:
    """``"START:END"`` (either side may be empty) -> ``(start_ns, end_ns)`` (the one ``--window`` grammar,
    :mod:`gpuopt._window`)."""
    return _window.parse_window(text, open_ends=True)


def selection(window: Window | None, nvtx: str | None) -> NsysSelection:
    from gpuopt.models.nsys import NsysSelection

    start, end = window or (None, None)
    return NsysSelection(window_start_ns=start, window_end_ns=end, nvtx=nvtx)


# --- nsys' CSV rendering -------------------------------------------------------------------------

# (gpuopt column, nsys header, format): "int" as is, "r1" SQLite round(x, 1), "mb" bytes as MB (3 places).
_STAT = [("avg", "Avg"), ("med", "Med"), ("min", "Min"), ("max", "Max"), ("stddev", "StdDev")]


def _time_columns(count: tuple[str, str], name: tuple[str, str]) -> list[tuple[str, str, str]]:
    cols = [("time_pct", "Time (%)", "r1"), ("total_time_ns", "Total Time (ns)", "int"), (*count, "int")]
    cols += [(f"{k}_ns", f"{h} (ns)", "int" if k in ("min", "max") else "r1") for k, h in _STAT]
    return [*cols, (*name, "str")]


def _exec_columns() -> list[tuple[str, str, str]]:
    cols = [("pid", "PID", "int"), ("tid", "TID", "int"), ("device_id", "DevId", "int")]
    cols += [("count", "Count", "int"), ("q_count", "QCount", "int")]
    for p in "taqk":
        cols += [
            (f"{p}_{k}_ns", f"{p.upper()}{h} (ns)", "int" if k in ("min", "max") else "r1") for k, h in _STAT
        ]
    return [*cols, ("api_name", "API Name", "str"), ("kernel_name", "Kernel Name", "str")]


CSV_COLUMNS: dict[str, list[tuple[str, str, str]]] = {
    "cuda_gpu_kern_sum": _time_columns(("instances", "Instances"), ("name", "Name")),
    "cuda_api_sum": _time_columns(("num_calls", "Num Calls"), ("name", "Name")),
    "cuda_gpu_mem_time_sum": _time_columns(("count", "Count"), ("operation", "Operation")),
    "cuda_gpu_mem_size_sum": [
        ("total_bytes", "Total (MB)", "mb"),
        ("count", "Count", "int"),
        *[(f"{k}_bytes", f"{h} (MB)", "mb") for k, h in _STAT],
        ("operation", "Operation", "str"),
    ],
    "nvtx_sum": [
        *_time_columns(("instances", "Instances"), ("style", "Style")),
        ("range", "Range", "str"),
    ],
    "cuda_kern_exec_sum": _exec_columns(),
    "nvtx_kern_sum": [
        ("range", "NVTX Range", "str"),
        ("style", "Style", "str"),
        ("pid", "PID", "int"),
        ("tid", "TID", "int"),
        ("nvtx_instances", "NVTX Inst", "int"),
        ("kernel_instances", "Kern Inst", "int"),
        ("total_time_ns", "Total Time (ns)", "int"),
        *[(f"{k}_ns", f"{h} (ns)", "int" if k in ("min", "max") else "r1") for k, h in _STAT],
        ("kernel_name", "Kernel Name", "str"),
    ],
}


def sqlite_round1(value: float) -> str:
    """SQLite's ``round(x, 1)`` as text: the exact binary value rounded at one decimal, ties away from
    zero (so 7095.15, stored as 7095.1499999..., is 7095.1, and 11303.75 is 11303.8)."""
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _cell(value: object, fmt: str) -> str:
    if value is None:
        return ""
    if fmt == "r1" and isinstance(value, (int, float)):
        return sqlite_round1(float(value))
    if fmt == "mb" and isinstance(value, (int, float)):
        return f"{value / 1e6:.3f}"
    return str(value)


# What `nsys stats` prints instead of a report whose source table the export lacks (seen with nsys
# 2025.3 on an export without NVTX_EVENTS). Messages for other tables were never observed: for those
# the CSV keeps its header and no rows, and the JSON names the missing tables in `not_captured`.
_NSYS_SKIPPED = {"NVTX_EVENTS": "NV Tools Extension (NVTX) data"}


def stats_csv(
    frame: pl.DataFrame, report: str, *, path: str | None = None, missing: Sequence[str] = ()
) -> str:
    """Renders a :meth:`Report.stats` table as ``nsys stats --format csv`` prints it.

    With ``path`` and the report's ``missing`` source tables, a report nsys would skip renders as
    nsys's own ``SKIPPED:`` line.
    """
    for table in missing:
        if path is not None and table in _NSYS_SKIPPED:
            return f"SKIPPED: {path} does not contain {_NSYS_SKIPPED[table]}.\n"
    columns = CSV_COLUMNS.get(report)
    if columns is None:
        raise InputError(
            "nsys_report_unknown", f"no report named {report!r}", expected=", ".join(STATS_REPORTS)
        )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([header for _, header, _ in columns])
    for row in frame.iter_rows(named=True):
        writer.writerow([_cell(row[col], fmt) for col, _, fmt in columns])
    return out.getvalue()
