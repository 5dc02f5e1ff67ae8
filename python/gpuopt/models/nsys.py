"""Documents of the Nsight Systems engine: export identity, timeline facts and command data."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData


class NsysExport(Model):
    """What wrote the export, from ``META_DATA_EXPORT`` (or the older ``EXPORT_META_DATA``)."""

    metadata_table: str = Field(
        description="The metadata table read: META_DATA_EXPORT or the older EXPORT_META_DATA"
    )
    schema_version: str = Field(description="EXPORT_SCHEMA_VERSION, e.g. 3.20.3")
    schema_major: int = Field(description="Major part of schema_version")
    schema_minor: int = Field(description="Minor part of schema_version")
    schema_micro: int = Field(description="Micro part of schema_version")
    product_version: str | None = Field(description="EXPORT_PRODUCT_VERSION, e.g. 2025.3.2.0")
    product_name: str | None = Field(description="EXPORT_PRODUCT_NAME, when recorded")


class CaptureOption(Model):
    name: str = Field(description="Capture option name from META_DATA_CAPTURE")
    value: str = Field(description="Its value as recorded")


class NsysGpu(Model):
    """A GPU of the capture (``TARGET_INFO_GPU``, or ``TARGET_INFO_CUDA_DEVICE`` when that is absent)."""

    id: int | None = Field(description="TARGET_INFO_GPU id (the deviceId of GPU activity rows)")
    cuda_id: int | None = Field(description="CUDA device ordinal")
    name: str | None = Field(description="GPU product name")
    chip_name: str | None = Field(description="Chip name (GH100, ...)")
    bus_location: str | None = Field(description="PCI bus location")
    uuid: str | None = Field(description="GPU UUID")
    sm_count: int | None = Field(description="Streaming multiprocessors")
    total_memory_bytes: int | None = Field(description="Device memory (bytes)")
    memory_bandwidth_bytes_per_s: int | None = Field(
        description="Peak memory bandwidth as recorded (bytes/s)"
    )
    clock_rate_hz: int | None = Field(description="SM clock rate as recorded (Hz)")
    l2_cache_bytes: int | None = Field(description="L2 cache size (bytes)")
    compute_capability: str | None = Field(description="Compute capability (9.0, ...)")


class SourceStatus(Model):
    """A table gpuopt reads: whether the capture has it (absent = not captured) and its row count."""

    table: str = Field(description="The table gpuopt reads (its unversioned name)")
    actual: str | None = Field(description="Its name in this file (a _V<n> name where versioned)")
    captured: bool = Field(
        description="True when the export has the table (false: that activity was not captured)"
    )
    rows: int | None = Field(description="Rows in it; null when absent")


class NsysInfo(Model):
    export: NsysExport = Field(description="What wrote the export")
    capture: list[CaptureOption] = Field(description="Capture options recorded in META_DATA_CAPTURE")
    capture_environment_variables: int = Field(
        description="Environment-variable rows of META_DATA_CAPTURE (counted, not reproduced)"
    )
    gpus: list[NsysGpu] = Field(description="GPUs of the capture")
    gpu_source: str | None = Field(
        description="The table the GPUs were read from (TARGET_INFO_GPU or TARGET_INFO_CUDA_DEVICE)"
    )
    sources: list[SourceStatus] = Field(description="Each table gpuopt reads: present or not, and its rows")
    nvtx_ranges: int = Field(description="NVTX range events in the export")
    nvtx_open_ranges: int = Field(description="NVTX ranges with no end (closed at the last timestamp)")
    string_ids: int = Field(description="Rows of StringIds (the export's string table)")
    unread_tables: list[str] = Field(description="Tables of the export gpuopt does not read")
    graph_trace_mode: str | None = Field(
        description="How CUDA graphs were traced (nsys profile --cuda-graph-trace): graph or node as the "
        "capture option CUDA_GRAPH_TRACE_OPTIONS:MODE records it (graph+node when processes differ), else "
        "as the rows show it (CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows: graph; kernels with a graphNodeId: "
        "node); null when neither says"
    )
    driver_version: str | None = Field(
        description="NVIDIA driver version (NvDriverVersion of TARGET_INFO_SYSTEM_ENV, e.g. 580.95.05); null "
        "when not recorded"
    )
    cuda_driver_version: str | None = Field(
        description="CUDA version the driver supports as recorded (CudaDriverVersion of "
        "TARGET_INFO_SYSTEM_ENV, e.g. 13000 for 13.0); null when not recorded"
    )


class NsysExportTool(Model):
    """How a ``.nsys-rep`` became the SQLite export that was read."""

    report_path: str = Field(description="The .nsys-rep given")
    sqlite_path: str = Field(description="The SQLite export that was read")
    nsys_path: str = Field(description="The nsys executable that exported it")
    nsys_version: str | None = Field(
        description="Version of that nsys executable as it reports it; null when it did not say"
    )
    cached: bool = Field(description="True when an earlier export of the same report was reused")


class NsysSelection(Model):
    """The part of the capture the facts cover."""

    window_start_ns: int | None = Field(
        default=None, description="Start of --window (ns, capture clock); null without one"
    )
    window_end_ns: int | None = Field(
        default=None, description="End of --window (ns, capture clock); null without one"
    )
    nvtx: str | None = Field(default=None, description="NVTX range name: work launched inside it")


class Distribution(Model):
    """Count, total, extremes, nearest-rank median and p90, and mean of integer nanoseconds. Nearest
    rank: the p percentile is the value at 1-based position ceil(p/100 * n) of the sorted values, so
    the median of an even count is the lower of the two middle values (never their mean)."""

    count: int = Field(description="Values described")
    total_ns: int = Field(description="Sum of the values (ns)")
    min_ns: int | None = Field(description="Smallest value (ns); null when count is 0")
    median_ns: int | None = Field(
        description="Nearest-rank median (ns): the value at sorted position ceil(n/2); for an even count "
        "the lower of the two middle values; null when count is 0"
    )
    p90_ns: int | None = Field(
        description="Nearest-rank 90th percentile (ns): the value at sorted position ceil(0.9 n); null "
        "when count is 0"
    )
    max_ns: int | None = Field(description="Largest value (ns); null when count is 0")
    mean_ns: float | None = Field(description="Mean value (ns); null when count is 0")


class CountDistribution(Model):
    """The statistics of Distribution over counts (not ns): same nearest-rank median and p90."""

    count: int = Field(description="Values described")
    total: int = Field(description="Sum of the values")
    min: int | None = Field(description="Smallest value; null when count is 0")
    median: int | None = Field(
        description="Nearest-rank median: for an even count the lower of the two middle values"
    )
    p90: int | None = Field(description="Nearest-rank 90th percentile")
    max: int | None = Field(description="Largest value; null when count is 0")
    mean: float | None = Field(description="Mean value; null when count is 0")


class GapBucket(Model):
    lower_ns: int = Field(description="Inclusive lower bound of the bucket (ns)")
    upper_ns: int | None = Field(description="Exclusive; null for the open-ended last bucket")
    count: int = Field(description="Gaps in the bucket")
    total_ns: int = Field(description="Their summed duration (ns)")


class Gaps(Distribution):
    histogram: list[GapBucket] = Field(
        description="Gap counts and time by duration bucket (powers of ten, ns)"
    )


class KernelConcurrency(Model):
    max_kernels: int = Field(description="Most kernels running at one instant")
    mean_kernels_when_busy: float = Field(
        description="Time-weighted mean number of kernels running while at least one runs"
    )
    time_at_level_ns: list[int] = Field(
        description="Index k: time with exactly k kernels running (k = 0: idle between kernels)"
    )


class Busy(Model):
    """Busy/idle facts of one device or stream (GPU operations: kernels, memcpys, memsets, and the
    CUDA-graph executions of a graph-level trace)."""

    kernels: int = Field(description="Kernels in the span")
    memcpys: int = Field(description="Memcpys in the span")
    memsets: int = Field(description="Memsets in the span")
    graph_executions: int = Field(description="CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows (graph-level trace)")
    span_start_ns: int | None = Field(
        description="First operation start (ns, capture clock; clipped to --window)"
    )
    span_end_ns: int | None = Field(description="Last operation end (ns, capture clock; clipped to --window)")
    span_ns: int = Field(description="First operation start to last operation end")
    busy_ns: int = Field(description="Union of operation intervals")
    idle_ns: int = Field(description="span_ns - busy_ns: no operation running (ns)")
    busy_pct: float = Field(description="Time utilization (busy / span), not resource saturation")
    kernel_busy_ns: int = Field(description="Union of kernels and graph executions")
    graph_busy_ns: int = Field(description="Union of graph executions")
    copy_busy_ns: int = Field(description="Union of memcpy and memset intervals")
    compute_copy_overlap_ns: int = Field(
        description="Time kernels and copies ran at once: kernel union ∩ copy union (ns)"
    )
    kernel_only_ns: int = Field(description="Time kernels ran and no copy did (ns)")
    copy_only_ns: int = Field(description="Time copies ran and no kernel did (ns)")
    gaps: Gaps = Field(description="Idle gaps between operations: their distribution and histogram")
    concurrency: KernelConcurrency = Field(description="How many kernels ran at once")


class StreamTimeline(Busy):
    stream_id: int = Field(description="CUDA stream id")


class DeviceTimeline(Busy):
    device_id: int = Field(description="Device id (streams merged)")
    streams: list[StreamTimeline] = Field(description="The same facts per stream of the device")


class SyncByType(Model):
    device_id: int | None = Field(
        description="Device of the context waited on (from that context's GPU rows, not the export's "
        "SYNCHRONIZATION.deviceId, which nsys writes as 0 for every process)"
    )
    context_id: int | None = Field(description="CUDA context waited on")
    stream_id: int | None = Field(description="Stream waited on; null for a context- or event-wide sync")
    sync_type: str = Field(description="ENUM_CUPTI_SYNC_TYPE label")
    api_name: str | None = Field(
        description="The CUDA API call that synchronized (correlationId join); null when the export holds "
        "no call with that correlationId (e.g. the capture stopped before the call was recorded)"
    )
    count: int = Field(description="Synchronization events of this type")
    total_ns: int = Field(description="Their summed duration (ns)")
    max_ns: int = Field(description="The longest (ns)")


class HostSync(Model):
    """Host time blocked in synchronizing calls, per API name and device waited on: every call of a
    synchronizing API (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize,
    cudaThreadSynchronize, cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize) and every other
    call CUPTI recorded a synchronization for (cudaStreamWaitEvent in some exports), each call once."""

    device_id: int | None = Field(
        description="Device of the context the call waited on (its synchronization row), else the one "
        "device its process ran work on; null when neither says"
    )
    api_name: str = Field(description="The synchronizing CUDA API call (cudaStreamSynchronize, ...)")
    calls: int = Field(description="Distinct calls of it in the selection")
    recorded_calls: int = Field(
        description="Those CUPTI recorded a synchronization row for (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION); "
        "nsys 2025.3.2 records none for cudaDeviceSynchronize"
    )
    blocked_ns: int = Field(description="Host time inside those calls (ns)")
    profiler_overhead_ns: int = Field(
        description="Profiler overhead inside those calls on the same thread (ns)"
    )
    blocked_excl_overhead_ns: int = Field(description="blocked_ns - profiler_overhead_ns (ns)")


class Launch(Model):
    """Kernels launched one by one: start vs. the API call that launched them."""

    device_id: int = Field(description="Device the kernels ran on")
    kernels: int = Field(description="Kernels launched one by one")
    graph_kernels: int = Field(
        description="Kernels of graph executions (node-level trace), left out here: see graph_launch"
    )
    matched: int = Field(description="Kernels whose launch call is in the export")
    kernel_time: Distribution = Field(
        description="Duration of the matched kernels (ns): the GPU work each launch call bought"
    )
    api_time: Distribution = Field(description="Duration of the launch calls (ns)")
    api_time_excl_overhead: Distribution = Field(
        description="Duration of the launch calls minus profiler overhead inside them (ns)"
    )
    queue_delay: Distribution = Field(description="Kernel start - launch call end (may be negative)")
    negative_queue_delays: int = Field(description="Kernels that started before their launch call returned")
    launch_latency: Distribution = Field(description="Kernel start - launch call start")


class GraphLaunch(Model):
    """Launches of whole CUDA graphs on one device, apart from ordinary kernel launches."""

    device_id: int = Field(description="Device the graphs ran on")
    executions: int = Field(description="Graph executions on the device")
    matched: int = Field(description="Executions whose launch call is in the export")
    launch_latency: Distribution = Field(description="Execution start - launch call start")
    queue_delay: Distribution = Field(description="Execution start - launch call end")
    node_kernels: int = Field(description="Kernels of graph executions (node-level trace)")
    node_gap: Distribution = Field(
        description="Each graph kernel's start - the end of the kernels before it in its execution"
    )


class Overhead(Model):
    """Overhead the export attributes to the profiler (subtracted from host-side times)."""

    recorded: bool = Field(description="PROFILER_OVERHEAD or CUPTI_ACTIVITY_KIND_OVERHEAD exists")
    intervals: int = Field(description="Overhead intervals attributed to the profiler")
    total_ns: int = Field(description="Their summed duration (ns)")


class CudaOverhead(Model):
    """CUPTI overhead rows not attributed to the profiler (e.g. "Command buffer full (CUDA)"):
    CUDA's own stalls, reported and never subtracted."""

    overhead_type: str = Field(description="ENUM_CUPTI_OVERHEAD_TYPE label, or 'unattributed'")
    intervals: int = Field(description="Intervals of this overhead type")
    total_ns: int = Field(description="Their summed duration (ns)")


class Coverage(Model):
    """GPU activity present in the export that a fact leaves out: the fact is not complete."""

    table: str = Field(description="The export table whose rows the fact leaves out")
    rows: int = Field(description="Rows left out")
    note: str = Field(description="What they are and why they are left out")


class Timeline(Model):
    devices: list[DeviceTimeline] = Field(description="Busy/idle facts per device, each with its streams")
    synchronization: list[SyncByType] = Field(description="CUPTI synchronization events by type and API call")
    host_sync: list[HostSync] = Field(
        description="Host time blocked in synchronizing calls, per device and API name"
    )
    launch: list[Launch] = Field(
        description="Launch latency and queue delay of kernels launched one by one, per device"
    )
    graph_launch: list[GraphLaunch] = Field(description="Launch latency of whole CUDA graphs, per device")
    profiler_overhead: Overhead = Field(description="Overhead the export attributes to the profiler")
    cuda_overhead: list[CudaOverhead] = Field(description="CUDA's own overhead rows (never subtracted)")
    coverage: list[Coverage] = Field(description="GPU activity these facts leave out (empty: none)")


class GraphFacts(Model):
    """One executable CUDA graph on one device."""

    device_id: int = Field(description="Device the graph ran on")
    graph_id: int | None = Field(description="graphId (graph-level trace; null in node-level traces)")
    graph_exec_id: int | None = Field(description="graphExecId; null in node-level traces")
    first_node_id: int | None = Field(description="Node-level trace: smallest graphNodeId (the key)")
    exec_created_in_capture: bool | None = Field(description="CUDA_GRAPH_EVENTS records its creation")
    launches: int = Field(description="Distinct launch calls of its executions")
    executions: int = Field(description="Executions of the graph")
    unlinked_executions: int = Field(description="Executions whose launch call is not in the export")
    gpu_time: Distribution = Field(description="GPU time per execution (first start to last end)")
    kernels_per_execution: CountDistribution | None = Field(
        description="Kernels per execution; node-level trace only (null otherwise)"
    )
    host_time: Distribution = Field(description="Launch call duration")
    launch_latency: Distribution = Field(description="Execution start - launch call start")


class Graphs(Model):
    trace_mode: str = Field(
        description="What recorded the executions of the selection: graph (GRAPH_TRACE rows), node "
        "(kernels with a graphNodeId), graph+node, none (no execution)"
    )
    executions: int = Field(description="Graph executions in the selection")
    unlinked_executions: int = Field(description="Executions whose launch call is not in the export")
    graphs: list[GraphFacts] = Field(description="One entry per executable graph")
    notes: list[str] = Field(
        description="How the trace mode shaped these numbers: a node-level trace inflates the graph launch "
        "call's host time (empty when nothing is to be said)"
    )


class NsysSummaryData(Model):
    """``gpuopt nsys summary``: the export's identity and the headline timeline facts."""

    path: str = Field(description="The SQLite export read")
    source: NsysExportTool | None = Field(
        description="How a .nsys-rep became that export; null when a .sqlite was given"
    )
    selection: NsysSelection = Field(description="The part of the capture the facts cover")
    info: NsysInfo = Field(description="The export's identity: versions, GPUs, what was captured")
    timeline: Timeline = Field(description="Timeline facts of the selection")
    graphs: Graphs = Field(description="CUDA graph facts of the selection")


class NsysTimelineData(Model):
    """``gpuopt nsys timeline``: every timeline fact of the selection."""

    path: str = Field(description="The SQLite export read")
    source: NsysExportTool | None = Field(
        description="How a .nsys-rep became that export; null when a .sqlite was given"
    )
    selection: NsysSelection = Field(description="The part of the capture the facts cover")
    timeline: Timeline = Field(description="Every timeline fact of the selection (streams: at most --limit)")
    streams_left_out: int = Field(
        default=0, description="Streams not listed under their device (over --limit, the least busy)"
    )


class NsysTableData(Model):
    """One table of facts (``kernels``, ``api``, ``mem``, ``nvtx``, ``gaps``, or an nsys stats report)."""

    path: str = Field(description="The SQLite export read")
    source: NsysExportTool | None = Field(
        description="How a .nsys-rep became that export; null when a .sqlite was given"
    )
    selection: NsysSelection = Field(description="The part of the capture the table covers")
    report: str = Field(description="The table's name; nsys stats report names where they apply")
    not_captured: list[str] = Field(description="Source tables this table needs that the capture lacks")
    coverage: list[Coverage] = Field(description="GPU activity in the export this table leaves out")
    table: TableData = Field(description="The table (column definitions: gpuopt schema nsys.<table name>)")


class NsysGraphsData(Model):
    """``gpuopt nsys graphs``: one row per CUDA graph."""

    path: str = Field(description="The SQLite export read")
    source: NsysExportTool | None = Field(
        description="How a .nsys-rep became that export; null when a .sqlite was given"
    )
    selection: NsysSelection = Field(description="The part of the capture the facts cover")
    graphs: Graphs = Field(description="CUDA graph facts of the selection")
    coverage: list[Coverage] = Field(description="GPU activity in the export these facts leave out")
