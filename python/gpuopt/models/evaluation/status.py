"""A supervised invocation while and after it runs: its supervisor, children, events, status, the root's
status and what a submission answers (the request, receipts and result are in
:mod:`gpuopt.models.evaluation.invocation`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import (
    Count,
    Epoch,
    InvocationId,
    NonNegative,
    Operation,
    Record,
    RecordRef,
    ResultRef,
    Sha256,
    Text,
)
from gpuopt.models.evaluation.invocation import CleanupStatus


class SupervisorRecord(Record):
    """``supervisor.json``: who supervises; ``start_token`` defeats pid reuse."""

    pid: Annotated[int, Field(ge=1)] = Field(description="The supervisor's process id")
    start_token: str = Field(
        description="Field 22 of /proc/<pid>/stat (start time in clock ticks): with pid, tells a live "
        "supervisor from a reused pid"
    )
    started_at_epoch: Epoch = Field(description="When the supervisor started (epoch s)")
    lock_dir: str = Field(
        description="The folder of the per-GPU lock and occupancy files (GPUOPT_LOCK_DIR, else "
        "~/.local/state/gpuopt/locks)"
    )
    mode: Literal["detached", "probe"] = Field(
        description="detached (a background supervisor of a submitted invocation) or probe (a readiness "
        "smoke's supervisor, tied to its caller by a pipe)"
    )


class ActiveChild(Record):
    """``active-child.json``: the live driver call, written before the driver may exec."""

    call_index: Count = Field(description="The call running")
    pid: Annotated[int, Field(ge=1)] = Field(description="The driver's process id")
    start_token: str = Field(
        description="Field 22 of /proc/<pid>/stat of the driver: tells it from a reused pid"
    )
    pgid: Annotated[int, Field(ge=1)] = Field(
        description="The call's process group (the driver leads its own session)"
    )
    cgroup: str | None = Field(description="The call's cgroup v2 directory when one is used; null otherwise")
    gpus: list[str] = Field(description="UUIDs of the GPUs the call runs on")
    env_tag: str = Field(
        description="The environment entry every process of the call inherits (GPUOPT_REQUEST=...)"
    )


class ProcessRef(Record):
    pid: Annotated[int, Field(ge=1)] = Field(description="The process id")
    start_token: str = Field(
        description="Field 22 of /proc/<pid>/stat: with pid, tells the process from a reused pid"
    )


class Occupancy(Record):
    """``<lock_dir>/gpu-<32hex>.occupancy.json``: who runs on a GPU, for orphan recovery."""

    invocation_id: str = Field(description="The invocation running on the GPU")
    supervisor: ProcessRef = Field(description="Its supervisor process")
    child: ProcessRef = Field(description="The driver process of the current call")
    pgid: Annotated[int, Field(ge=1)] = Field(
        description="The call's process group, terminated by the next lock holder if the supervisor died"
    )
    env_tag: str = Field(
        description="The environment entry every process of the call inherits (GPUOPT_REQUEST=...), which "
        "finds escaped processes"
    )
    since_epoch: Epoch = Field(description="When the call started on the GPU (epoch s)")


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

    seq: Annotated[int, Field(ge=1)] = Field(description="Position in events.jsonl, from 1, without gaps")
    prev_sha256: Sha256 | None = Field(
        default=None, description="SHA-256 of the previous line's bytes (absent on the first line)"
    )
    at_epoch: Epoch = Field(description="When it happened (epoch s)")
    at_mono_ns: Count = Field(description="When it happened on the monotonic clock of the call windows (ns)")
    event: EventName = Field(
        description="What happened (supervisor_started, call_started, call_finished, heartbeat, "
        "result_published, ...)"
    )
    call_index: Count | None = Field(
        default=None,
        description="The call concerned (call_started, call_finished, termination, cleanup_*); null "
        "otherwise",
    )
    pid: int | None = Field(default=None, description="call_started: the driver's process id")
    pgid: int | None = Field(default=None, description="call_started: the call's process group")
    status: str | None = Field(
        default=None, description="call_finished: the call's status (completed, failed, timed_out, cancelled)"
    )
    returncode: int | None = Field(
        default=None,
        description="call_finished: the driver's exit status, null when it did not exit by itself",
    )
    elapsed_s: NonNegative | None = Field(default=None, description="call_finished: spawn to exit (s)")
    signal: str | None = Field(default=None, description="termination: the signal sent (SIGTERM, SIGKILL)")
    phase: Literal["resource_wait", "in_call", "between_calls", "finishing"] | None = Field(
        default=None,
        description="heartbeat: what the supervisor is doing (resource_wait, in_call, between_calls, "
        "finishing)",
    )
    sha256: Sha256 | None = Field(default=None, description="result_published: SHA-256 of result.json")
    detail: Text | None = Field(
        default=None,
        description="Free text about the event (a stop cause, survivors, an orphan recovered); null when "
        "none",
    )
    source: str | None = Field(default=None, description="sampler_started: the sampler's source")
    version: str | None = Field(default=None, description="sampler_started: the source's version")
    period_ms: int | None = Field(default=None, description="sampler_started: the declared period")


InvocationState = Literal["starting", "running", "completed", "lost"]


class StatusCalls(Record):
    planned: Count = Field(description="Calls in the evidence plan")
    completed: Count = Field(description="Calls finished so far (call_finished events)")
    current: Count | None = Field(
        description="The call running now; null when none runs (or the supervisor is gone)"
    )
    current_elapsed_s: NonNegative | None = Field(
        description="How long the current call has run (s); null when none runs"
    )


class InvocationStatus(Record):
    """``gpuopt status ROOT INVOCATION``: derived from files and OS facts only; never writes."""

    invocation_id: InvocationId = Field(
        description="The invocation whose status this is (inv-<32hex>, -r<N> for a retry)"
    )
    operation: Operation = Field(description="The verb it runs")
    state: InvocationState = Field(
        description="starting (no supervisor yet, launch deadline not passed), running (supervisor alive), "
        "completed (result present, supervisor gone) or lost (no result and no supervisor)"
    )
    phase: str | None = Field(
        description="The newest heartbeat's phase while running (resource_wait, in_call, between_calls, "
        "finishing); null otherwise"
    )
    heartbeat_age_s: NonNegative | None = Field(
        description="Time since the newest heartbeat (s); null before the first"
    )
    unresponsive: bool = Field(
        description="True when the supervisor is alive but its newest heartbeat is over 60 s old"
    )
    calls: StatusCalls = Field(description="Planned, completed and current calls")
    gpu_seconds: NonNegative = Field(
        description="GPU-seconds so far: finished calls' elapsed time times the number of GPUs (GPU-s); "
        "the result's once completed"
    )
    eta_s: NonNegative | None = Field(
        description="While running: the planned calls not yet finished times the mean wall time of the "
        "finished ones, less the current call's elapsed time (an estimate; a stop ends the plan sooner). "
        "0 once completed; null before any call finished or when no supervisor runs"
    )
    cleanup_status: CleanupStatus = Field(
        description="not_required, confirmed, unconfirmed, orphan_running (a recorded driver lives while "
        "the supervisor is gone) or resource_cleanup_unknown"
    )
    cancel_requested: bool = Field(description="True once gpuopt cancel has created the cancel flag")
    result_ref: ResultRef | None = Field(
        description="The result (invocation id and result.json SHA-256) once completed; null before"
    )
    summary: dict[str, str] | None = Field(
        description="Once completed: the result's execution_status, measurement_validity, verdict and "
        "stop_reason; null before"
    )


class RootStatus(Record):
    """``gpuopt status ROOT``: the Target, the Champion and every non-terminal invocation."""

    root: str = Field(description="The artifact root")
    target: RecordRef = Field(description="The root's Target")
    champion: Literal["original"] | RecordRef = Field(
        description="original when nothing was selected, else the current selection's ref"
    )
    invocations: list[InvocationStatus] = Field(
        description="Status of every ledgered invocation not completed (starting, running or lost)"
    )


class SubmitOutcome(Record):
    """What submitting an invocation returned."""

    invocation_id: InvocationId = Field(description="The invocation that holds (or will hold) the result")
    request_digest: Sha256 = Field(description="SHA-256 identifying the frozen request")
    deduplicated: bool = Field(
        description="True when an identical request already had a final result, returned instead of "
        "running again"
    )
    already_running: bool = Field(
        description="True when an identical request is starting or running; this is its status"
    )
    status: InvocationStatus = Field(description="The invocation's status right after submission")
