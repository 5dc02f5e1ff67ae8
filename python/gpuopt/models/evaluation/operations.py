"""Evaluations (spec §3.3, §3.5): the requests of ``baseline``, ``noise``, ``screen``, ``target`` and
``final-audit``, their results, and the dry-run plan (their frozen invocation requests are in
:mod:`gpuopt.models.evaluation.frozen`).

The statistics of the comparison results are in :mod:`gpuopt.models.evaluation.statistics`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

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
    Role,
    Sha256,
    Text,
)
from gpuopt.models.evaluation.experiment import Contract, Lifecycle
from gpuopt.models.evaluation.invocation import (
    EvidenceStep,
    InvocationResult,
    Limits,
    SubmitOutcome,
)
from gpuopt.models.evaluation.statistics import (
    AnyStatistics,
    MetricVerdict,
    check_statistics_format,
)
from gpuopt.models.evaluation.views import ResultOutcome

Seed = Annotated[int, Field(ge=0, le=2**53 - 1)]
PathText = Annotated[str, Field(min_length=1, max_length=4096)]

# ---- requests ----------------------------------------------------------------------------------------------


class BaselinePlanSpec(Record):
    case_ids: list[Name] | None = Field(default=None, description="Default: every Target case, in order")
    calls_per_case: Annotated[int, Field(ge=1, le=100_000)] = 1
    samples_per_call: Annotated[int, Field(ge=1, le=1_000_000)] = 10
    warmup_per_call: Annotated[int, Field(ge=0, le=1_000_000)] = 1
    seed: Seed | None = Field(default=None, description="Default: the Target's statistics seed")


class PairPlanSpec(Record):
    case_ids: list[Name] | None = Field(default=None, description="Default: every Target case, in order")
    pairs: Annotated[int, Field(ge=1, le=100_000)] = Field(description="Pairs per case")
    samples_per_call: Annotated[int, Field(ge=1, le=1_000_000)] = 10
    warmup_per_call: Annotated[int, Field(ge=0, le=1_000_000)] = 1
    seed: Seed | None = Field(default=None, description="Default: the Target's statistics seed")


class NoisePlanSpec(PairPlanSpec):
    lifecycle: Lifecycle = "isolated"


class Acquisition(Record):
    shared_state: list[Name] = Field(default_factory=list)
    rebuilt_state: list[Name] = Field(default_factory=list)


class EvaluationRequestBase(Record):
    root: PathText
    target: RecordRef | None = Field(default=None, description="If given, must be the root's Target")
    limits: Limits = Field(default_factory=Limits)
    retry_of: InvocationId | None = None
    keep_workspace: bool = False


class BaselineRequest(EvaluationRequestBase):
    """``gpuopt baseline`` (``gpuopt.request.baseline/v1``): the original on every case, isolated."""

    plan: BaselinePlanSpec = Field(default_factory=BaselinePlanSpec)


class NoiseRequest(EvaluationRequestBase):
    """``gpuopt noise`` (``gpuopt.request.noise/v1``): A/A pairs of the original against itself."""

    plan: NoisePlanSpec
    acquisition: Acquisition = Field(
        default_factory=Acquisition, description="Same-process state declarations (same_process only)"
    )


class ScreenRequest(EvaluationRequestBase):
    """``gpuopt screen`` (``gpuopt.request.screen/v1``): the Experiment's short comparison."""

    experiment: RecordRef
    plan: PairPlanSpec
    noise: ResultRef | None = Field(
        default=None, description="The noise result for the resolution (default: newest matching)"
    )


class TargetRequest(ScreenRequest):
    """``gpuopt target`` (``gpuopt.request.target/v1``): the formal comparison."""


class FinalAuditRequest(EvaluationRequestBase):
    """``gpuopt final-audit`` (``gpuopt.request.final-audit/v1``): original vs the current Champion."""

    plan: PairPlanSpec
    noise: ResultRef | None = None
    contract: Contract | None = Field(
        default=None, description="Default: the contract of the Champion's Experiment"
    )


# ---- frozen requests ---------------------------------------------------------------------------------------


class Binding(Record):
    """The Champion an evaluation is bound to: its selection (null = original) and the pointer file hash."""

    selection: RecordRef | None
    pointer_sha256: Sha256 | None


class ChampionFacts(Record):
    selection: RecordRef
    experiment: RecordRef | None
    contract_source: Literal["experiment", "request"]


class PairValue(Record):
    reference: float
    candidate: float


class Pair(Record):
    """(pair_index, case): the within-call summary of each subject per metric; invalid pairs are kept."""

    pair_index: Count
    case_id: Name
    order: Literal["AB", "BA"]
    calls: list[int]
    values: dict[Name, PairValue]
    effects_log: dict[Name, float]
    valid: bool
    invalid_reasons: list[str]


class ContaminationFacts(Record):
    """What the resource sampler and the Target's contamination rules made of the call windows (spec §7).

    ``checked`` is true only when the declared sampler ran from before the first call to after the last;
    ``sampler: disabled`` leaves it false and invalidates nothing."""

    checked: bool
    sampler: str
    pre_idle: Literal["not_required", "idle", "busy", "unknown", "not_checked"]
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

    noise_ref: ResultRef | None
    planned_pairs: Count
    mde_pct: float | None
    minimum_effect_pct: NonNegative
    status: Literal["resolvable", "below_mde", "no_noise_record"]
    method: Literal["normal_approx"]


class BindingStatus(Record):
    selection: RecordRef | None
    pointer_sha256: Sha256 | None
    status: Literal["current", "stale"]


# ---- results -----------------------------------------------------------------------------------------------


class ElapsedFacts(Record):
    median: NonNegative
    p90: NonNegative


class BaselineMetric(Record):
    unit: str
    median: float
    min: float
    max: float
    within_call_cv_median: float | None


class BaselineCase(Record):
    case_id: Name
    calls: Count
    elapsed_s: ElapsedFacts | None
    metrics: dict[Name, BaselineMetric]


class OriginalGuardrail(Record):
    metric: Name
    op: Literal["le", "ge"]
    limit: Finite
    calls_checked: Count
    calls_violating: list[int]


class BaselineResult(InvocationResult):
    operation: Literal["baseline"]
    cases: list[BaselineCase]
    original_guardrails: list[OriginalGuardrail]
    contamination: ContaminationFacts


class PairedResult(InvocationResult):
    pairs: list[Pair]
    performance_interpreted: bool = Field(
        description="False when a correctness or contract failure (or any invalid measurement) stopped it"
    )
    contamination: ContaminationFacts


class NoiseAt(Record):
    n_pairs: Count
    half_width_pct: float
    mde_pct: float
    robust_half_width_pct: float
    robust_mde_pct: float


class NoiseMetric(Record):
    metric: Name
    n_pairs: Count
    sd_log: float
    robust_sd_log: float
    aa_estimate_pct: float | None
    aa_ci_low_pct: float | None
    aa_ci_high_pct: float | None
    aa_verdict: MetricVerdict
    at: list[NoiseAt] = Field(description="Half-width and MDE at n, minimum_pairs and 2n")
    pairs_for_minimum_effect: int | None
    robust_pairs_for_minimum_effect: int | None
    order_effect_pct: float | None
    within_call_cv_median: float | None
    method: Literal["normal_approx"]


class NoiseFacts(Record):
    lifecycle: Lifecycle
    samples_per_call: int
    metrics: dict[Name, NoiseMetric]


class NoiseResult(PairedResult):
    operation: Literal["noise"]
    noise: NoiseFacts | None


class ScreenResult(PairedResult):
    operation: Literal["screen"]
    experiment: RecordRef
    mechanism: str
    reference_binding: BindingStatus
    statistics: AnyStatistics | None
    resolution: Resolution
    screen_claim: Literal["supported", "contradicted", "undecided"]

    @model_validator(mode="after")
    def _statistics_format(self) -> ScreenResult:
        check_statistics_format(self, self.statistics)
        return self


class PredictionCheck(Record):
    status: Literal["consistent", "observed_below", "observed_above", "not_declared", "not_evaluated"]
    expected_low_pct: float | None
    expected_high_pct: float | None


class TargetResult(PairedResult):
    operation: Literal["target"]
    experiment: RecordRef
    mechanism: str
    reference_binding: BindingStatus
    statistics: AnyStatistics | None
    resolution: Resolution
    screen_gate: list[ResultRef]
    prediction_check: PredictionCheck
    formal_attempts: Count = Field(description="Target results for this candidate digest across Experiments")
    inconclusive_because: list[Literal["primary", "constraint", "guardrail"]]

    @model_validator(mode="after")
    def _statistics_format(self) -> TargetResult:
        check_statistics_format(self, self.statistics)
        return self


class RestoreChecks(Record):
    planned: list[Name]
    ran: list[int] = Field(description="Call indices of the restore checks that ran")
    original_passed: dict[Name, bool] = Field(description="Per case: the original's correctness shown here")


class FinalAuditResult(PairedResult):
    operation: Literal["final_audit"]
    champion: ChampionFacts
    reference_binding: BindingStatus
    statistics: AnyStatistics | None
    resolution: Resolution
    inconclusive_because: list[Literal["primary", "constraint", "guardrail"]]
    restore_checks: RestoreChecks
    restore_supported: bool

    @model_validator(mode="after")
    def _statistics_format(self) -> FinalAuditResult:
        check_statistics_format(self, self.statistics)
        return self


# ---- dry run and command data ------------------------------------------------------------------------------


class Estimate(Record):
    """Expected duration, per step from earlier calls of this Target (spec §3.1)."""

    p50_s: NonNegative | None
    p90_s: NonNegative | None
    gpu_seconds_p50: NonNegative | None
    basis: list[str] = Field(description="The records the per-step times came from")
    scaled: bool = Field(description="Some step times were scaled linearly by samples + warmup (or subjects)")
    unknown_steps: list[int] = Field(description="Call indices without any basis")


class CallCounts(Record):
    total: Count
    by_role: dict[Role, int]
    restore_checks: Count


class DryRun(Record):
    """What an evaluation would run; nothing is written."""

    request: dict[str, Any] = Field(description="The frozen request as it would be written")
    request_digest: Sha256
    invocation_id: InvocationId
    dedupe: Literal["run", "reuse", "attach", "retry_required"]
    evidence_plan: list[EvidenceStep]
    restore_checks: list[EvidenceStep]
    calls: CallCounts
    estimate: Estimate


class EvaluationData(Record):
    """What an evaluation command returns: the dry-run plan, or the submission and (with --wait and
    completion) its result."""

    operation: str
    dry_run: DryRun | None
    submission: SubmitOutcome | None
    estimate: Estimate | None
    result_ref: ResultRef | None
    outcome: ResultOutcome | None = Field(
        default=None,
        description="Why the result came out as it did: reasons, each case's outcome, every invalid pair "
        "(null until there is a result)",
    )
    summary: list[Text] = Field(description="One line per fact shown to a person")


class BaselineData(EvaluationData):
    result: BaselineResult | None


class NoiseEvaluationData(EvaluationData):
    result: NoiseResult | None


class ScreenData(EvaluationData):
    result: ScreenResult | None


class TargetData(EvaluationData):
    result: TargetResult | None


class FinalAuditData(EvaluationData):
    result: FinalAuditResult | None
