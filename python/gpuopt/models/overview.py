"""``gpuopt profile overview``: what is in each capture, section by section, each naming the command that
prints it whole (``gpuopt.profile.overview/v1``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData

OverviewKind = Literal["nsys", "torch", "ncu"]


class OverviewGpu(Model):
    """One GPU the capture recorded."""

    device: int | None = Field(description="Device id as the capture numbers it; null when not recorded")
    name: str | None = Field(description="GPU product name")
    compute_capability: str | None = Field(
        description="Compute capability (9.0, ...); null when not recorded"
    )
    memory_bytes: int | None = Field(description="Device memory (bytes); null when not recorded")


class OverviewIdentity(Model):
    """What wrote the capture and on which GPUs."""

    command: str = Field(description="The command that prints every identity fact of the capture")
    tool: str = Field(
        description="The profiler and version that wrote the capture, as the capture records it"
    )
    driver: str | None = Field(description="NVIDIA driver (and CUDA driver) version; null when not recorded")
    gpus: list[OverviewGpu] = Field(description="The GPUs of the capture")
    trace_mode: str | None = Field(
        description="nsys: CUDA-graph trace mode, graph (one row per graph execution, kernels hidden) or "
        "node (each graph kernel a row); null when not recorded and for torch and ncu captures"
    )


class OverviewTotals(Model):
    """Headline counts of the capture (null where the kind does not record that fact)."""

    command: str = Field(description="The command that prints these totals with their definitions")
    kernels: int = Field(description="Kernel launches (ncu: profiled launches); graph kernels included")
    kernel_time_ns: int = Field(
        description="Summed kernel durations (ns); concurrent kernels each count (ncu: under the profiler)"
    )
    memcpys: int | None = Field(description="Memcpy operations; null for ncu")
    memsets: int | None = Field(description="Memset operations; null for ncu")
    graph_executions: int | None = Field(
        description="CUDA-graph executions (nsys graph-level trace rows, torch graph launches); null for ncu"
    )
    span_ns: int | None = Field(
        description="First GPU operation start to last GPU operation end (ns), largest over devices; null "
        "for ncu (launches are replayed one by one)"
    )


class OverviewDeviceBusy(Model):
    """Busy and idle time of one device."""

    device: int = Field(description="The device these times are about, as the capture numbers it")
    rank: int | None = Field(
        description="torch: the trace's rank (a folder holds one trace per rank); nsys: null"
    )
    span_ns: int = Field(description="First GPU operation start to last end on the device (ns)")
    busy_ns: int = Field(description="Union of the device's GPU operation intervals (ns)")
    idle_ns: int = Field(description="span_ns - busy_ns: no GPU operation running (ns)")
    busy_pct: float = Field(description="busy_ns / span_ns (%): time utilization, not resource saturation")


class OverviewBusy(Model):
    """Busy/idle per device (nsys and torch captures)."""

    command: str = Field(description="The command that prints busy/idle per device and stream, with gaps")
    devices: list[OverviewDeviceBusy] = Field(description="One entry per device with GPU activity")


class OverviewTop(Model):
    """The first rows of a table, in the order the cited command prints them."""

    command: str = Field(description="The command that prints the whole table in this order")
    table: TableData = Field(
        description="Its first rows (at most 5) and the columns that say most; total_rows counts the whole "
        "table (column definitions: gpuopt schema AREA.TABLE)"
    )


class OverviewGraphs(Model):
    """CUDA graphs the capture replayed."""

    command: str = Field(description="The command that prints the facts per CUDA graph")
    graphs: int = Field(description="Distinct graphs executed (torch: distinct kernel sequences)")
    executions: int = Field(description="Graph executions")


class OverviewIterations(Model):
    """The steps (iterations) of the capture: instances of a step range."""

    command: str = Field(description="The command that prints every range with its instances and times")
    marker: str = Field(description="What marks one step: ProfilerStep#N, or the range --marker named")
    ranges: list[str] = Field(description="The range names counted as steps")
    steps: int = Field(description="Instances of those ranges")
    mean_host_ns: float | None = Field(description="Mean host duration of one step (ns); null with no step")
    gpu_time_ns: int = Field(
        description="Summed GPU time of the work launched inside the steps (ns; nsys: kernels and graph "
        "executions, torch: every GPU event)"
    )


class OverviewWarning(Model):
    """Something about the capture that changes how its numbers read."""

    code: str = Field(description="Stable code to switch on")
    message: str = Field(description="What it is, in a sentence, with its count")


class FileError(Model):
    """Why a file has no overview: the error the file alone would give."""

    code: str = Field(description="Stable error code (profile_kind_unknown, name_unknown, ...)")
    message: str = Field(description="What went wrong, for a person")
    path: str | None = Field(default=None, description="Where: a file, option or field; null when none")
    expected: str | None = Field(default=None, description="What was expected there; null when unsaid")
    observed: str | None = Field(default=None, description="What was found there; null when unsaid")


class FileOverview(Model):
    """One capture: each section of what it holds, or the error that stopped it."""

    path: str = Field(description="The capture as given")
    kind: OverviewKind | None = Field(description="nsys, torch or ncu; null when the file could not be read")
    error: FileError | None = Field(description="Why this file has no overview; null when it was read")
    identity: OverviewIdentity | None = Field(description="Profiler, driver, GPUs and trace mode")
    totals: OverviewTotals | None = Field(description="Headline counts")
    busy: OverviewBusy | None = Field(description="Busy/idle per device; null for ncu reports")
    top_kernels: OverviewTop | None = Field(description="Kernels with the most summed GPU time")
    top_ops: OverviewTop | None = Field(description="torch: ops with the most GPU time of their own")
    top_ranges: OverviewTop | None = Field(description="nsys: NVTX ranges with the most host time")
    graphs: OverviewGraphs | None = Field(description="CUDA graphs; null for ncu reports")
    iterations: OverviewIterations | None = Field(
        description="Steps; null when no ProfilerStep#N range (or --marker range) is in the capture"
    )
    warnings: list[OverviewWarning] = Field(description="What changes how the numbers read (empty: nothing)")
    unmodeled: dict[str, int] = Field(
        description="Content of this file no fact reads: how many items of each kind (table, event_arg, "
        "metric_instances, ...); the envelope's unmodeled lists every item"
    )


class OverviewData(Model):
    """Each capture's overview, in the order given."""

    files: list[FileOverview] = Field(
        description="One entry per file (globs expanded), a failed one with its error"
    )
    failed: int = Field(description="Files whose entry is an error")
