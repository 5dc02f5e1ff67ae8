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

    operation_timeout_s: Timeout = Field(
        default=3600.0,
        description="Longest the whole operation may run, supervisor start to result (s); past it the "
        "result is timed_out/operation_timeout",
    )
    command_timeout_s: Timeout = Field(
        default=600.0,
        description="Longest one driver call may run (s); past it the call is stopped and the result is "
        "timed_out/command_timeout",
    )
    resource_wait_timeout_s: Timeout = Field(
        default=300.0,
        description="Longest the supervisor waits for the GPU locks (s); past it the result is "
        "timed_out/resource_wait_timeout",
    )
    cleanup_timeout_s: Timeout = Field(
        default=30.0,
        description="Longest the termination and verification of one call's processes may take (s); past "
        "it cleanup_status is unconfirmed",
    )
    termination_grace_s: Annotated[float, Field(ge=0, le=3600, allow_inf_nan=False)] = Field(
        default=2.0,
        description="Time between SIGTERM and SIGKILL when a call is stopped (s; at most cleanup_timeout_s)",
    )
    launch_deadline_epoch: Epoch | None = Field(default=None, description="Default: submit + 60 s")
    absolute_deadline_epoch: Epoch | None = Field(
        default=None,
        description="Wall-clock cap on everything (epoch s); past it the result is "
        "timed_out/absolute_deadline; null: none",
    )


class ToolIdentity(Record):
    gpuopt_version: str = Field(description="Version of the gpuopt package that froze the request")
    native_build_id: str = Field(description="First 16 hex digits of the native module's source SHA-256")
    evaluation_format: str = Field(description="Version of the evaluation formats (gpuopt.evaluation/v1)")
    implementation_sha256: Sha256 = Field(
        description="SHA-256 over the installed evaluation modules that affect measurement and statistics "
        "(views excluded); re-checked at supervisor start and before publication "
        "(tool_identity_changed)"
    )


class Plan(Record):
    case_ids: Annotated[list[Name], Field(min_length=1)] = Field(
        description="The cases measured, in plan order (a subset of the Target's cases)"
    )
    pairs: Annotated[int, Field(ge=1)] | None = Field(
        description="Pairs per case of a comparison (noise, screen, target, final audit); null for a "
        "baseline or a smoke"
    )
    calls_per_case: Annotated[int, Field(ge=1)] | None = Field(
        description="Isolated calls per case of a baseline or a smoke; null for a comparison"
    )
    samples_per_call: Annotated[int, Field(ge=1)] = Field(
        description="Samples each call reports per metric (a metric with a fixed samples_per_call keeps "
        "its own count)"
    )
    warmup_per_call: Count = Field(description="Unmeasured runs per subject before the samples of each call")
    seed: Annotated[int, Field(ge=0, le=2**53 - 1)] = Field(
        description="Seed of the AB/BA schedule and of every call's input_seed (gpuopt.rng/v1)"
    )
    lifecycle: Literal["isolated", "same_process"] = Field(
        description="isolated: one subject per call, each a fresh process; same_process: both subjects of "
        "a pair in one call"
    )


class EvidenceStep(Record):
    """One planned driver call: which case, which roles in execution order."""

    call_index: Count = Field(
        description="The call's position in the plan, from 0 (its folder is calls/<NNNN>)"
    )
    pair_index: Count | None = Field(
        description="The pair this call serves; null for a baseline, smoke or restore-check call"
    )
    case_id: Name = Field(description="The case the call measures")
    order: Literal["AB", "BA"] | None = Field(
        description="AB: reference first, BA: candidate first (seeded balanced schedule); null outside a "
        "comparison"
    )
    roles: Annotated[list[Role], Field(min_length=1, max_length=2)] = Field(
        description="The subjects' roles in execution order (one for an isolated call, two for a "
        "same-process call)"
    )
    lifecycle: Literal["isolated", "same_process"] = Field(
        description="isolated (a fresh process per subject) or same_process (both subjects in this call)"
    )


class FrozenVariant(Record):
    kind: Literal["source", "artifact"] = Field(
        description="source: a tree the driver builds or imports; artifact: a built product (.so, wheel, "
        "compiled cache)"
    )
    digest: ObjectDigest = Field(description="The variant's frozen tree in this root's object store")


class RequestCore(Record):
    """What an operation's builder freezes: the plan, the calls and the variants, plus (in subclasses) the
    operation's own fields. gpuopt adds the rest of :class:`FrozenRequest` when it submits."""

    operation: Operation = Field(
        description="The verb this request runs; the supervisor picks its handler by it"
    )
    plan: Plan = Field(
        description="Cases, pairs or calls per case, samples, warmup, seed and lifecycle (the values used, "
        "defaults filled in)"
    )
    evidence_plan: list[EvidenceStep] = Field(
        description="Every call in execution order, frozen before the first one runs (--dry-run shows the "
        "same list)"
    )
    variants: dict[Role, FrozenVariant] = Field(
        description="The subject of each role (original, reference, candidate): its kind and frozen tree"
    )


class FrozenRequest(RequestCore):
    """``invocations/<id>/request.json``, built by gpuopt: a :class:`RequestCore` and what gpuopt adds (the
    Target, its tool identity, the host and GPUs, the limits). An operation's frozen request derives from
    this and from its core."""

    format: Literal["gpuopt.invocation-request/v1"] = Field(
        description="Document format: always gpuopt.invocation-request/v1"
    )
    target: RecordRef = Field(description="The root's Target (id and file SHA-256)")
    tool_identity: ToolIdentity = Field(
        description="gpuopt's identity when the request was frozen; a change before publication is "
        "tool_identity_changed"
    )
    host_id: str = Field(
        description="The host's id as gpuopt doctor observes it (/etc/machine-id, else the hostname)"
    )
    gpus: list[str] = Field(
        description="UUIDs of the Target's GPUs the calls run on, sorted; empty for a CPU-only Target"
    )
    limits: Limits = Field(description="Timeouts and deadlines (outside the request digest)")
    retry_of: InvocationId | None = Field(
        description="The failed attempt this one retries (same digest); null for a first attempt"
    )
    keep_workspace: bool = Field(
        description="True to keep the materialized workspace/ after publication (for debugging); outside "
        "the digest"
    )
    created_at_epoch: Epoch = Field(description="When the request was frozen (epoch s; outside the digest)")
    request_digest: Sha256 = Field(
        description="SHA-256 of the canonical request without limits, retry_of, keep_workspace, "
        "created_at_epoch and itself: what identifies the evaluation (the invocation id is its "
        "first 32 hex)"
    )


class StreamReceipt(Record):
    """A capped stdout/stderr log: first and last 256 KiB kept around an omission marker."""

    sha256: Sha256 = Field(
        description="SHA-256 of the stored log file (the kept head and tail around the omission marker)"
    )
    total_bytes: Count = Field(description="Bytes the driver wrote to the stream (bytes)")
    kept_bytes: Count = Field(description="Bytes kept in the log: at most the first and last 256 KiB (bytes)")
    truncated: bool = Field(description="True when bytes were omitted between head and tail")


class CleanupReceipt(Record):
    status: Literal["confirmed", "unconfirmed"] = Field(
        description="confirmed: the call's group and every escaped descendant are gone; unconfirmed: "
        "something survived cleanup_timeout_s"
    )
    signals: list[str] = Field(
        description="Signals sent, in order (SIGTERM, SIGKILL); empty when the call exited and left nothing"
    )
    escaped: Count = Field(
        description="Processes seen outside the call's process group (escaped with setsid or re-parented "
        "to the supervisor)"
    )
    survivors: list[int] = Field(
        description="PIDs still alive when the cleanup deadline passed; empty when confirmed"
    )
    elapsed_s: NonNegative = Field(
        description="Time the termination and verification took (s; 0 when nothing was left)"
    )


class CallWindow(Record):
    start_mono_ns: Count = Field(description="When the driver was spawned (CLOCK_MONOTONIC, ns)")
    end_mono_ns: Count = Field(description="When it exited, or was stopped (CLOCK_MONOTONIC, ns)")


CallStatus = Literal["completed", "failed", "timed_out", "cancelled"]


class CallReceipt(Record):
    """gpuopt's record of one driver call and its gate outcomes."""

    call_index: Count = Field(description="The call's position in the plan, from 0")
    step: EvidenceStep = Field(description="The planned step this call ran")
    status: CallStatus = Field(
        description="completed (exit 0, cleanup confirmed, nothing left), failed, timed_out or cancelled"
    )
    stop_reason: str | None = Field(
        description="Why the call stopped the plan (command_failed, command_timeout, a gate's code such as "
        "sample_count_mismatch, identity_changed, ...); null when it did not"
    )
    returncode: int | None = Field(
        description="The driver's exit status (negative: killed by that signal); null when it never exited "
        "by itself"
    )
    elapsed_s: NonNegative = Field(description="Spawn to exit of the driver (s, monotonic clock)")
    window: CallWindow = Field(
        description="The call's spawn and exit times on the monotonic clock, against which sampler ticks "
        "are judged"
    )
    stdout: StreamReceipt = Field(description="The driver's captured stdout (calls/<NNNN>/stdout.log)")
    stderr: StreamReceipt = Field(description="The driver's captured stderr (calls/<NNNN>/stderr.log)")
    bundle: ObjectDigest | None = Field(
        description="The frozen output folder (result.json and declared artifacts); null when the call did "
        "not complete or its output could not be frozen"
    )
    leftover_processes: Count = Field(
        description="Processes still running after the driver exited and the settle period, killed by "
        "gpuopt (a completed call has 0)"
    )
    cleanup: CleanupReceipt = Field(description="What terminating and verifying the call's processes did")
    identity_equal: bool | None = Field(
        description="True when the reported runtime identity equals the Target's (canonical JSON); null "
        "when no valid result was read"
    )
    contamination: list[str] = Field(
        description="Ids of the contamination rules that fired in the call's window; empty when none did "
        "or nothing was checked"
    )
    violations: list[Violation] = Field(
        description="Every gate the call failed (contract, bundle, identity), with path, expected and "
        "observed; empty when it passed them all"
    )


class RuleOutcome(Record):
    metric: Name = Field(description="The correctness metric the rule reads")
    op: Literal["ge", "le", "eq"] = Field(
        description="ge: observed >= value; le: observed <= value; eq: exactly equal"
    )
    value: Finite = Field(description="The rule's threshold")
    observed: Finite | None = Field(
        description="The value the driver reported for the metric; null when it did not report it (the "
        "rule then fails)"
    )
    passed: bool = Field(description="True when the rule holds on the observed value")


class CorrectnessReceipt(Record):
    """Tool-computed correctness of one subject in one call; the driver's word cannot override a rule."""

    call_index: Count = Field(description="The call that measured the subject")
    role: Role = Field(description="The subject's role: original, reference or candidate")
    digest: Sha256 = Field(description="The subject's frozen tree")
    case_id: Name = Field(description="The case measured")
    passed: bool = Field(
        description="True when every rule applying to the case (and, for the candidate, every contract "
        "gate) holds and the driver said passed"
    )
    driver_status: Literal["passed", "failed"] = Field(
        description="What the driver reported: passed or failed"
    )
    status_consistent: bool = Field(
        description="False when the driver's status disagrees with gpuopt's rules (e.g. passed while a "
        "rule fails)"
    )
    rules: list[RuleOutcome] = Field(
        description="The Target's accuracy rules applying to the case, each with the observed value"
    )
    gates: list[RuleOutcome] = Field(
        description="The contract's extra rules (candidate only; empty for other roles)"
    )
    diagnostics: dict[Name, Finite] = Field(
        description="The contract's diagnostic correctness metrics as reported (candidate only)"
    )


class Calls(Record):
    planned: Count = Field(description="Calls in the evidence plan")
    completed: Count = Field(description="Calls that ran (a receipt each), whatever their status")
    skipped: list[int] = Field(
        description="Call indices never run because the plan stopped (a failure, timeout or cancel)"
    )


class TableRef(Record):
    path: str = Field(
        description="The table's file, relative to the invocation folder (samples.parquet, resources.jsonl)"
    )
    sha256: Sha256 = Field(description="SHA-256 of the file's bytes")
    rows: Count = Field(description="Rows in it")


class Tables(Record):
    samples: TableRef | None = Field(
        description="Every raw sample (call, pair, case, order, role, digest, metric, index, value, unit); "
        "null when no call reported samples"
    )
    resources: TableRef | None = Field(description="The sampler's ticks; null when no sampler ran")


class Warning(Record):
    code: str = Field(
        description="Stable code of the measured relation (minimum_effect_below_mde, aa_effect_detected, "
        "per_case_effects_differ, ...)"
    )
    message: Text = Field(description="The relation in words, with its numbers")
    expected: str | None = Field(
        default=None, description="The expected side of the relation, when it has one"
    )
    observed: str | None = Field(
        default=None, description="The observed side of the relation, when it has one"
    )


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
    invocation_id: InvocationId = Field(
        description="The invocation: inv-<32hex> (first 32 hex of the request digest), a retry adding "
        "-r<N>; probe-<24hex> for a readiness smoke"
    )
    operation: Operation = Field(
        description="The supervised verb that ran: readiness_smoke, baseline, noise, screen, target, "
        "final_audit, gate or capture"
    )
    target: RecordRef | None = Field(
        description="null only for a readiness probe, which runs before its Target exists"
    )
    request_digest: Sha256 = Field(
        description="SHA-256 identifying the frozen request (see its request_digest)"
    )
    started_at_epoch: Epoch = Field(description="When the supervisor started the operation (epoch s)")
    finished_at_epoch: Epoch = Field(description="When the result was built (epoch s)")
    elapsed_s: NonNegative = Field(description="finished_at_epoch - started_at_epoch (s)")
    gpu_seconds: NonNegative = Field(
        description="Sum over calls of the call's elapsed time times the number of Target GPUs (GPU-s; 0 "
        "for a CPU-only Target)"
    )
    gpu_seconds_held: NonNegative = Field(
        description="Time the GPU locks were held times the number of GPUs (GPU-s): the cost to others "
        "sharing the GPUs"
    )
    execution_status: ExecutionStatus = Field(
        description="Whether the operation ran to its end: succeeded, failed, timed_out, cancelled or "
        "invalid (refused before any call)"
    )
    measurement_validity: Literal["valid", "invalid"] = Field(
        description="valid when every gate passed and the evidence may be interpreted; invalid otherwise "
        "(stop_reason says why)"
    )
    verdict: Literal["passed", "failed", "rejected", "not_rejected", "inconclusive", "not_evaluated"] = Field(
        description="The decision: passed/failed (baseline, noise), rejected/not_rejected (screen), "
        "passed/rejected/inconclusive (target, final audit), not_evaluated when no decision "
        "could be reached"
    )
    stop_reason: str = Field(
        description="Why the operation ended: completed, or the first reason by precedence "
        "(correctness_failed, guardrail_failed, constraint_failed, primary_regressed, "
        "minimum_effect_not_met, contaminated, a timeout, a gate's code, ...)"
    )
    cleanup_status: CleanupStatus = Field(
        description="not_required (no call started), confirmed (every call's processes gone) or unconfirmed"
    )
    calls: Calls = Field(description="Planned, completed and skipped calls")
    call_receipts: list[CallReceipt] = Field(description="gpuopt's receipt of every call that ran, in order")
    correctness: list[CorrectnessReceipt] = Field(
        description="Tool-computed correctness of every subject of every completed call"
    )
    reported_runtime: ReportedRuntime | None = Field(
        description="The runtime identity the driver reported on its first call"
    )
    warnings: list[Warning] = Field(
        description="Measured relations worth knowing, each with its numbers (never advice)"
    )
    tables: Tables = Field(description="The raw samples and sampler ticks written beside the result")


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
