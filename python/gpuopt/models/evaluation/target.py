"""The Target (``target.json``, create-once, one per artifact root) and the readiness request and result."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from gpuopt.models.doctor import GpuIdentity, HostIdentity, NativeBuild
from gpuopt.models.evaluation.common import (
    Count,
    Epoch,
    Finite,
    Name,
    NonNegative,
    ObjectDigest,
    Positive,
    Record,
    RecordRef,
    Sha256,
    TargetId,
    Text,
    Unavailable,
    Unit,
    VariantKind,
)
from gpuopt.models.evaluation.driver import (
    DriverDeclaration,
    DriverRequest,
    NormalizedDriver,
    ReportedRuntime,
)
from gpuopt.models.evaluation.invocation import CallReceipt, CorrectnessReceipt, Limits
from gpuopt.models.evaluation.store import ScanLimits

ClaimLayer = Literal["kernel", "workload", "serving", "diagnostic"]
DEFAULT_EXCLUDE = [".git/**", "**/__pycache__/**"]


class Variant(Record):
    role: Literal["original", "reference", "candidate"]
    kind: VariantKind
    digest: ObjectDigest


class SourceRules(Record):
    exclude: list[Annotated[str, Field(min_length=1, max_length=1024)]] = Field(
        default_factory=lambda: list(DEFAULT_EXCLUDE)
    )


class Lineage(Record):
    parent: RecordRef | None
    reason: Text | None


class TestSet(Record):
    digest: ObjectDigest
    case_ids: Annotated[list[Name], Field(min_length=1)]
    case_weights: dict[Name, Positive] | None


class AccuracyRule(Record):
    metric: Name
    op: Literal["ge", "le", "eq"]
    value: Finite
    cases: Literal["all"] | list[Name] = "all"


class Accuracy(Record):
    reference: ObjectDigest | None
    rules: Annotated[list[AccuracyRule], Field(min_length=1)]


class MetricDeclaration(Record):
    unit: Unit
    direction: Literal["lower", "higher"]
    kind: Literal["duration", "throughput", "quantile", "other"]
    within_call: Literal["median", "mean", "min", "max", "p90", "p95", "p99"] = "median"
    samples_per_call: Annotated[int, Field(ge=1)] | None = None
    zero_allowed: bool = False


class ConstraintDecl(Record):
    metric: Name
    max_regression_pct: NonNegative


class GuardrailDecl(Record):
    metric: Name
    op: Literal["le", "ge"]
    limit: Finite
    mode: Literal["every_call", "ci"]


class SecondaryDecl(Record):
    metric: Name
    threshold_pct: NonNegative


class Objective(Record):
    primary: Name
    minimum_effect_pct: NonNegative
    constraints: list[ConstraintDecl] = Field(default_factory=list)
    guardrails: list[GuardrailDecl] = Field(default_factory=list)
    secondary: list[SecondaryDecl] = Field(default_factory=list)


class StatisticsSettings(Record):
    confidence: Annotated[float, Field(gt=0.5, lt=1)] = 0.95
    resamples: Annotated[int, Field(ge=1000, le=1_000_000)] = 10_000
    minimum_pairs: Annotated[int, Field(ge=2)] = 10
    seed: Annotated[int, Field(ge=0, le=2**53 - 1)]
    estimator: Literal["median", "mean"] = "median"
    ci_method: Literal["bca", "percentile"] = "bca"
    effect_scale: Literal["log_ratio", "arithmetic_pct"] = "log_ratio"
    power: Annotated[float, Field(gt=0, lt=1)] = 0.8


Signal = Literal[
    "gpu.foreign_processes",
    "gpu.util_pct",
    "gpu.sm_clock_mhz",
    "gpu.sm_clock_drop_pct",
    "gpu.temperature_c",
    "gpu.power_w",
    "gpu.throttle",
    "gpu.xid",
    "gpu.ecc_uncorrected_delta",
    "host.foreign_cpu_pct",
    "host.cpu_pressure_pct",
    "host.mem_available_bytes",
    "sampler.gap",
]


class ContaminationRule(Record):
    id: Name
    signal: Signal
    op: Literal["gt", "lt", "any_of"]
    value: Finite | list[Name]
    min_fraction: Annotated[float, Field(ge=0, le=1)]
    on_missing: Literal["invalidate", "ignore"]


class IdleSettings(Record):
    window_s: Annotated[float, Field(gt=0, le=600)] = 3.0
    max_util_pct: Annotated[float, Field(ge=0, le=100)] = 5.0
    allow_busy: bool = False


class Contamination(Record):
    sampler: Literal["nvml", "nvidia_smi", "disabled"]
    period_ms: Annotated[int, Field(ge=50, le=2000)] = 250
    rules: list[ContaminationRule]
    idle: IdleSettings = Field(default_factory=IdleSettings)


class ObservedHost(HostIdentity):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ObservedGpu(GpuIdentity):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ObservedNative(NativeBuild):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ObservedTool(Record):
    name: str
    path: str
    version: str | None
    sha256: Sha256


class ObservedNvidia(Record):
    source: str
    driver_version: str
    cuda_driver_version: str | None


class ObservedRuntime(Record):
    """What gpuopt itself observed (the doctor identity, restricted to stable facts and the Target's GPUs)."""

    host: ObservedHost
    nvidia: ObservedNvidia | None
    gpus: list[ObservedGpu]
    python_version: str
    python_executable: str
    gpuopt_version: str
    native: ObservedNative
    required_tools: list[ObservedTool]


AttributionScope = Literal["identified_runtime", "frozen_runtime_only"]


class RuntimeIdentity(Record):
    observed: ObservedRuntime
    reported: ReportedRuntime
    attribution_scope: AttributionScope
    notes: list[Text]


class StorageCheck(Record):
    name: str
    ok: bool
    detail: str


class IdleCheck(Record):
    status: Literal["not_required", "idle", "busy", "unknown"]
    detail: Text


class Readiness(Record):
    """Evidence of the readiness check, outside the Target id."""

    checked_at_epoch: Epoch
    storage_probe: list[StorageCheck]
    idle_check: IdleCheck
    smoke_request: DriverRequest
    smoke_receipt: CallReceipt
    bundle_digest: ObjectDigest | None
    correctness: list[CorrectnessReceipt]


class Target(Record):
    """An optimization Target: the frozen definition of what is measured and how it is judged."""

    format: Literal["gpuopt.target/v1", "gpuopt.target/v2"]
    id: TargetId
    mode: Literal["optimization"]
    claim_layer: Literal["kernel", "workload", "serving"]
    lineage: Lineage
    original: Variant
    source_rules: SourceRules
    test_set: TestSet
    accuracy: Accuracy
    metrics: dict[Name, MetricDeclaration]
    objective: Objective
    driver: NormalizedDriver
    gpus: list[str]
    runtime_identity: RuntimeIdentity
    statistics: StatisticsSettings
    contamination: Contamination
    readiness: Readiness


class Material(Record):
    kind: Literal["report", "artifact"]
    tool: Annotated[str, Field(min_length=1, max_length=128)]
    tool_version: Annotated[str, Field(min_length=1, max_length=256)]
    format: Annotated[str, Field(min_length=1, max_length=128)]
    digest: ObjectDigest


class DiagnosticRuntime(Record):
    observed: ObservedRuntime
    reported: Unavailable
    attribution_scope: AttributionScope
    notes: list[Text]


class DiagnosticReadiness(Record):
    checked_at_epoch: Epoch
    storage_probe: list[StorageCheck]
    smoke: Unavailable


class DiagnosticTarget(Record):
    """A diagnostic Target: existing reports only, no workload; unavailable parts say so explicitly."""

    format: Literal["gpuopt.target/v1", "gpuopt.target/v2"]
    id: TargetId
    mode: Literal["diagnostic"]
    claim_layer: Literal["diagnostic"]
    lineage: Lineage
    original: Variant
    source_rules: SourceRules
    materials: Annotated[list[Material], Field(min_length=1)]
    test_set: Unavailable
    accuracy: Unavailable
    metrics: Unavailable
    objective: Unavailable
    driver: Unavailable
    gpus: Unavailable
    runtime_identity: DiagnosticRuntime
    statistics: Unavailable
    contamination: Unavailable
    readiness: DiagnosticReadiness


# ---- readiness request and result --------------------------------------------------------------------------


class OriginalSpec(Record):
    kind: VariantKind = "source"
    path: Annotated[str, Field(min_length=1, max_length=4096)]


class LineageSpec(Record):
    parent_root: Annotated[str, Field(min_length=1, max_length=4096)]
    parent: RecordRef
    reason: Annotated[str, Field(min_length=1, max_length=4096)]


class TestSetSpec(Record):
    path: Annotated[str, Field(min_length=1, max_length=4096)]
    case_ids: Annotated[list[Name], Field(min_length=1)]
    case_weights: dict[Name, Positive] | None = None


class AccuracySpec(Record):
    reference_path: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    rules: Annotated[list[AccuracyRule], Field(min_length=1)]


class ContaminationSpec(Record):
    sampler: Literal["nvml", "nvidia_smi", "disabled"]
    period_ms: Annotated[int, Field(ge=50, le=2000)] = 250
    rules: Literal["default"] | list[ContaminationRule] = "default"
    idle: IdleSettings = Field(default_factory=IdleSettings)


class SmokeSpec(Record):
    case_id: Name | None = Field(default=None, description="Default: the first test case")
    limits: Limits = Field(default_factory=Limits)


class ReadinessRequest(Record):
    """``gpuopt readiness check`` for an optimization Target; relative paths are relative to the cwd."""

    root: Annotated[str, Field(min_length=1, max_length=4096)]
    mode: Literal["optimization"]
    claim_layer: ClaimLayer
    lineage: LineageSpec | None = None
    original: OriginalSpec
    source_rules: SourceRules = Field(default_factory=SourceRules)
    test_set: TestSetSpec
    accuracy: AccuracySpec
    metrics: Annotated[dict[Name, MetricDeclaration], Field(min_length=1)]
    objective: Objective
    driver: DriverDeclaration
    gpus: list[Annotated[str, Field(min_length=1, max_length=128)]]
    required_tools: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(default_factory=list)
    statistics: StatisticsSettings
    contamination: ContaminationSpec | None = Field(
        default=None,
        description="Default: sampler disabled without rules for a CPU-only Target, else nvml + default",
    )
    smoke: SmokeSpec = Field(default_factory=SmokeSpec)
    scan_limits: ScanLimits = Field(default_factory=ScanLimits)


class MaterialSpec(Record):
    kind: Literal["report", "artifact"]
    path: Annotated[str, Field(min_length=1, max_length=4096)]
    tool: Annotated[str, Field(min_length=1, max_length=128)]
    tool_version: Annotated[str, Field(min_length=1, max_length=256)]
    format: Annotated[str, Field(min_length=1, max_length=128)]


class DiagnosticRequest(Record):
    """``gpuopt readiness check`` for a diagnostic Target (existing reports, no workload)."""

    root: Annotated[str, Field(min_length=1, max_length=4096)]
    mode: Literal["diagnostic"]
    claim_layer: ClaimLayer
    lineage: LineageSpec | None = None
    original: OriginalSpec
    source_rules: SourceRules = Field(default_factory=SourceRules)
    materials: Annotated[list[MaterialSpec], Field(min_length=1)]
    scan_limits: ScanLimits = Field(default_factory=ScanLimits)


ReadinessRequests = ReadinessRequest | DiagnosticRequest
"""``gpuopt.request.readiness-check/v1``: an optimization or a diagnostic Target's request (by ``mode``)."""


class SmokeSummary(Record):
    elapsed_s: NonNegative
    invocation_id: str
    correctness: list[CorrectnessReceipt]


class ReadinessResult(Record):
    """What ``gpuopt readiness check`` returns on success."""

    status: Literal["ready"]
    root: str
    target: RecordRef
    mode: Literal["optimization", "diagnostic"]
    claim_layer: ClaimLayer
    attribution_scope: AttributionScope
    identity_notes: list[Text]
    smoke: SmokeSummary | None
    unavailable: list[str]
    objects: dict[str, Sha256]
    attempt: str


class ReadinessPlan(Record):
    """What ``gpuopt readiness check --dry-run`` returns: the request validated, nothing run or written."""

    dry_run: Literal[True]
    root: str = Field(description="The root the Target would be frozen into (absolute)")
    mode: Literal["optimization", "diagnostic"]
    claim_layer: ClaimLayer
    request: dict[str, Any] = Field(description="The validated request as it would be frozen")
    objects: dict[str, Sha256] = Field(description="Digests of the inputs a real check would freeze")
    storage_probe: list[StorageCheck]
    steps: list[Text] = Field(description="What a real check would do, in order")


class ReadinessFailure(Record):
    """``error.json`` of a failed readiness attempt, kept for debugging."""

    format: Literal["gpuopt.readiness-failure/v1"]
    code: str
    message: Text
    path: str | None
    expected: str | None
    observed: str | None
    stop_reason: str | None
    violations: list[dict[str, str | None]]
    failed_at_epoch: Epoch
    files_kept: list[str]
    call_count: Count
