"""Supervised invocations: limits, frozen request, evidence plan, receipts, events, result and status."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import (
    Count,
    Epoch,
    Finite,
    InvocationId,
    Name,
    NonNegative,
    ObjectDigest,
    Operation,
    Record,
    RecordRef,
    ResultRef,
    Role,
    Sha256,
    Text,
    Violation,
)
from gpuopt.models.evaluation.driver import ReportedRuntime

RESULT_V1 = "gpuopt.invocation-result/v1"
RESULT_V2 = "gpuopt.invocation-result/v2"

Timeout = Annotated[float, Field(gt=0, le=30 * 86_400, allow_inf_nan=False)]


class Limits(Record):
    """Execution limits: in the frozen request but outside its digest."""

    operation_timeout_s: Timeout = 3600.0
    command_timeout_s: Timeout = 600.0
    resource_wait_timeout_s: Timeout = 300.0
    cleanup_timeout_s: Timeout = 30.0
    termination_grace_s: Annotated[float, Field(ge=0, le=3600, allow_inf_nan=False)] = 2.0
    launch_deadline_epoch: Epoch | None = Field(default=None, description="Default: submit + 60 s")
    absolute_deadline_epoch: Epoch | None = None


class ToolIdentity(Record):
    gpuopt_version: str
    native_build_id: str
    evaluation_format: str
    implementation_sha256: Sha256


class Plan(Record):
    case_ids: Annotated[list[Name], Field(min_length=1)]
    pairs: Annotated[int, Field(ge=1)] | None
    calls_per_case: Annotated[int, Field(ge=1)] | None
    samples_per_call: Annotated[int, Field(ge=1)]
    warmup_per_call: Count
    seed: Annotated[int, Field(ge=0, le=2**53 - 1)]
    lifecycle: Literal["isolated", "same_process"]


class EvidenceStep(Record):
    """One planned driver call: which case, which roles in execution order."""

    call_index: Count
    pair_index: Count | None
    case_id: Name
    order: Literal["AB", "BA"] | None
    roles: Annotated[list[Role], Field(min_length=1, max_length=2)]
    lifecycle: Literal["isolated", "same_process"]


class FrozenVariant(Record):
    kind: Literal["source", "artifact"]
    digest: ObjectDigest


class RequestCore(Record):
    """What an operation's builder freezes: the plan, the calls and the variants, plus (in subclasses) the
    operation's own fields. gpuopt adds the rest of :class:`FrozenRequest` when it submits."""

    operation: Operation
    plan: Plan
    evidence_plan: list[EvidenceStep]
    variants: dict[Role, FrozenVariant]


class FrozenRequest(RequestCore):
    """``invocations/<id>/request.json``, built by gpuopt: a :class:`RequestCore` and what gpuopt adds (the
    Target, its tool identity, the host and GPUs, the limits). An operation's frozen request derives from
    this and from its core."""

    format: Literal["gpuopt.invocation-request/v1"]
    target: RecordRef
    tool_identity: ToolIdentity
    host_id: str
    gpus: list[str]
    limits: Limits
    retry_of: InvocationId | None
    keep_workspace: bool
    created_at_epoch: Epoch
    request_digest: Sha256


class StreamReceipt(Record):
    """A capped stdout/stderr log: first and last 256 KiB kept around an omission marker."""

    sha256: Sha256
    total_bytes: Count
    kept_bytes: Count
    truncated: bool


class CleanupReceipt(Record):
    status: Literal["confirmed", "unconfirmed"]
    signals: list[str]
    escaped: Count
    survivors: list[int]
    elapsed_s: NonNegative


class CallWindow(Record):
    start_mono_ns: Count
    end_mono_ns: Count


CallStatus = Literal["completed", "failed", "timed_out", "cancelled"]


class CallReceipt(Record):
    """gpuopt's record of one driver call and its gate outcomes."""

    call_index: Count
    step: EvidenceStep
    status: CallStatus
    stop_reason: str | None
    returncode: int | None
    elapsed_s: NonNegative
    window: CallWindow
    stdout: StreamReceipt
    stderr: StreamReceipt
    bundle: ObjectDigest | None
    leftover_processes: Count
    cleanup: CleanupReceipt
    identity_equal: bool | None
    contamination: list[str]
    violations: list[Violation]


class RuleOutcome(Record):
    metric: Name
    op: Literal["ge", "le", "eq"]
    value: Finite
    observed: Finite | None
    passed: bool


class CorrectnessReceipt(Record):
    """Tool-computed correctness of one subject in one call; the driver's word cannot override a rule."""

    call_index: Count
    role: Role
    digest: Sha256
    case_id: Name
    passed: bool
    driver_status: Literal["passed", "failed"]
    status_consistent: bool
    rules: list[RuleOutcome]
    gates: list[RuleOutcome]
    diagnostics: dict[Name, Finite]


class Calls(Record):
    planned: Count
    completed: Count
    skipped: list[int]


class TableRef(Record):
    path: str
    sha256: Sha256
    rows: Count


class Tables(Record):
    samples: TableRef | None
    resources: TableRef | None


class Warning(Record):
    code: str
    message: Text
    expected: str | None = None
    observed: str | None = None


ExecutionStatus = Literal["succeeded", "failed", "timed_out", "cancelled", "invalid"]
CleanupStatus = Literal[
    "not_required", "confirmed", "unconfirmed", "orphan_running", "resource_cleanup_unknown"
]


class InvocationResult(Record):
    """``result.json``: the single terminal record of an invocation. Operations add fields in subclasses."""

    format: Literal[
        "gpuopt.invocation-result/v1", "gpuopt.invocation-result/v2", "gpuopt.invocation-result/v3"
    ] = Field(
        description="v3: a comparison's metrics embed the engine's Comparison; v2: its constraints and "
        "guardrails embed the engine's results; v1 and v2 are still read"
    )
    invocation_id: InvocationId
    operation: Operation
    target: RecordRef | None = Field(
        description="null only for a readiness probe, which runs before its Target exists"
    )
    request_digest: Sha256
    started_at_epoch: Epoch
    finished_at_epoch: Epoch
    elapsed_s: NonNegative
    gpu_seconds: NonNegative
    gpu_seconds_held: NonNegative
    execution_status: ExecutionStatus
    measurement_validity: Literal["valid", "invalid"]
    verdict: Literal["passed", "failed", "rejected", "not_rejected", "inconclusive", "not_evaluated"]
    stop_reason: str
    cleanup_status: CleanupStatus
    calls: Calls
    call_receipts: list[CallReceipt]
    correctness: list[CorrectnessReceipt]
    reported_runtime: ReportedRuntime | None = Field(
        description="The runtime identity the driver reported on its first call"
    )
    warnings: list[Warning]
    tables: Tables


class SupervisorRecord(Record):
    """``supervisor.json``: who supervises; ``start_token`` defeats pid reuse."""

    pid: Annotated[int, Field(ge=1)]
    start_token: str
    started_at_epoch: Epoch
    lock_dir: str
    mode: Literal["detached", "probe"]


class ActiveChild(Record):
    """``active-child.json``: the live driver call, written before the driver may exec."""

    call_index: Count
    pid: Annotated[int, Field(ge=1)]
    start_token: str
    pgid: Annotated[int, Field(ge=1)]
    cgroup: str | None
    gpus: list[str]
    env_tag: str = Field(
        description="The environment entry every process of the call inherits (GPUOPT_REQUEST=...)"
    )


class ProcessRef(Record):
    pid: Annotated[int, Field(ge=1)]
    start_token: str


class Occupancy(Record):
    """``<lock_dir>/gpu-<32hex>.occupancy.json``: who runs on a GPU, for orphan recovery."""

    invocation_id: str
    supervisor: ProcessRef
    child: ProcessRef
    pgid: Annotated[int, Field(ge=1)]
    env_tag: str
    since_epoch: Epoch


EventName = Literal[
    "supervisor_started",
    "launch_rejected",
    "resource_wait_started",
    "resources_acquired",
    "orphan_recovered",
    "sampler_started",
    "idle_check",
    "call_started",
    "call_finished",
    "termination",
    "cleanup_confirmed",
    "cleanup_unconfirmed",
    "cancel_requested",
    "heartbeat",
    "result_published",
    "supervisor_finished",
]


class Event(Record):
    """One line of ``events.jsonl``."""

    seq: Annotated[int, Field(ge=1)]
    prev_sha256: Sha256 | None = Field(
        default=None, description="SHA-256 of the previous line's bytes (absent on the first line)"
    )
    at_epoch: Epoch
    at_mono_ns: Count
    event: EventName
    call_index: Count | None = None
    pid: int | None = None
    pgid: int | None = None
    status: str | None = None
    returncode: int | None = None
    elapsed_s: NonNegative | None = None
    signal: str | None = None
    phase: Literal["resource_wait", "in_call", "between_calls", "finishing"] | None = None
    sha256: Sha256 | None = None
    detail: Text | None = None
    source: str | None = Field(default=None, description="sampler_started: the sampler's source")
    version: str | None = Field(default=None, description="sampler_started: the source's version")
    period_ms: int | None = Field(default=None, description="sampler_started: the declared period")


InvocationState = Literal["starting", "running", "completed", "lost"]


class StatusCalls(Record):
    planned: Count
    completed: Count
    current: Count | None
    current_elapsed_s: NonNegative | None


class InvocationStatus(Record):
    """``gpuopt status ROOT INVOCATION``: derived from files and OS facts only; never writes."""

    invocation_id: InvocationId
    operation: Operation
    state: InvocationState
    phase: str | None
    heartbeat_age_s: NonNegative | None
    unresponsive: bool
    calls: StatusCalls
    gpu_seconds: NonNegative
    eta_s: NonNegative | None = Field(
        description="While running: the planned calls not yet finished times the mean wall time of the "
        "finished ones, less the current call's elapsed time (an estimate; a stop ends the plan sooner). "
        "0 once completed; null before any call finished or when no supervisor runs"
    )
    cleanup_status: CleanupStatus
    cancel_requested: bool
    result_ref: ResultRef | None
    summary: dict[str, str] | None


class RootStatus(Record):
    """``gpuopt status ROOT``: the Target, the Champion and every non-terminal invocation."""

    root: str
    target: RecordRef
    champion: Literal["original"] | RecordRef
    invocations: list[InvocationStatus]


class SubmitOutcome(Record):
    """What submitting an invocation returned."""

    invocation_id: InvocationId
    request_digest: Sha256
    deduplicated: bool
    already_running: bool
    status: InvocationStatus
