"""The readiness request (``gpuopt readiness check``: what a Target is made from, or a diagnostic Target),
its result, plan and failure. The Target itself is in :mod:`gpuopt.models.evaluation.target`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import (
    Count,
    Epoch,
    Name,
    NonNegative,
    Positive,
    Record,
    RecordRef,
    Sha256,
    Text,
    VariantKind,
)
from gpuopt.models.evaluation.driver import (
    DriverDeclaration,
)
from gpuopt.models.evaluation.invocation import CorrectnessReceipt, Limits
from gpuopt.models.evaluation.store import ScanLimits
from gpuopt.models.evaluation.target import (
    AccuracyRule,
    AttributionScope,
    ClaimLayer,
    ContaminationRule,
    IdleSettings,
    MetricDeclaration,
    Objective,
    SourceRules,
    StatisticsSettings,
    StorageCheck,
)

# ---- readiness request and result --------------------------------------------------------------------------


class OriginalSpec(Record):
    kind: VariantKind = Field(
        default="source",
        description="source (a tree the driver builds or imports) or artifact (a built product)",
    )
    path: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The original's file or folder, relative to the current directory"
    )


class LineageSpec(Record):
    parent_root: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The parent Target's root (identical blobs are imported from it after verification)"
    )
    parent: RecordRef = Field(description="The parent Target's ref, verified against parent_root")
    reason: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="Why the Target is re-frozen"
    )


class TestSetSpec(Record):
    path: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The test set's file or folder, relative to the current directory"
    )
    case_ids: Annotated[list[Name], Field(min_length=1)] = Field(description="The cases, unique, in order")
    case_weights: dict[Name, Positive] | None = Field(
        default=None, description="Weight per case (> 0, covering every case); null: equal pair weights"
    )


class AccuracySpec(Record):
    reference_path: Annotated[str, Field(min_length=1, max_length=4096)] | None = Field(
        default=None,
        description="The accuracy reference's file or folder, relative to the current directory; null when "
        "none",
    )
    rules: Annotated[list[AccuracyRule], Field(min_length=1)] = Field(
        description="Correctness rules (at least one)"
    )


class ContaminationSpec(Record):
    sampler: Literal["nvml", "nvidia_smi", "disabled"] = Field(description="nvml, nvidia_smi or disabled")
    period_ms: Annotated[int, Field(ge=50, le=2000)] = Field(
        default=250, description="Time between sampler ticks (ms, 50-2000)"
    )
    rules: Literal["default"] | list[ContaminationRule] = Field(
        default="default",
        description="default (frozen expanded: foreign-process, hw-throttle, sw-thermal, xid, clock-drop, "
        "foreign-cpu, sampler-gap) or an explicit list",
    )
    idle: IdleSettings = Field(
        default_factory=IdleSettings, description="The idle check run before the first call"
    )


class SmokeSpec(Record):
    case_id: Name | None = Field(default=None, description="Default: the first test case")
    limits: Limits = Field(default_factory=Limits, description="Timeouts of the smoke call")


class ReadinessRequest(Record):
    """``gpuopt readiness check`` for an optimization Target; relative paths are relative to the cwd."""

    root: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The artifact root to create (must not exist); relative to the current directory"
    )
    mode: Literal["optimization"] = Field(description="Always optimization")
    claim_layer: ClaimLayer = Field(
        description="kernel, workload or serving (diagnostic is claim_layer_invalid here)"
    )
    lineage: LineageSpec | None = Field(
        default=None,
        description="The earlier Target this one re-freezes (its root, ref and the reason); null for a "
        "first Target",
    )
    original: OriginalSpec = Field(
        description="The original's kind and path, frozen as the variant every comparison starts from"
    )
    source_rules: SourceRules = Field(
        default_factory=SourceRules,
        description="Exclusion globs applied to every source freeze of this Target (default .git/** and "
        "**/__pycache__/**)",
    )
    test_set: TestSetSpec = Field(description="The test set's path and cases")
    accuracy: AccuracySpec = Field(description="The accuracy reference and correctness rules")
    metrics: Annotated[dict[Name, MetricDeclaration], Field(min_length=1)] = Field(
        description="Every metric the driver reports (each must be used by the objective)"
    )
    objective: Objective = Field(
        description="Primary metric, minimum effect, constraints, guardrails and secondaries"
    )
    driver: DriverDeclaration = Field(description="How to run the workload driver")
    gpus: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        description="GPU or MIG UUIDs the calls run on; empty for a CPU-only Target"
    )
    required_tools: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        default_factory=list,
        description="Tools whose path, version and hash are frozen (tool_absent when missing)",
    )
    statistics: StatisticsSettings = Field(
        description="Confidence, resamples, minimum pairs, seed, estimator, CI method, effect scale and power"
    )
    contamination: ContaminationSpec | None = Field(
        default=None,
        description="Default: sampler disabled without rules for a CPU-only Target, else nvml + default",
    )
    smoke: SmokeSpec = Field(default_factory=SmokeSpec, description="The smoke call's case and limits")
    scan_limits: ScanLimits = Field(
        default_factory=ScanLimits, description="Limits of each freeze (files, bytes, time)"
    )


class MaterialSpec(Record):
    kind: Literal["report", "artifact"] = Field(
        description="report (a profiler report) or artifact (a built product)"
    )
    path: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The file, relative to the current directory"
    )
    tool: Annotated[str, Field(min_length=1, max_length=128)] = Field(description="The tool that produced it")
    tool_version: Annotated[str, Field(min_length=1, max_length=256)] = Field(
        description="That tool's version"
    )
    format: Annotated[str, Field(min_length=1, max_length=128)] = Field(description="Its file format")


class DiagnosticRequest(Record):
    """``gpuopt readiness check`` for a diagnostic Target (existing reports, no workload)."""

    root: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The artifact root to create (must not exist); relative to the current directory"
    )
    mode: Literal["diagnostic"] = Field(description="Always diagnostic")
    claim_layer: ClaimLayer = Field(description="Must be diagnostic")
    lineage: LineageSpec | None = Field(
        default=None,
        description="The earlier Target this one re-freezes (its root, ref and the reason); null for a "
        "first Target",
    )
    original: OriginalSpec = Field(
        description="The original's kind and path, frozen as the variant every comparison starts from"
    )
    source_rules: SourceRules = Field(
        default_factory=SourceRules,
        description="Exclusion globs applied to every source freeze of this Target (default .git/** and "
        "**/__pycache__/**)",
    )
    materials: Annotated[list[MaterialSpec], Field(min_length=1)] = Field(
        description="The existing reports and artifacts to freeze"
    )
    scan_limits: ScanLimits = Field(
        default_factory=ScanLimits, description="Limits of each freeze (files, bytes, time)"
    )


ReadinessRequests = ReadinessRequest | DiagnosticRequest
"""``gpuopt.request.readiness-check/v1``: an optimization or a diagnostic Target's request (by ``mode``)."""


class SmokeSummary(Record):
    elapsed_s: NonNegative = Field(description="Wall time of the smoke call (s)")
    invocation_id: str = Field(description="The smoke's probe id (probe-<24hex>)")
    correctness: list[CorrectnessReceipt] = Field(description="The smoke's correctness receipts")


class ReadinessResult(Record):
    """What ``gpuopt readiness check`` returns on success."""

    status: Literal["ready"] = Field(description="Always ready")
    root: str = Field(description="The root created (absolute)")
    target: RecordRef = Field(description="The new Target (id and file SHA-256)")
    mode: Literal["optimization", "diagnostic"] = Field(description="optimization or diagnostic")
    claim_layer: ClaimLayer = Field(description="The Target's claim layer")
    attribution_scope: AttributionScope = Field(
        description="identified_runtime (a host, or a container with complete lineage) or "
        "frozen_runtime_only (claims attach only to this exact runtime)"
    )
    identity_notes: list[Text] = Field(
        description="Disagreements found by the identity cross-check, in words (e.g. on containerization)"
    )
    smoke: SmokeSummary | None = Field(
        description="The smoke call's time and correctness; null for a diagnostic Target"
    )
    unavailable: list[str] = Field(
        description="The Target's parts marked unavailable (a diagnostic Target's); empty otherwise"
    )
    objects: dict[str, Sha256] = Field(
        description="Digest of each frozen input: original, test_set, accuracy_reference, material[i]"
    )
    attempt: str = Field(
        description="The readiness work area's name (<root name>-<n> under .gpuopt-readiness, removed on "
        "success)"
    )


class ReadinessPlan(Record):
    """What ``gpuopt readiness check --dry-run`` returns: the request validated, nothing run or written."""

    dry_run: Literal[True] = Field(description="Always true: nothing was run or written")
    root: str = Field(description="The root the Target would be frozen into (absolute)")
    mode: Literal["optimization", "diagnostic"] = Field(description="optimization or diagnostic")
    claim_layer: ClaimLayer = Field(description="The claim layer requested")
    request: dict[str, Any] = Field(description="The validated request as it would be frozen")
    objects: dict[str, Sha256] = Field(description="Digests of the inputs a real check would freeze")
    storage_probe: list[StorageCheck] = Field(
        description="Each storage operation the parent folder's file system was probed for"
    )
    steps: list[Text] = Field(description="What a real check would do, in order")


class ReadinessFailure(Record):
    """``error.json`` of a failed readiness attempt, kept for debugging."""

    format: Literal["gpuopt.readiness-failure/v1"] = Field(
        description="Document format: always gpuopt.readiness-failure/v1"
    )
    code: str = Field(
        description="The error's stable code (smoke_failed, identity_mismatch, storage_unsupported, ...)"
    )
    message: Text = Field(description="What went wrong, in words")
    path: str | None = Field(description="The request field or file the error is about; null when none")
    expected: str | None = Field(description="What was expected; null when not stated")
    observed: str | None = Field(description="What was found; null when not stated")
    stop_reason: str | None = Field(
        description="The smoke call's stop reason when the smoke failed; null otherwise"
    )
    violations: list[dict[str, str | None]] = Field(
        description="The smoke call's gate violations (code, path, expected, observed, message)"
    )
    failed_at_epoch: Epoch = Field(description="When readiness failed (epoch s)")
    files_kept: list[str] = Field(
        description="Files kept in the attempt folder for debugging (request, identity, smoke call), "
        "relative to it"
    )
    call_count: Count = Field(description="Driver calls the attempt ran")
