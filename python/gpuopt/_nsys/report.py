"""The reader behind :mod:`gpuopt.nsys`: an opened export (:class:`Report`) and its facts as polars
tables and pydantic documents; every fact is read natively (``rust/src/nsys``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import _native
from gpuopt._columns import Column
from gpuopt._nsys.export import export_report, is_report
from gpuopt.errors import InputError

if TYPE_CHECKING:  # the models (pydantic) are imported where a method builds one, not on import
    import polars as pl

    from gpuopt.models.envelope import UnmodeledItem
    from gpuopt.models.nsys import Coverage, Graphs, NsysExportTool, NsysInfo, Timeline

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

    def unmodeled(self) -> list[UnmodeledItem]:
        """:meth:`unread_tables` as a document's ``unmodeled`` items."""
        from gpuopt.models.envelope import UnmodeledItem

        return [UnmodeledItem(kind="table", name=name) for name in self.unread_tables()]

    def info(self) -> NsysInfo:
        """Versions, capture options, GPUs and row counts of every source table."""
        from gpuopt.models.nsys import NsysInfo

        return NsysInfo.model_validate_json(self._native.info_json())

    def timer_resolution_ns(self) -> int:
        """The GPU timer's resolution (ns) the export's GPU durations show: the largest grid that every
        distinct duration of its kernels, graph executions, memcpys and memsets fits within 1 ns (32 on an
        H100); 1 when no grid shows or fewer than 16 distinct durations exist (rust/src/profile/timer.rs)."""
        return int(self._native.timer_resolution_ns())

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

        :meth:`stats_csv` prints it exactly as ``nsys stats --format csv`` does. ``device`` keeps
        that device's GPU work and the CPU events (API calls, NVTX ranges) of the processes that used it.
        """
        from gpuopt._tables import to_polars

        start, end = window or (None, None)
        return to_polars(self._native.stats(report, start, end, nvtx, device))

    def stats_csv(
        self,
        report: str,
        *,
        window: Window | None = None,
        nvtx: str | None = None,
        shown_path: str | None = None,
    ) -> str:
        """One ``nsys stats`` report as ``nsys stats --format csv`` prints it, byte for byte (rendered by
        the engine). With ``shown_path`` (the file as the user named it), a report whose source table
        the export lacks is nsys's own ``SKIPPED: <path> does not contain ...`` line."""
        start, end = window or (None, None)
        doc = self._native.stats_doc(report, start, end, nvtx)
        return doc.csv(shown_path, self.not_captured(report))

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
    if is_report(p):
        sqlite, tool = export_report(p)
        return Report(_native.nsys_open(str(sqlite)), tool)
    return Report(_native.nsys_open(str(p)))


def table(path: str | os.PathLike[str], fact: str, **options: object) -> pl.DataFrame:
    """``open(path).table(fact, **options)``: the per-file function of ``gpuopt.many`` (picklable)."""
    return open(path).table(fact, **options)  # type: ignore[arg-type]
