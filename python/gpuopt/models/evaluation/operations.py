"""Evaluations (spec §3.3, §3.5): the requests of ``baseline``, ``noise``, ``screen``, ``target`` and
``final-audit``, their results, and the dry-run plan (their frozen invocation requests are in
:mod:`gpuopt.models.evaluation.frozen`).

The statistics of the comparison results are in :mod:`gpuopt.models.evaluation.statistics`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from gpuopt.models.evaluation.common import (
    Count,
    Finite,
    InvocationId,
    Name,
    NonNegative,
    Record,
    RecordRef,
    ResultRef,
    Sha256,
)
from gpuopt.models.evaluation.experiment import Contract, Lifecycle
from gpuopt.models.evaluation.invocation import (
    InvocationResult,
    Limits,
)
from gpuopt.models.evaluation.statistics import (
    AnyStatistics,
    MetricVerdict,
    check_statistics_format,
)

Seed = Annotated[int, Field(ge=0, le=2**53 - 1)]
PathText = Annotated[str, Field(min_length=1, max_length=4096)]

# ---- requests ----------------------------------------------------------------------------------------------


class BaselinePlanSpec(Record):
    case_ids: list[Name] | None = Field(default=None, description="Default: every Target case, in order")
    calls_per_case: Annotated[int, Field(ge=1, le=100_000)] = Field(
        default=1, description="Isolated calls of the original per case"
    )
    samples_per_call: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        default=10,
        description="Samples each call reports per metric (a metric declaring its own samples_per_call "
        "keeps it)",
    )
    warmup_per_call: Annotated[int, Field(ge=0, le=1_000_000)] = Field(
        default=1, description="Unmeasured runs before the samples of each call"
    )
    seed: Seed | None = Field(default=None, description="Default: the Target's statistics seed")


class PairPlanSpec(Record):
    case_ids: list[Name] | None = Field(default=None, description="Default: every Target case, in order")
    pairs: Annotated[int, Field(ge=1, le=100_000)] = Field(description="Pairs per case")
    samples_per_call: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        default=10,
        description="Samples each call reports per metric and subject (a metric declaring its own "
        "samples_per_call keeps it); a p90/p95/p99 summary needs 100/200/1000",
    )
    warmup_per_call: Annotated[int, Field(ge=0, le=1_000_000)] = Field(
        default=1, description="Unmeasured runs per subject before its samples in each call"
    )
    seed: Seed | None = Field(default=None, description="Default: the Target's statistics seed")


class NoisePlanSpec(PairPlanSpec):
    lifecycle: Lifecycle = Field(
        default="isolated",
        description="isolated: each copy of the original in its own process; same_process: both copies in "
        "one call (needs the driver's same_process capability)",
    )


class Acquisition(Record):
    shared_state: list[Name] = Field(
        default_factory=list,
        description="State the driver creates once per same-process call and both copies share (declared, "
        "not verified), e.g. cuda_context",
    )
    rebuilt_state: list[Name] = Field(
        default_factory=list,
        description="State the driver rebuilds for each copy within a call, e.g. kernels",
    )


class EvaluationRequestBase(Record):
    root: PathText = Field(description="The artifact root (path relative to the current directory)")
    target: RecordRef | None = Field(default=None, description="If given, must be the root's Target")
    limits: Limits = Field(
        default_factory=Limits,
        description="Timeouts and deadlines of the invocation (defaults filled in; outside the request "
        "digest)",
    )
    retry_of: InvocationId | None = Field(
        default=None,
        description="The latest failed attempt of the same request, to run it again (required once an "
        "attempt failed, timed out, was cancelled or lost); null for a first attempt",
    )
    keep_workspace: bool = Field(
        default=False,
        description="True to keep the invocation's materialized workspace/ after publication (for debugging)",
    )


class BaselineRequest(EvaluationRequestBase):
    """``gpuopt baseline`` (``gpuopt.request.baseline/v1``): the original on every case, isolated."""

    plan: BaselinePlanSpec = Field(
        default_factory=BaselinePlanSpec,
        description="Cases, calls per case, samples, warmup and seed (defaults: every case, 1 call, 10 "
        "samples, 1 warmup, the Target's seed)",
    )


class NoiseRequest(EvaluationRequestBase):
    """``gpuopt noise`` (``gpuopt.request.noise/v1``): A/A pairs of the original against itself."""

    plan: NoisePlanSpec = Field(description="Cases, A/A pairs per case, samples, warmup, seed and lifecycle")
    acquisition: Acquisition = Field(
        default_factory=Acquisition, description="Same-process state declarations (same_process only)"
    )


class ScreenRequest(EvaluationRequestBase):
    """``gpuopt screen`` (``gpuopt.request.screen/v1``): the Experiment's short comparison."""

    experiment: RecordRef = Field(
        description="The Experiment whose candidate is compared (id and file SHA-256, from gpuopt "
        "experiment's output)"
    )
    plan: PairPlanSpec = Field(description="Cases, pairs per case, samples, warmup and seed")
    noise: ResultRef | None = Field(
        default=None, description="The noise result for the resolution (default: newest matching)"
    )


class TargetRequest(ScreenRequest):
    """``gpuopt target`` (``gpuopt.request.target/v1``): the formal comparison."""


class FinalAuditRequest(EvaluationRequestBase):
    """``gpuopt final-audit`` (``gpuopt.request.final-audit/v1``): original vs the current Champion."""

    plan: PairPlanSpec = Field(description="Cases, pairs per case, samples, warmup and seed")
    noise: ResultRef | None = Field(
        default=None,
        description="The noise result for the resolution; null: the newest passed one of this Target with "
        "the same lifecycle and samples per call",
    )
    contract: Contract | None = Field(
        default=None, description="Default: the contract of the Champion's Experiment"
    )


# ---- frozen requests ---------------------------------------------------------------------------------------


class Binding(Record):
    """The Champion an evaluation is bound to: its selection (null = original) and the pointer file hash."""

    selection: RecordRef | None = Field(
        description="The Champion's selection when the request was frozen; null when the Champion is the "
        "original"
    )
    pointer_sha256: Sha256 | None = Field(
        description="SHA-256 of champion/current.json when the request was frozen; null when absent (the "
        "original): a result is stale if it moved"
    )


class ChampionFacts(Record):
    selection: RecordRef = Field(description="The selection that made the audited Champion")
    experiment: RecordRef | None = Field(
        description="The Experiment that produced the Champion; null when the selection names none"
    )
    contract_source: Literal["experiment", "request"] = Field(
        description="experiment: the contract is the Champion's Experiment's; request: the final-audit "
        "request gave one"
    )


class PairValue(Record):
    reference: float = Field(
        description="The reference's within-call summary of its samples (the metric's within_call: median, "
        "mean, p99, ...), in the metric's unit"
    )
    candidate: float = Field(description="The candidate's within-call summary, in the metric's unit")


class Pair(Record):
    """(pair_index, case): the within-call summary of each subject per metric; invalid pairs are kept."""

    pair_index: Count = Field(description="The pair's index in the schedule, from 0")
    case_id: Name = Field(description="The case measured")
    order: Literal["AB", "BA"] = Field(description="AB: reference ran first; BA: candidate first")
    calls: list[int] = Field(
        description="Call indices that measured the pair (one same-process call, or two isolated calls)"
    )
    values: dict[Name, PairValue] = Field(
        description="Per metric: each subject's within-call summary (empty when a side is missing)"
    )
    effects_log: dict[Name, float] = Field(
        description="Per metric: the pair's log effect l = ln(ref/cand) for lower-is-better (ln(cand/ref) "
        "for higher); > 0 means the candidate is better"
    )
    valid: bool = Field(
        description="True when both subjects passed correctness, the calls passed the contract and "
        "identity gates and no contamination rule fired; only valid pairs enter the statistics"
    )
    invalid_reasons: list[str] = Field(
        description="Why the pair is invalid: a failed call's reason, <role>_correctness_failed, "
        "<role>_identity_changed, <role>_missing, or contamination rule ids; empty when valid"
    )


class ContaminationFacts(Record):
    """What the resource sampler and the Target's contamination rules made of the call windows (spec §7).

    ``checked`` is true only when the declared sampler ran from before the first call to after the last;
    ``sampler: disabled`` leaves it false and invalidates nothing."""

    checked: bool = Field(
        description="True only when the declared sampler ran from before the first call to after the last "
        "(sampler disabled: false, nothing invalidated)"
    )
    sampler: str = Field(description="The sampler declared by the Target: nvml, nvidia_smi or disabled")
    pre_idle: Literal["not_required", "idle", "busy", "unknown", "not_checked"] = Field(
        description="The idle check before the first call: idle, busy, unknown, not_checked, or "
        "not_required (CPU-only Target)"
    )
    pairs_invalid: Count = Field(description="Pairs invalidated by a contamination rule")
    by_rule: dict[str, int] = Field(
        description="Invalidated pairs (baseline: contaminated calls) per rule id"
    )
    by_position: dict[str, int] = Field(
        description="Invalidated pairs by the role whose call window was contaminated: reference, "
        "candidate, or both (both roles' windows, or one same-process call)"
    )
    calls_contaminated: Count = Field(default=0, description="Call windows where any rule fired")
    process_visibility: Literal["full", "partial", "none", "not_applicable"] = Field(
        default="not_applicable",
        description="Whether compute processes on the GPUs could be attributed (containers often hide "
        "them: none)",
    )
    ticks: Count = Field(default=0, description="Sampler ticks in resources.jsonl")


class Resolution(Record):
    """Whether the Target's minimum effect is above the MDE the noise record predicts at the planned n."""

    noise_ref: ResultRef | None = Field(
        description="The noise result the MDE comes from; null when none was found"
    )
    planned_pairs: Count = Field(description="Valid pairs the plan would give: pairs times cases")
    mde_pct: float | None = Field(
        description="Minimum detectable effect of the primary at planned_pairs from the noise record's SD "
        "(%, normal approximation); null without a noise record for the primary"
    )
    minimum_effect_pct: NonNegative = Field(description="The Target's minimum effect m (%)")
    status: Literal["resolvable", "below_mde", "no_noise_record"] = Field(
        description="resolvable (m >= MDE), below_mde (the plan cannot resolve m: warning "
        "minimum_effect_below_mde) or no_noise_record"
    )
    method: Literal["normal_approx"] = Field(description="How the MDE was computed: always normal_approx")


class BindingStatus(Record):
    selection: RecordRef | None = Field(
        description="The Champion's selection the evaluation was bound to; null for the original"
    )
    pointer_sha256: Sha256 | None = Field(
        description="SHA-256 of champion/current.json the evaluation was bound to; null when absent (the "
        "original)"
    )
    status: Literal["current", "stale"] = Field(
        description="current, or stale when the Champion pointer moved before publication (the result is "
        "then not_evaluated/stale_reference)"
    )


# ---- results -----------------------------------------------------------------------------------------------


class ElapsedFacts(Record):
    median: NonNegative = Field(description="Median wall time of the case's completed calls (s)")
    p90: NonNegative = Field(description="90th percentile (type 7) of those wall times (s)")


class BaselineMetric(Record):
    unit: str = Field(description="The metric's unit as the Target declares it")
    median: float = Field(
        description="Median over the case's calls of each call's within-call summary (metric unit)"
    )
    min: float = Field(description="Smallest sample over the case's calls (metric unit)")
    max: float = Field(description="Largest sample over the case's calls (metric unit)")
    within_call_cv_median: float | None = Field(
        description="Median over calls of each call's coefficient of variation (sample SD / mean; a "
        "ratio); null with fewer than 2 samples per call"
    )


class BaselineCase(Record):
    case_id: Name = Field(description="The test case these facts are about")
    calls: Count = Field(description="Calls of the case that returned a valid result")
    elapsed_s: ElapsedFacts | None = Field(
        description="Wall time of the case's completed calls; null when none completed"
    )
    metrics: dict[Name, BaselineMetric] = Field(
        description="Per metric: the original's level and spread on this case"
    )


class OriginalGuardrail(Record):
    metric: Name = Field(description="The guardrail's metric")
    op: Literal["le", "ge"] = Field(description="le: every sample must be <= limit; ge: >= limit")
    limit: Finite = Field(description="The guardrail's limit (metric unit)")
    calls_checked: Count = Field(description="Calls that reported the metric")
    calls_violating: list[int] = Field(
        description="Call indices with at least one sample beyond the limit (warning "
        "original_violates_guardrail)"
    )


class BaselineResult(InvocationResult):
    operation: Literal["baseline"] = Field(description="The operation: always baseline")
    cases: list[BaselineCase] = Field(
        description="Per case, in plan order: calls, wall time and each metric's level and spread"
    )
    original_guardrails: list[OriginalGuardrail] = Field(
        description="Each absolute guardrail of the Target checked on the original's samples"
    )
    contamination: ContaminationFacts = Field(
        description="What the sampler and the contamination rules found in the call windows"
    )


class PairedResult(InvocationResult):
    pairs: list[Pair] = Field(
        description="Every pair of the plan that ran, valid or not (invalid pairs are kept with their "
        "reasons)"
    )
    performance_interpreted: bool = Field(
        description="False when a correctness or contract failure (or any invalid measurement) stopped it"
    )
    contamination: ContaminationFacts = Field(
        description="What the sampler and the contamination rules found in the call windows"
    )


class NoiseAt(Record):
    n_pairs: Count = Field(description="The pair count this row projects to (n, minimum_pairs and 2n)")
    half_width_pct: float = Field(description="CI half-width the A/A SD predicts at n_pairs (%)")
    mde_pct: float = Field(
        description="Minimum detectable effect at n_pairs for the Target's confidence and power (%)"
    )
    robust_half_width_pct: float = Field(description="The half-width from the robust SD, 1.4826 x MAD (%)")
    robust_mde_pct: float = Field(
        description="The MDE from the robust SD (%): the better basis for a median estimator"
    )


class NoiseMetric(Record):
    metric: Name = Field(description="The Target metric these A/A facts are about")
    n_pairs: Count = Field(description="Valid A/A pairs used")
    sd_log: float = Field(description="Sample SD of the pairs' log ratios")
    robust_sd_log: float = Field(description="Robust SD of the log ratios: 1.4826 x MAD")
    aa_estimate_pct: float | None = Field(
        description="The A/A effect estimate (%; ideally near 0); null when not computed"
    )
    aa_ci_low_pct: float | None = Field(
        description="Low end of its confidence interval (%); null when not computed"
    )
    aa_ci_high_pct: float | None = Field(
        description="High end of its confidence interval (%); a CI excluding 0 warns aa_effect_detected"
    )
    aa_verdict: MetricVerdict = Field(
        description="The A/A comparison's verdict at m = 0: improved or regressed means the setup itself "
        "shows an effect; inconclusive otherwise"
    )
    at: list[NoiseAt] = Field(description="Half-width and MDE at n, minimum_pairs and 2n")
    pairs_for_minimum_effect: int | None = Field(
        description="Pairs needed for the MDE to reach the Target's minimum effect (normal approximation); "
        "null when m is 0"
    )
    robust_pairs_for_minimum_effect: int | None = Field(
        description="The same from the robust SD; null when m is 0"
    )
    order_effect_pct: float | None = Field(
        description="(mean l over AB pairs - mean l over BA pairs) / 2, as % : how much running first or "
        "second matters; null without both orders"
    )
    within_call_cv_median: float | None = Field(
        description="Median over calls of each call's coefficient of variation (sample SD / mean; a "
        "ratio); null with fewer than 2 samples per call"
    )
    method: Literal["normal_approx"] = Field(
        description="How half-widths and MDEs were computed: always normal_approx"
    )


class NoiseFacts(Record):
    lifecycle: Lifecycle = Field(
        description="The plan's lifecycle (isolated or same_process): a comparison uses this record only "
        "with the same one"
    )
    samples_per_call: int = Field(
        description="The plan's samples per call: a comparison uses this record only with the same count"
    )
    metrics: dict[Name, NoiseMetric] = Field(
        description="Per metric (zero_allowed metrics excluded): spread, A/A effect and MDE"
    )


class NoiseResult(PairedResult):
    operation: Literal["noise"] = Field(description="The operation: always noise")
    noise: NoiseFacts | None = Field(
        description="The A/A noise facts; null when the measurement was not valid"
    )


class ScreenResult(PairedResult):
    operation: Literal["screen"] = Field(description="The operation: always screen")
    experiment: RecordRef = Field(description="The Experiment screened")
    mechanism: str = Field(description="The Experiment's mechanism slug")
    reference_binding: BindingStatus = Field(
        description="The Champion the comparison was bound to, and whether it was still current at "
        "publication"
    )
    statistics: AnyStatistics | None = Field(
        description="Primary, constraint, guardrail and secondary statistics; null when the measurement "
        "was invalid"
    )
    resolution: Resolution = Field(
        description="Whether the plan's pairs can resolve the Target's minimum effect, per the noise record"
    )
    screen_claim: Literal["supported", "contradicted", "undecided"] = Field(
        description="supported (primary improved), contradicted (the screen rejected) or undecided"
    )

    @model_validator(mode="after")
    def _statistics_format(self) -> ScreenResult:
        check_statistics_format(self, self.statistics)
        return self


class PredictionCheck(Record):
    status: Literal["consistent", "observed_below", "observed_above", "not_declared", "not_evaluated"] = (
        Field(
            description="consistent (the expected range overlaps the primary's CI), observed_below, "
            "observed_above, not_declared (no expected_effect_pct) or not_evaluated (no CI)"
        )
    )
    expected_low_pct: float | None = Field(
        description="Low end of the Experiment's expected effect (%); null when not declared"
    )
    expected_high_pct: float | None = Field(
        description="High end of the Experiment's expected effect (%); null when not declared"
    )


class TargetResult(PairedResult):
    operation: Literal["target"] = Field(description="The operation: always target")
    experiment: RecordRef = Field(description="The Experiment evaluated")
    mechanism: str = Field(description="The Experiment's mechanism slug")
    reference_binding: BindingStatus = Field(
        description="The Champion the comparison was bound to, and whether it was still current at "
        "publication"
    )
    statistics: AnyStatistics | None = Field(
        description="Primary, constraint, guardrail and secondary statistics; null when the measurement "
        "was invalid"
    )
    resolution: Resolution = Field(
        description="Whether the plan's pairs can resolve the Target's minimum effect, per the noise record"
    )
    screen_gate: list[ResultRef] = Field(
        description="The screen results the screen gate accepted (one retry chain ending not_rejected)"
    )
    prediction_check: PredictionCheck = Field(
        description="The primary's CI against the Experiment's expected effect"
    )
    formal_attempts: Count = Field(description="Target results for this candidate digest across Experiments")
    inconclusive_because: list[Literal["primary", "constraint", "guardrail"]] = Field(
        description="With verdict inconclusive: which kinds of statistic left it undecided (primary, "
        "constraint, guardrail); empty otherwise"
    )

    @model_validator(mode="after")
    def _statistics_format(self) -> TargetResult:
        check_statistics_format(self, self.statistics)
        return self


class RestoreChecks(Record):
    planned: list[Name] = Field(
        description="Cases whose original would be checked if the Champion failed correctness (one "
        "isolated call each)"
    )
    ran: list[int] = Field(description="Call indices of the restore checks that ran")
    original_passed: dict[Name, bool] = Field(description="Per case: the original's correctness shown here")


class FinalAuditResult(PairedResult):
    operation: Literal["final_audit"] = Field(description="The operation: always final_audit")
    champion: ChampionFacts = Field(
        description="The Champion audited: its selection, Experiment and where the contract came from"
    )
    reference_binding: BindingStatus = Field(
        description="The Champion the audit was bound to, and whether it was still current at publication"
    )
    statistics: AnyStatistics | None = Field(
        description="Primary, constraint, guardrail and secondary statistics; null when the measurement "
        "was invalid"
    )
    resolution: Resolution = Field(
        description="Whether the plan's pairs can resolve the Target's minimum effect, per the noise record"
    )
    inconclusive_because: list[Literal["primary", "constraint", "guardrail"]] = Field(
        description="With verdict inconclusive: which kinds of statistic left it undecided (primary, "
        "constraint, guardrail); empty otherwise"
    )
    restore_checks: RestoreChecks = Field(
        description="The restore checks planned and run, and the original's correctness per case"
    )
    restore_supported: bool = Field(
        description="True when champion restore-original may use this result: rejected without a Champion "
        "correctness failure, or the Champion failed correctness and the original passed in "
        "every planned case"
    )

    @model_validator(mode="after")
    def _statistics_format(self) -> FinalAuditResult:
        check_statistics_format(self, self.statistics)
        return self
