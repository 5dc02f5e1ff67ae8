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
