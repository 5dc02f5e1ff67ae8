"""Documents of the Nsight Systems engine: export identity, timeline facts and command data."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData


class NsysExport(Model):
    """What wrote the export, from ``META_DATA_EXPORT`` (or the older ``EXPORT_META_DATA``)."""

    metadata_table: str
    schema_version: str = Field(description="EXPORT_SCHEMA_VERSION, e.g. 3.20.3")
    schema_major: int
    schema_minor: int
    schema_micro: int
    product_version: str | None = Field(description="EXPORT_PRODUCT_VERSION, e.g. 2025.3.2.0")
    product_name: str | None


class CaptureOption(Model):
    name: str
    value: str


class NsysGpu(Model):
    """A GPU of the capture (``TARGET_INFO_GPU``, or ``TARGET_INFO_CUDA_DEVICE`` when that is absent)."""

    id: int | None
    cuda_id: int | None
    name: str | None
    chip_name: str | None
    bus_location: str | None
    uuid: str | None
    sm_count: int | None
    total_memory_bytes: int | None
    memory_bandwidth_bytes_per_s: int | None
    clock_rate_hz: int | None
    l2_cache_bytes: int | None
    compute_capability: str | None


class SourceStatus(Model):
    """A table gpuopt reads: whether the capture has it (absent = not captured) and its row count."""

    table: str
    actual: str | None = Field(description="Its name in this file (a _V<n> name where versioned)")
    captured: bool
    rows: int | None


class NsysInfo(Model):
    export: NsysExport
    capture: list[CaptureOption]
    capture_environment_variables: int = Field(
        description="Environment-variable rows of META_DATA_CAPTURE (counted, not reproduced)"
    )
    gpus: list[NsysGpu]
    gpu_source: str | None
    sources: list[SourceStatus]
    nvtx_ranges: int
    nvtx_open_ranges: int = Field(description="NVTX ranges with no end (closed at the last timestamp)")
    string_ids: int
    unread_tables: list[str]


class NsysExportTool(Model):
    """How a ``.nsys-rep`` became the SQLite export that was read."""

    report_path: str
    sqlite_path: str
    nsys_path: str
    nsys_version: str | None
    cached: bool = Field(description="True when an earlier export of the same report was reused")


class NsysSelection(Model):
    """The part of the capture the facts cover."""

    window_start_ns: int | None = None
    window_end_ns: int | None = None
    nvtx: str | None = Field(default=None, description="NVTX range name: work launched inside it")


class Distribution(Model):
    count: int
    total_ns: int
    min_ns: int | None
    median_ns: int | None = Field(description="Nearest-rank median")
    p90_ns: int | None = Field(description="Nearest-rank 90th percentile")
    max_ns: int | None
    mean_ns: float | None


class GapBucket(Model):
    lower_ns: int
    upper_ns: int | None = Field(description="Exclusive; null for the open-ended last bucket")
    count: int
    total_ns: int


class Gaps(Distribution):
    histogram: list[GapBucket]


class KernelConcurrency(Model):
    max_kernels: int
    mean_kernels_when_busy: float = Field(
        description="Time-weighted mean number of kernels running while at least one runs"
    )
    time_at_level_ns: list[int] = Field(
        description="Index k: time with exactly k kernels running (k = 0: idle between kernels)"
    )


class Busy(Model):
    """Busy/idle facts of one device or stream (GPU operations: kernels, memcpys, memsets, and the
    CUDA-graph executions of a graph-level trace)."""

    kernels: int
    memcpys: int
    memsets: int
    graph_executions: int = Field(description="CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows (graph-level trace)")
    span_start_ns: int | None
    span_end_ns: int | None
    span_ns: int = Field(description="First operation start to last operation end")
    busy_ns: int = Field(description="Union of operation intervals")
    idle_ns: int
    busy_pct: float = Field(description="Time utilization (busy / span), not resource saturation")
    kernel_busy_ns: int = Field(description="Union of kernels and graph executions")
    graph_busy_ns: int = Field(description="Union of graph executions")
    copy_busy_ns: int = Field(description="Union of memcpy and memset intervals")
    compute_copy_overlap_ns: int
    kernel_only_ns: int
    copy_only_ns: int
    gaps: Gaps
    concurrency: KernelConcurrency


class StreamTimeline(Busy):
    stream_id: int


class DeviceTimeline(Busy):
    device_id: int
    streams: list[StreamTimeline]


class SyncByType(Model):
    device_id: int | None = Field(
        description="Device of the context waited on (from that context's GPU rows, not the export's "
        "SYNCHRONIZATION.deviceId, which nsys writes as 0 for every process)"
    )
    context_id: int | None
    stream_id: int | None = Field(description="Stream waited on; null for a context- or event-wide sync")
    sync_type: str = Field(description="ENUM_CUPTI_SYNC_TYPE label")
    api_name: str | None = Field(description="The CUDA API call that synchronized (correlationId join)")
    count: int
    total_ns: int
    max_ns: int


class HostSync(Model):
    """Host time blocked in API calls that CUPTI recorded a synchronization for, per device waited on."""

    device_id: int | None = Field(description="Device of the context the call waited on")
    api_name: str
    calls: int
    blocked_ns: int
    profiler_overhead_ns: int
    blocked_excl_overhead_ns: int


class Launch(Model):
    """Kernels launched one by one: start vs. the API call that launched them."""

    device_id: int
    kernels: int = Field(description="Kernels launched one by one")
    graph_kernels: int = Field(
        description="Kernels of graph executions (node-level trace), left out here: see graph_launch"
    )
    matched: int = Field(description="Kernels whose launch call is in the export")
    api_ns: Distribution
    api_excl_overhead_ns: Distribution
    queue_delay_ns: Distribution = Field(description="Kernel start - launch call end (may be negative)")
    negative_queue_delays: int
    launch_latency_ns: Distribution = Field(description="Kernel start - launch call start")


class GraphLaunch(Model):
    """Launches of whole CUDA graphs on one device, apart from ordinary kernel launches."""

    device_id: int
    executions: int
    matched: int = Field(description="Executions whose launch call is in the export")
    launch_latency_ns: Distribution = Field(description="Execution start - launch call start")
    queue_delay_ns: Distribution = Field(description="Execution start - launch call end")
    node_kernels: int = Field(description="Kernels of graph executions (node-level trace)")
    node_gap_ns: Distribution = Field(
        description="Each graph kernel's start - the end of the kernels before it in its execution"
    )


class Overhead(Model):
    """Overhead the export attributes to the profiler (subtracted from host-side times)."""

    recorded: bool = Field(description="PROFILER_OVERHEAD or CUPTI_ACTIVITY_KIND_OVERHEAD exists")
    intervals: int
    total_ns: int


class CudaOverhead(Model):
    """CUPTI overhead rows not attributed to the profiler (e.g. "Command buffer full (CUDA)"):
    CUDA's own stalls, reported and never subtracted."""

    overhead_type: str = Field(description="ENUM_CUPTI_OVERHEAD_TYPE label, or 'unattributed'")
    intervals: int
    total_ns: int


class Coverage(Model):
    """GPU activity present in the export that a fact leaves out: the fact is not complete."""

    table: str
    rows: int
    note: str


class Timeline(Model):
    devices: list[DeviceTimeline]
    synchronization: list[SyncByType]
    host_sync: list[HostSync]
    launch: list[Launch]
    graph_launch: list[GraphLaunch]
    profiler_overhead: Overhead
    cuda_overhead: list[CudaOverhead]
    coverage: list[Coverage] = Field(description="GPU activity these facts leave out (empty: none)")


class GraphFacts(Model):
    """One executable CUDA graph on one device."""

    device_id: int
    graph_id: int | None = Field(description="graphId (graph-level trace; null in node-level traces)")
    graph_exec_id: int | None
    first_node_id: int | None = Field(description="Node-level trace: smallest graphNodeId (the key)")
    exec_created_in_capture: bool | None = Field(description="CUDA_GRAPH_EVENTS records its creation")
    launches: int = Field(description="Distinct launch calls of its executions")
    executions: int
    unlinked_executions: int = Field(description="Executions whose launch call is not in the export")
    gpu_ns: Distribution = Field(description="GPU time per execution (first start to last end)")
    kernels_per_execution: Distribution | None = Field(description="Node-level trace only")
    host_ns: Distribution = Field(description="Launch call duration")
    launch_latency_ns: Distribution = Field(description="Execution start - launch call start")


class Graphs(Model):
    trace_mode: str = Field(description="graph (GRAPH_TRACE rows), node (graphNodeId), graph+node, none")
    executions: int
    unlinked_executions: int
    graphs: list[GraphFacts]


class NsysSummaryData(Model):
    """``gpuopt nsys summary``: the export's identity and the headline timeline facts."""

    path: str
    source: NsysExportTool | None
    selection: NsysSelection
    info: NsysInfo
    timeline: Timeline
    graphs: Graphs


class NsysTimelineData(Model):
    """``gpuopt nsys timeline``: every timeline fact of the selection."""

    path: str
    source: NsysExportTool | None
    selection: NsysSelection
    timeline: Timeline


class NsysTableData(Model):
    """One table of facts (``kernels``, ``api``, ``mem``, ``nvtx``, ``gaps``, or an nsys stats report)."""

    path: str
    source: NsysExportTool | None
    selection: NsysSelection
    report: str = Field(description="The table's name; nsys stats report names where they apply")
    not_captured: list[str] = Field(description="Source tables this table needs that the capture lacks")
    coverage: list[Coverage] = Field(description="GPU activity in the export this table leaves out")
    table: TableData


class NsysGraphsData(Model):
    """``gpuopt nsys graphs``: one row per CUDA graph."""

    path: str
    source: NsysExportTool | None
    selection: NsysSelection
    graphs: Graphs
    coverage: list[Coverage]
