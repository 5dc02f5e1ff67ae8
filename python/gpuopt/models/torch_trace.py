"""Documents of the PyTorch trace engine (``gpuopt torch ...``); they mirror ``rust/src/torch_trace``.

Times are integer nanoseconds. Relative times (``*_start_ns``, ``*_end_ns``) count from the trace's
first complete event (``origin_ns``, in the trace's own clock).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData

Platform = Literal["cuda", "rocm", "mtia", "cpu_only"]
TraceFormat = Literal["kineto", "kineto_2021"]


class Device(Model):
    """One entry of the trace's ``deviceProperties``."""

    id: int | None = Field(description="Device index (deviceProperties.id)")
    name: str | None = Field(description="GPU name")
    total_memory_bytes: int | None = Field(description="Device memory (bytes, totalGlobalMem)")
    compute_capability: str | None = Field(description="computeMajor.computeMinor")
    multiprocessors: int | None = Field(description="numSms")
    warp_size: int | None = Field(description="Threads per warp (warpSize)")


class Distributed(Model):
    """The trace's ``distributedInfo`` (absent for single-process traces)."""

    backend: str | None = Field(description="Process-group backend (nccl, gloo, ...)")
    global_rank: int | None = Field(description="distributedInfo.rank")
    world_size: int | None = Field(description="Ranks in the job")
    nccl_version: str | None = Field(description="NCCL version recorded")


class LogLines(Model):
    """Kineto's own log lines saved in the trace (``INFO``/``WARNING``/``ERROR`` keys)."""

    info: int = Field(description="Kineto INFO lines saved in the trace")
    warning: int = Field(description="Kineto WARNING lines")
    error: int = Field(description="Kineto ERROR lines")
    errors: list[str] = Field(description="The ERROR lines (at most 20)")


class TraceHeader(Model):
    """Identity facts from the trace's top-level keys."""

    schema_version: int = Field(description="schemaVersion (1 is supported)")
    trace_name: str | None = Field(description="traceName")
    trace_id: str | None = Field(
        description="The trace's trace_id key (a profiler-assigned id); null when absent"
    )
    base_time_ns: int | None = Field(description="baseTimeNanoseconds")
    display_time_unit: str | None = Field(
        description="displayTimeUnit (how viewers show times; ts/dur are µs regardless)"
    )
    cupti_version: int | None = Field(
        description="The trace's cupti_version key: CUPTI version of the profiler that wrote it; null when "
        "absent"
    )
    cuda_runtime_version: int | None = Field(description="cuda_runtime_version (e.g. 12080 = 12.8)")
    cuda_driver_version: int | None = Field(description="cuda_driver_version (e.g. 12080 = 12.8)")
    record_shapes: bool | None = Field(description="Whether the profiler recorded input shapes")
    distributed: Distributed | None = Field(description="null: no distributedInfo (one rank)")
    devices: list[Device] = Field(description="deviceProperties: the GPUs of the process")
    log_lines: LogLines = Field(description="Kineto's saved log lines, counted")


class EventCounts(Model):
    """How many events of each kind the trace held."""

    events: int = Field(description="Entries of traceEvents")
    complete: int = Field(description="Complete (`X`) events of any category")
    metadata: int = Field(description="Metadata (M) events")
    flows: int = Field(description="Flow (s/f) events")
    instant: int = Field(description="Instant (i) events")
    cpu_ops: int = Field(description="cpu_op (2021: Operator)")
    annotations: int = Field(description="user_annotation (record_function, ProfilerStep#N)")
    python_functions: int = Field(description="python_function events")
    runtime_calls: int = Field(description="cuda_runtime (2021: Runtime)")
    driver_calls: int = Field(description="cuda_driver")
    kernels: int = Field(description="Kernel events")
    memcpys: int = Field(description="gpu_memcpy events")
    memsets: int = Field(description="gpu_memset events")
    gpu_annotations: int = Field(description="gpu_user_annotation")
    syncs: int = Field(description="cuda_sync")
    gpu_without_stream: int = Field(description="GPU events without a stream id")
    legacy: int = Field(description="Events in the 2021 categories")
    hip_calls: int = Field(description="Runtime calls named hip* (ROCm)")


class LinkStats(Model):
    """How events were linked: CPU op → runtime call (containment, else External id) → GPU activity
    (CUPTI correlation id). Unlinked events are counted, never dropped."""

    gpu_events: int = Field(description="GPU events (kernels, memcpys, memsets)")
    gpu_linked_to_runtime: int = Field(
        description="GPU events whose correlation id matches a runtime/driver call"
    )
    gpu_unlinked: int = Field(
        description="GPU events with no runtime call in the trace (e.g. launched before it)"
    )
    gpu_linked_to_op: int = Field(
        description="GPU events whose call has an enclosing (or External id) cpu_op"
    )
    runtime_calls: int = Field(description="Runtime and driver calls")
    runtime_launching_gpu: int = Field(description="Calls linked to at least one GPU event")
    runtime_op_by_containment: int = Field(
        description="Calls given a cpu_op by containment on the same thread"
    )
    runtime_op_by_external_id: int = Field(
        description="Calls given a cpu_op by External id (no enclosing op)"
    )
    runtime_without_op: int = Field(description="Calls with no cpu_op")
    external_id_agree: int = Field(description="Calls whose External id equals their enclosing op's")
    external_id_disagree: int = Field(
        description="Older Kineto writes the correlation id as a call's External id; containment decides"
    )
    duplicate_correlations: int = Field(description="Calls sharing a correlation id with another call")
    flow_points: int = Field(description="ac2g flow end points")
    flow_points_matching: int = Field(
        description="Flow points on a call or GPU event with the same id and ts"
    )
    improper_nesting: int = Field(description="Host ranges partially overlapping an enclosing range")


class Temporal(Model):
    """HTA's temporal breakdown of one device: the four parts sum to ``window_ns`` exactly."""

    window_ns: int = Field(description="First GPU event start to last GPU event end")
    compute_ns: int = Field(description="Union of compute kernels (ns)")
    communication_ns: int = Field(description="Communication not overlapping compute")
    memory_ns: int = Field(description="Memcpy/memset not overlapping compute or communication")
    idle_ns: int = Field(description="window - union of all GPU work (ns)")


class IdleByCause(Model):
    """Idle time split by HTA's causes; the three parts sum to the device's ``temporal.idle_ns``."""

    kernel_wait_threshold_ns: int = Field(
        description="Gaps shorter than this (with no host wait) are kernel wait (ns)"
    )
    host_wait_ns: int = Field(description="The next event's runtime call began after the gap began")
    kernel_wait_ns: int = Field(description="Not host wait, and the gap is below the threshold")
    other_ns: int = Field(description="Idle time in gaps that are neither host wait nor kernel wait (ns)")


class KernelTypeTime(Model):
    """Time during which exactly the named classes of GPU work ran (sums to ``busy_ns``)."""

    kind: str = Field(description="compute, communication, memory, or a +-joined combination")
    time_ns: int = Field(description="Time during which exactly these classes ran (ns)")
    busy_pct: float = Field(description="time_ns / the device's busy time (%)")


class DeviceTimeline(Model):
    device: int = Field(description="The GPU's device index as the trace records it")
    streams: int = Field(description="Streams with GPU events on the device")
    first_start_ns: int = Field(description="First GPU event start (ns from the trace origin)")
    last_end_ns: int = Field(description="Last GPU event end (ns from the trace origin)")
    busy_ns: int = Field(description="Union of all GPU events on the device")
    temporal: Temporal = Field(description="HTA's temporal breakdown of the window")
    idle_by_cause: IdleByCause = Field(description="Idle time split by cause")
    kernel_types: list[KernelTypeTime] = Field(
        description="Time per combination of work classes running at once"
    )


class Distribution(Model):
    count: int = Field(description="Values described")
    min_ns: int = Field(description="Smallest value (ns)")
    p50_ns: int = Field(
        description="Nearest-rank median (ns): the value at sorted position ceil(n/2); for an even count "
        "the lower of the two middle values"
    )
    p90_ns: int = Field(description="Nearest-rank 90th percentile (ns)")
    p99_ns: int = Field(description="Nearest-rank 99th percentile (ns)")
    max_ns: int = Field(description="Largest value (ns)")
    mean_ns: float = Field(description="Mean value (ns)")


class GraphLaunch(Model):
    """Launches of whole CUDA graphs (``cudaGraphLaunch``), apart from ordinary launches."""

    executions: int = Field(description="CUDA-graph executions (one per launch call)")
    kernels: int = Field(description="Kernels of graph executions")
    launch_latency: Distribution = Field(description="Execution start (first GPU event) - call start")
    node_gap: Distribution | None = Field(
        description="Each graph kernel's start - the end of the kernels before it in its execution"
    )


class LaunchLatency(Model):
    """Kernel start minus its runtime call's start / end, over kernels launched one by one."""

    from_call_start: Distribution | None = Field(description="Null when every kernel is a graph's")
    from_call_end: Distribution | None = Field(
        description="Kernel start - launch call end, kernels launched one by one (ns)"
    )
    graph_kernels: int = Field(description="Kernels of graph executions, left out of the two above")
    graph: GraphLaunch | None = Field(
        description="Graph executions, measured apart; null without graph launches"
    )


class TransferTotal(Model):
    kind: Literal["memcpy", "memset"] = Field(description="memcpy or memset")
    name: str = Field(description="Event name (Memcpy HtoD (Pageable -> Device), ...)")
    count: int = Field(description="Events of this name")
    bytes: int | None = Field(description="null when an event does not state its bytes")
    duration_ns: int = Field(description="Their summed GPU duration (ns)")
    bandwidth_gbps: float | None = Field(description="bytes / duration_ns")


class CollectiveTotals(Model):
    kernels: int = Field(description="Communication kernels (nccl*/rccl*, gloo:)")
    time_ns: int = Field(description="Their summed duration (ns)")
    busy_ns: int = Field(description="Union of their intervals (ns)")
    compute_overlap_ns: int = Field(description="Part of busy_ns during which compute ran on the device")


class GpuSummary(Model):
    devices: list[DeviceTimeline] = Field(description="Timeline facts per device")
    kernel_time_ns: int = Field(description="Sum of kernel durations (overlap counted twice)")
    launch_latency: LaunchLatency | None = Field(
        description="Launch latency distributions; null when no kernel is linked to its call"
    )
    transfers: list[TransferTotal] = Field(description="Memcpy/memset totals per event name")
    collectives: CollectiveTotals | None = Field(description="Communication kernel totals; null without any")


class SyncTotals(Model):
    count: int = Field(description="cuda_sync events")
    duration_ns: int = Field(description="Their summed duration (ns)")


class UnmodeledCount(Model):
    kind: str = Field(description="What sort of content (event_category, arg, header_key, ...)")
    name: str = Field(description="The category, arg or header key not modeled")
    count: int = Field(description="How many times it occurred")


class TraceSummary(Model):
    """One trace file: identity, counts, links and (when it has GPU activity) timeline facts."""

    path: str = Field(description="The trace file")
    compressed: bool = Field(description="True for a gzip file")
    global_rank: int = Field(description="Distributed rank (the `rank` column of the tables)")
    global_rank_source: Literal["distributedInfo", "single_trace", "file_order"] = Field(
        description="Where the rank came from: distributedInfo, single_trace or file_order"
    )
    platform: Platform = Field(description="cuda, rocm, mtia or cpu_only")
    format: TraceFormat = Field(
        description="kineto (current category names) or kineto_2021 (Operator, Runtime, Kernel, ...)"
    )
    header: TraceHeader = Field(description="Header facts of the trace")
    origin_ns: int = Field(
        description="First kept event's start in the trace's clock; relative times start here"
    )
    duration_ns: int = Field(description="First complete event start to last complete event end (ns)")
    counts: EventCounts = Field(description="Events by kind")
    threads: int = Field(description="Threads with events")
    links: LinkStats = Field(description="How events were linked (op -> call -> GPU)")
    record_functions: int = Field(description="user_annotation ranges (record_function)")
    profiler_steps: int = Field(description="ProfilerStep#N ranges")
    syncs: SyncTotals = Field(description="cuda_sync events")
    gpu: GpuSummary | None = Field(description="null when the trace has no GPU activity (see gpu_absent)")
    gpu_absent: str | None = Field(description="'not present: ...' when gpu is null")
    unmodeled: list[UnmodeledCount] = Field(description="Content counted but not modeled")


class TorchSummary(Model):
    """``gpuopt torch summary``: one entry per trace file (rank), ordered by rank."""

    traces: list[TraceSummary] = Field(description="One summary per trace file (rank)")
    scope: str | None = Field(
        default=None,
        description="'steps FIRST:LAST' or 'window START:END' (as given) when every fact was restricted"
        " to it; null for the whole trace",
    )


class TraceOverview(Model):
    path: str
    global_rank: int
    platform: Platform
    format: TraceFormat
    gpu_absent: str | None


class TorchTable(Model):
    """A table of ``gpuopt torch ...``, with why it is empty when GPU facts are not present."""

    table: TableData = Field(description="The table (column definitions: gpuopt schema torch.<table name>)")
    not_present: list[str] = Field(
        description="For each trace without GPU activity: 'rank N: not present: ...' (empty otherwise)"
    )
    scope: str | None = Field(
        default=None,
        description="'steps FIRST:LAST' or 'window START:END' (as given) when every fact was restricted"
        " to it; null for the whole trace",
    )
