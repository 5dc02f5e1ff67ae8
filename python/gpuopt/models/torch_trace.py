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

    id: int | None
    name: str | None
    total_memory_bytes: int | None
    compute_capability: str | None = Field(description="computeMajor.computeMinor")
    multiprocessors: int | None = Field(description="numSms")
    warp_size: int | None


class Distributed(Model):
    """The trace's ``distributedInfo`` (absent for single-process traces)."""

    backend: str | None
    global_rank: int | None = Field(description="distributedInfo.rank")
    world_size: int | None
    nccl_version: str | None


class LogLines(Model):
    """Kineto's own log lines saved in the trace (``INFO``/``WARNING``/``ERROR`` keys)."""

    info: int
    warning: int
    error: int
    errors: list[str] = Field(description="The ERROR lines (at most 20)")


class TraceHeader(Model):
    """Identity facts from the trace's top-level keys."""

    schema_version: int
    trace_name: str | None
    trace_id: str | None
    base_time_ns: int | None = Field(description="baseTimeNanoseconds")
    display_time_unit: str | None
    cupti_version: int | None
    cuda_runtime_version: int | None
    cuda_driver_version: int | None
    record_shapes: bool | None
    distributed: Distributed | None = Field(description="null: no distributedInfo (one rank)")
    devices: list[Device]
    log_lines: LogLines


class EventCounts(Model):
    """How many events of each kind the trace held."""

    events: int
    complete: int = Field(description="Complete (`X`) events of any category")
    metadata: int
    flows: int
    instant: int
    cpu_ops: int = Field(description="cpu_op (2021: Operator)")
    annotations: int = Field(description="user_annotation (record_function, ProfilerStep#N)")
    python_functions: int
    runtime_calls: int = Field(description="cuda_runtime (2021: Runtime)")
    driver_calls: int = Field(description="cuda_driver")
    kernels: int
    memcpys: int
    memsets: int
    gpu_annotations: int = Field(description="gpu_user_annotation")
    syncs: int = Field(description="cuda_sync")
    gpu_without_stream: int
    legacy: int = Field(description="Events in the 2021 categories")
    hip_calls: int = Field(description="Runtime calls named hip* (ROCm)")


class LinkStats(Model):
    """How events were linked: CPU op → runtime call (containment, else External id) → GPU activity
    (CUPTI correlation id). Unlinked events are counted, never dropped."""

    gpu_events: int
    gpu_linked_to_runtime: int
    gpu_unlinked: int = Field(
        description="GPU events with no runtime call in the trace (e.g. launched before it)"
    )
    gpu_linked_to_op: int
    runtime_calls: int
    runtime_launching_gpu: int
    runtime_op_by_containment: int
    runtime_op_by_external_id: int
    runtime_without_op: int
    external_id_agree: int = Field(description="Calls whose External id equals their enclosing op's")
    external_id_disagree: int = Field(
        description="Older Kineto writes the correlation id as a call's External id; containment decides"
    )
    duplicate_correlations: int
    flow_points: int = Field(description="ac2g flow end points")
    flow_points_matching: int = Field(
        description="Flow points on a call or GPU event with the same id and ts"
    )
    improper_nesting: int = Field(description="Host ranges partially overlapping an enclosing range")


class Temporal(Model):
    """HTA's temporal breakdown of one device: the four parts sum to ``window_ns`` exactly."""

    window_ns: int = Field(description="First GPU event start to last GPU event end")
    compute_ns: int
    communication_ns: int = Field(description="Communication not overlapping compute")
    memory_ns: int = Field(description="Memcpy/memset not overlapping compute or communication")
    idle_ns: int


class IdleByCause(Model):
    """Idle time split by HTA's causes; the three parts sum to the device's ``temporal.idle_ns``."""

    kernel_wait_threshold_ns: int
    host_wait_ns: int = Field(description="The next event's runtime call began after the gap began")
    kernel_wait_ns: int = Field(description="Not host wait, and the gap is below the threshold")
    other_ns: int


class KernelTypeTime(Model):
    """Time during which exactly the named classes of GPU work ran (sums to ``busy_ns``)."""

    kind: str = Field(description="compute, communication, memory, or a +-joined combination")
    time_ns: int
    busy_pct: float


class DeviceTimeline(Model):
    device: int
    streams: int
    first_start_ns: int
    last_end_ns: int
    busy_ns: int = Field(description="Union of all GPU events on the device")
    temporal: Temporal
    idle_by_cause: IdleByCause
    kernel_types: list[KernelTypeTime]


class Distribution(Model):
    count: int
    min_ns: int
    p50_ns: int = Field(description="Nearest-rank quantile")
    p90_ns: int
    p99_ns: int
    max_ns: int
    mean_ns: float


class GraphLaunch(Model):
    """Launches of whole CUDA graphs (``cudaGraphLaunch``), apart from ordinary launches."""

    executions: int
    kernels: int = Field(description="Kernels of graph executions")
    launch_latency: Distribution = Field(description="Execution start (first GPU event) - call start")
    node_gap: Distribution | None = Field(
        description="Each graph kernel's start - the end of the kernels before it in its execution"
    )


class LaunchLatency(Model):
    """Kernel start minus its runtime call's start / end, over kernels launched one by one."""

    from_call_start: Distribution | None = Field(description="Null when every kernel is a graph's")
    from_call_end: Distribution | None
    graph_kernels: int = Field(description="Kernels of graph executions, left out of the two above")
    graph: GraphLaunch | None


class TransferTotal(Model):
    kind: Literal["memcpy", "memset"]
    name: str
    count: int
    bytes: int | None = Field(description="null when an event does not state its bytes")
    duration_ns: int
    bandwidth_gbps: float | None = Field(description="bytes / duration_ns")


class CollectiveTotals(Model):
    kernels: int
    time_ns: int
    busy_ns: int
    compute_overlap_ns: int = Field(description="Part of busy_ns during which compute ran on the device")


class GpuSummary(Model):
    devices: list[DeviceTimeline]
    kernel_time_ns: int = Field(description="Sum of kernel durations (overlap counted twice)")
    launch_latency: LaunchLatency | None
    transfers: list[TransferTotal]
    collectives: CollectiveTotals | None


class SyncTotals(Model):
    count: int
    duration_ns: int


class UnmodeledCount(Model):
    kind: str
    name: str
    count: int


class TraceSummary(Model):
    """One trace file: identity, counts, links and (when it has GPU activity) timeline facts."""

    path: str
    compressed: bool
    global_rank: int = Field(description="Distributed rank (the `rank` column of the tables)")
    global_rank_source: Literal["distributedInfo", "single_trace", "file_order"]
    platform: Platform
    format: TraceFormat
    header: TraceHeader
    origin_ns: int = Field(
        description="First kept event's start in the trace's clock; relative times start here"
    )
    duration_ns: int
    counts: EventCounts
    threads: int
    links: LinkStats
    record_functions: int
    profiler_steps: int
    syncs: SyncTotals
    gpu: GpuSummary | None = Field(description="null when the trace has no GPU activity (see gpu_absent)")
    gpu_absent: str | None = Field(description="'not present: ...' when gpu is null")
    unmodeled: list[UnmodeledCount]


class TorchSummary(Model):
    """``gpuopt torch summary``: one entry per trace file (rank), ordered by rank."""

    traces: list[TraceSummary]
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

    table: TableData
    not_present: list[str] = Field(
        description="For each trace without GPU activity: 'rank N: not present: ...' (empty otherwise)"
    )
    scope: str | None = Field(
        default=None,
        description="'steps FIRST:LAST' or 'window START:END' (as given) when every fact was restricted"
        " to it; null for the whole trace",
    )
