"""The Target (``target.json``, create-once, one per artifact root) and the diagnostic Target; the readiness
request and result that make one are in :mod:`gpuopt.models.evaluation.readiness`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from gpuopt.models.doctor import GpuIdentity, HostIdentity, NativeBuild
from gpuopt.models.evaluation.common import (
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
    DriverRequest,
    NormalizedDriver,
    ReportedRuntime,
)
from gpuopt.models.evaluation.invocation import CallReceipt, CorrectnessReceipt

ClaimLayer = Literal["kernel", "workload", "serving", "diagnostic"]
DEFAULT_EXCLUDE = [".git/**", "**/__pycache__/**"]


class Variant(Record):
    role: Literal["original", "reference", "candidate"] = Field(
        description="original, reference (what a candidate is compared with) or candidate"
    )
    kind: VariantKind = Field(
        description="source (a tree the driver builds or imports) or artifact (a built product: .so, "
        "wheel, compiled cache)"
    )
    digest: ObjectDigest = Field(description="The variant's frozen tree in this root's object store")


class SourceRules(Record):
    exclude: list[Annotated[str, Field(min_length=1, max_length=1024)]] = Field(
        default_factory=lambda: list(DEFAULT_EXCLUDE),
        description="Globs (** allowed) left out of every source freeze, applied alike to the original and "
        "every candidate",
    )


class Lineage(Record):
    parent: RecordRef | None = Field(
        description="The earlier Target this one re-freezes; null for a first Target"
    )
    reason: Text | None = Field(description="Why it was re-frozen (required with parent); null otherwise")


class TestSet(Record):
    digest: ObjectDigest = Field(description="The frozen test set's tree")
    case_ids: Annotated[list[Name], Field(min_length=1)] = Field(description="The cases, unique, in order")
    case_weights: dict[Name, Positive] | None = Field(
        description="Weight per case (> 0, covering every case) in the pooled estimate; null: each pair "
        "weighs the same"
    )


class AccuracyRule(Record):
    metric: Name = Field(description="The correctness metric the driver reports")
    op: Literal["ge", "le", "eq"] = Field(
        description="ge: observed >= value; le: <= value; eq: exactly equal (for counts and 0/1 flags)"
    )
    value: Finite = Field(description="The threshold")
    cases: Literal["all"] | list[Name] = Field(
        default="all", description="The cases the rule applies to: all, or a list of case ids"
    )


class Accuracy(Record):
    reference: ObjectDigest | None = Field(
        description="The frozen accuracy reference (expected outputs) the driver compares with; null when "
        "none"
    )
    rules: Annotated[list[AccuracyRule], Field(min_length=1)] = Field(
        description="Correctness rules; every rule applying to a case must hold for a subject to pass"
    )


class MetricDeclaration(Record):
    unit: Unit = Field(
        description="The unit the driver reports samples in (ms, tokens/s, ...): checked exactly on every "
        "call"
    )
    direction: Literal["lower", "higher"] = Field(description="lower or higher is better")
    kind: Literal["duration", "throughput", "quantile", "other"] = Field(
        description="duration, throughput, quantile (a p90/p95/p99 within-call summary) or other; quantile "
        "and other take no Amdahl ceiling"
    )
    within_call: Literal["median", "mean", "min", "max", "p90", "p95", "p99"] = Field(
        default="median",
        description="How a call's samples become one value per subject: median, mean, min, max, p90, p95 "
        "or p99 (type 7)",
    )
    samples_per_call: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="A fixed sample count that is part of the metric's meaning (p99 over 2000 requests); "
        "null: the plan's count",
    )
    zero_allowed: bool = Field(
        default=False,
        description="True when 0 is a valid value (error counts, rates); such a metric cannot be primary "
        "or a constraint",
    )


class ConstraintDecl(Record):
    metric: Name = Field(description="The constrained metric (not the primary)")
    max_regression_pct: NonNegative = Field(
        description="How much worse the candidate may be (%): non-inferiority bound"
    )


class GuardrailDecl(Record):
    metric: Name = Field(description="The metric limited (any metric, zero_allowed included)")
    op: Literal["le", "ge"] = Field(description="le: the candidate's values must be <= limit; ge: >= limit")
    limit: Finite = Field(description="The limit, in the metric's unit")
    mode: Literal["every_call", "ci"] = Field(
        description="every_call: every sample of every valid pair; ci: the CI of the estimator over the "
        "candidate's per-pair values"
    )


class SecondaryDecl(Record):
    metric: Name = Field(
        description="A metric measured and classified, never deciding a verdict or selection"
    )
    threshold_pct: NonNegative = Field(description="The effect its verdict is judged against (%)")


class Objective(Record):
    primary: Name = Field(description="The metric that decides verdicts (not zero_allowed)")
    minimum_effect_pct: NonNegative = Field(
        description="The minimum effect m (%): a candidate passes only if the primary's CI low clears ln(1 "
        "+ m/100)"
    )
    constraints: list[ConstraintDecl] = Field(
        default_factory=list, description="Relative non-inferiority bounds on other metrics"
    )
    guardrails: list[GuardrailDecl] = Field(
        default_factory=list, description="Absolute limits on the candidate's values"
    )
    secondary: list[SecondaryDecl] = Field(
        default_factory=list, description="Metrics measured and classified, never deciding"
    )


class StatisticsSettings(Record):
    confidence: Annotated[float, Field(gt=0.5, le=1 - 1e-9)] = Field(
        default=0.95,
        description="Confidence level of every CI (at most 1 - 1e-9: nearer 1 its quantile is infinite)",
    )
    resamples: Annotated[int, Field(ge=1000, le=1_000_000)] = Field(
        default=10_000, description="Bootstrap resamples per CI (at least 1000)"
    )
    minimum_pairs: Annotated[int, Field(ge=2)] = Field(
        default=10, description="Valid pairs below which statistics give inconclusive (never rejected)"
    )
    seed: Annotated[int, Field(ge=0, le=2**53 - 1)] = Field(
        description="Seed of the bootstrap streams and, by default, of the plans"
    )
    estimator: Literal["median", "mean"] = Field(
        default="median", description="median or mean of the pair log ratios"
    )
    ci_method: Literal["bca", "percentile"] = Field(default="bca", description="bca or percentile")
    effect_scale: Literal["log_ratio", "arithmetic_pct"] = Field(
        default="log_ratio",
        description="log_ratio, or arithmetic_pct (parity mode: needs median and percentile)",
    )
    power: Annotated[float, Field(gt=0, le=1 - 1e-9)] = Field(
        default=0.8, description="Power the MDE and pairs_for_minimum_effect are computed for"
    )


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
    id: Name = Field(description="The rule's id, named in invalid_reasons and by_rule")
    signal: Signal = Field(
        description="The sampled signal it reads (gpu.foreign_processes, gpu.util_pct, "
        "host.foreign_cpu_pct, sampler.gap, ...)"
    )
    op: Literal["gt", "lt", "any_of"] = Field(
        description="gt or lt a number, or any_of a list of names (throttle reasons)"
    )
    value: Finite | list[Name] = Field(description="The threshold (gt, lt), or the names that match (any_of)")
    min_fraction: Annotated[float, Field(ge=0, le=1)] = Field(
        description="Share of a window's ticks that must match (0-1; at least one tick always) for the "
        "window to be contaminated"
    )
    on_missing: Literal["invalidate", "ignore"] = Field(
        description="What a missing value means: invalidate the window, or ignore the tick"
    )


class IdleSettings(Record):
    window_s: Annotated[float, Field(gt=0, le=600)] = Field(
        default=3.0, description="How long the pre-run idle check watches the GPUs (s)"
    )
    max_util_pct: Annotated[float, Field(ge=0, le=100)] = Field(
        default=5.0, description="Utilization at or below which a tick counts as idle (%)"
    )
    allow_busy: bool = Field(
        default=False, description="True to run even when the idle check says busy (otherwise gpu_busy)"
    )


class Contamination(Record):
    sampler: Literal["nvml", "nvidia_smi", "disabled"] = Field(
        description="nvml, nvidia_smi or disabled (no rules checked: results say contamination.checked false)"
    )
    period_ms: Annotated[int, Field(ge=50, le=2000)] = Field(
        default=250, description="Time between sampler ticks (ms, 50-2000)"
    )
    rules: list[ContaminationRule] = Field(
        description="The rules judged on every call window (the default set written out)"
    )
    idle: IdleSettings = Field(
        default_factory=IdleSettings, description="The idle check run before the first call"
    )


class ObservedHost(HostIdentity):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ObservedGpu(GpuIdentity):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ObservedNative(NativeBuild):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class ObservedTool(Record):
    name: str = Field(description="The required tool's name")
    path: str = Field(description="Resolved path of its executable")
    version: str | None = Field(description="Its version as it reports it; null when it did not say")
    sha256: Sha256 = Field(description="SHA-256 of the executable: a change is identity_changed")


class ObservedNvidia(Record):
    source: str = Field(description="Where the facts were read: nvml or nvidia-smi")
    driver_version: str = Field(description="NVIDIA driver version")
    cuda_driver_version: str | None = Field(
        description="Highest CUDA version the driver supports; null when not stated"
    )


class ObservedRuntime(Record):
    """What gpuopt itself observed (the doctor identity, restricted to stable facts and the Target's GPUs)."""

    host: ObservedHost = Field(
        description="The host's stable identity (names, OS, kernel, CPU, container hints)"
    )
    nvidia: ObservedNvidia | None = Field(
        description="The NVIDIA driver; null when no driver was readable (CPU-only)"
    )
    gpus: list[ObservedGpu] = Field(
        description="Identity of each Target GPU (UUID, name, PCI bus, memory, modes, power limit, clocks)"
    )
    python_version: str = Field(description="Python version that froze the Target")
    python_executable: str = Field(description="Path of that Python interpreter")
    gpuopt_version: str = Field(description="gpuopt version that froze the Target")
    native: ObservedNative = Field(description="The native module's build")
    required_tools: list[ObservedTool] = Field(
        description="Each required tool with its path, version and hash"
    )


AttributionScope = Literal["identified_runtime", "frozen_runtime_only"]


class RuntimeIdentity(Record):
    observed: ObservedRuntime = Field(
        description="What gpuopt observed at readiness (stable facts only; volatile ones belong to the "
        "sampler)"
    )
    reported: ReportedRuntime = Field(
        description="The runtime identity the driver reported on the smoke call: every later call must "
        "report the same"
    )
    attribution_scope: AttributionScope = Field(
        description="identified_runtime (a host, or a container with complete lineage) or "
        "frozen_runtime_only (claims attach only to this exact runtime)"
    )
    notes: list[Text] = Field(
        description="Disagreements found by the identity cross-check, in words (e.g. on containerization)"
    )


class StorageCheck(Record):
    name: str = Field(
        description="The storage operation probed: create_exclusive, noreplace_rename, atomic_replace, "
        "ordered_append, nonblocking_flock or directory_fsync"
    )
    ok: bool = Field(description="True when it worked on this file system")
    detail: str = Field(description="What was seen, in words")


class IdleCheck(Record):
    status: Literal["not_required", "idle", "busy", "unknown"] = Field(
        description="idle, busy, unknown, or not_required (CPU-only Target)"
    )
    detail: Text = Field(description="Per GPU, why, in words")


class Readiness(Record):
    """Evidence of the readiness check, outside the Target id."""

    checked_at_epoch: Epoch = Field(description="When readiness ran (epoch s)")
    storage_probe: list[StorageCheck] = Field(
        description="Each storage operation the root's file system was probed for"
    )
    idle_check: IdleCheck = Field(description="The idle check before the smoke")
    smoke_request: DriverRequest = Field(description="The driver request of the smoke call")
    smoke_receipt: CallReceipt = Field(description="The smoke call's receipt")
    bundle_digest: ObjectDigest | None = Field(
        description="The smoke call's frozen output; null when none was frozen"
    )
    correctness: list[CorrectnessReceipt] = Field(description="The smoke's correctness receipts")


class Target(Record):
    """An optimization Target: the frozen definition of what is measured and how it is judged."""

    format: Literal["gpuopt.target/v1", "gpuopt.target/v2"] = Field(
        description="Document format: gpuopt.target/v2 (v1, with unsalted inherited-variable hashes, is "
        "still read)"
    )
    id: TargetId = Field(description="tgt- and the SHA-256 of the canonical Target without id and readiness")
    mode: Literal["optimization"] = Field(description="Always optimization")
    claim_layer: Literal["kernel", "workload", "serving"] = Field(
        description="What a result is evidence about: kernel (an isolated operator), workload (the user's "
        "real job) or serving (a serving system under a frozen load)"
    )
    lineage: Lineage = Field(description="The earlier Target this one re-freezes, if any")
    original: Variant = Field(
        description="The original variant (role original): the Champion until a selection"
    )
    source_rules: SourceRules = Field(description="Exclusion globs applied to every source freeze")
    test_set: TestSet = Field(description="The frozen test set and its cases")
    accuracy: Accuracy = Field(description="The accuracy reference and correctness rules")
    metrics: dict[Name, MetricDeclaration] = Field(
        description="Every metric the driver reports, each used by the objective"
    )
    objective: Objective = Field(
        description="Primary metric, minimum effect, constraints, guardrails and secondaries"
    )
    driver: NormalizedDriver = Field(description="The normalized driver declaration with its identity")
    gpus: list[str] = Field(
        description="Sorted GPU or MIG UUIDs the calls run on; empty for a CPU-only Target"
    )
    runtime_identity: RuntimeIdentity = Field(
        description="What gpuopt observed and what the driver reported, and the attribution scope"
    )
    statistics: StatisticsSettings = Field(
        description="Confidence, resamples, minimum pairs, seed, estimator, CI method, effect scale and power"
    )
    contamination: Contamination = Field(description="The resource sampler and the contamination rules")
    readiness: Readiness = Field(description="Evidence of the readiness check (outside the id)")


class Material(Record):
    kind: Literal["report", "artifact"] = Field(
        description="report (a profiler report) or artifact (a built product)"
    )
    tool: Annotated[str, Field(min_length=1, max_length=128)] = Field(
        description="The tool that produced it (nsys, ncu, ...)"
    )
    tool_version: Annotated[str, Field(min_length=1, max_length=256)] = Field(
        description="That tool's version"
    )
    format: Annotated[str, Field(min_length=1, max_length=128)] = Field(
        description="Its file format (nsys-rep, sqlite, ncu-rep, ...)"
    )
    digest: ObjectDigest = Field(description="The frozen file's tree")


class DiagnosticRuntime(Record):
    observed: ObservedRuntime = Field(description="What gpuopt observed at readiness")
    reported: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no reported '
        "runtime (no driver runs)"
    )
    attribution_scope: AttributionScope = Field(
        description="identified_runtime (a host, or a container with complete lineage) or "
        "frozen_runtime_only (claims attach only to this exact runtime)"
    )
    notes: list[Text] = Field(
        description="Disagreements found by the identity cross-check, in words (e.g. on containerization)"
    )


class DiagnosticReadiness(Record):
    checked_at_epoch: Epoch = Field(description="When readiness ran (epoch s)")
    storage_probe: list[StorageCheck] = Field(
        description="Each storage operation the root's file system was probed for"
    )
    smoke: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no smoke call'
    )


class DiagnosticTarget(Record):
    """A diagnostic Target: existing reports only, no workload; unavailable parts say so explicitly."""

    format: Literal["gpuopt.target/v1", "gpuopt.target/v2"] = Field(
        description="Document format: gpuopt.target/v2 (v1, with unsalted inherited-variable hashes, is "
        "still read)"
    )
    id: TargetId = Field(description="tgt- and the SHA-256 of the canonical Target without id and readiness")
    mode: Literal["diagnostic"] = Field(description="Always diagnostic")
    claim_layer: Literal["diagnostic"] = Field(
        description="Always diagnostic: facts read from existing reports, no workload run"
    )
    lineage: Lineage = Field(description="The earlier Target this one re-freezes, if any")
    original: Variant = Field(description="The original variant")
    source_rules: SourceRules = Field(description="Exclusion globs applied to every source freeze")
    materials: Annotated[list[Material], Field(min_length=1)] = Field(
        description="The existing reports and artifacts, frozen"
    )
    test_set: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no test set'
    )
    accuracy: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no accuracy rules'
    )
    metrics: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no metrics'
    )
    objective: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no objective'
    )
    driver: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no driver'
    )
    gpus: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no GPU set'
    )
    runtime_identity: DiagnosticRuntime = Field(
        description="What gpuopt observed; the reported part is unavailable"
    )
    statistics: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no statistics '
        "settings"
    )
    contamination: Unavailable = Field(
        description='Always {"unavailable": "diagnostic_target"}: a diagnostic Target has no contamination '
        "settings"
    )
    readiness: DiagnosticReadiness = Field(description="Evidence of the readiness check (no smoke)")
