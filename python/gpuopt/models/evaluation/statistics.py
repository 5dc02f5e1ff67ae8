"""The statistics of a comparison result (spec §6.4): the primary and secondary metrics, the constraints and
guardrails, the per-case effects and the order facts.

v3 (written now) embeds the engine's own results: each metric's :class:`gpuopt.models.stats.Comparison` as
:func:`gpuopt.stats.compare` returns it (its per-case effects and order facts included), the constraints'
``ConstraintResult`` and the guardrails' ``GuardrailResult``. v2 copied each metric's comparison field by
field (:class:`StatisticV2`, :class:`CaseStatV2`), and v1 copied the constraints and guardrails as well
(:class:`ConstraintStat`, :class:`GuardrailStat`); both are read, never written.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from gpuopt.models.evaluation.common import Count, Finite, Name, NonNegative, Record
from gpuopt.models.evaluation.invocation import RESULT_V1, RESULT_V2, InvocationResult
from gpuopt.models.stats import (
    CaseEffect,
    CiMethod,
    Comparison,
    ConstraintResult,
    EffectScale,
    Estimator,
    GuardrailResult,
    OrderFacts,
    RelativeLimit,
)


def _copied(engine: type[BaseModel], name: str) -> Any:
    """A v1/v2 field copied from the engine's result: described by the engine model's field (one source)."""
    return Field(description=engine.model_fields[name].description)


MetricVerdict = Literal["improved", "regressed", "equivalent", "inconclusive"]
GateStatus = Literal["passed", "failed", "inconclusive"]


class Statistic(Record):
    """One metric's comparison (spec §6.4, v3): the engine's result as :func:`gpuopt.stats.compare` returns
    it, and what the evaluation adds (the metric's role, the pairs it left out before the comparison). The
    properties answer every name of the v2 twin's fields."""

    role: Literal["primary", "secondary"] = Field(
        description="primary (the Target's primary metric: decides the verdict) or secondary (measured and "
        "classified, never deciding)"
    )
    n_invalid: Count = Field(
        description="Pairs of this invocation left out before the comparison (invalid measurements); "
        "comparison.n_invalid counts those the engine itself left out"
    )
    comparison: Comparison = Field(
        description="The engine's comparison over the valid pairs, as gpuopt.stats.compare returns it"
    )

    # The v2 twin's names, read from the comparison (summaries, views and callers read every format alike)
    @property
    def metric(self) -> str:
        return self.comparison.metric

    @property
    def n_valid(self) -> int:
        return self.comparison.n

    @property
    def estimator(self) -> Estimator:
        return self.comparison.estimator

    @property
    def ci_method(self) -> CiMethod:
        return self.comparison.ci_method

    @property
    def ci_method_run(self) -> CiMethod | None:
        return self.comparison.ci_method_run

    @property
    def confidence(self) -> float:
        return self.comparison.confidence

    @property
    def resamples(self) -> int:
        return self.comparison.resamples

    @property
    def seed(self) -> int:
        return self.comparison.seed

    @property
    def effect_scale(self) -> EffectScale:
        return self.comparison.effect_scale

    @property
    def estimate_log(self) -> float | None:
        return self.comparison.estimate_log

    @property
    def ci_low_log(self) -> float | None:
        return self.comparison.ci_low_log

    @property
    def ci_high_log(self) -> float | None:
        return self.comparison.ci_high_log

    @property
    def estimate_pct(self) -> float | None:
        return self.comparison.estimate_pct

    @property
    def ci_low_pct(self) -> float | None:
        return self.comparison.ci_low_pct

    @property
    def ci_high_pct(self) -> float | None:
        return self.comparison.ci_high_pct

    @property
    def change_pct(self) -> float | None:
        return self.comparison.change_pct

    @property
    def threshold_pct(self) -> float:
        return self.comparison.minimum_effect_pct

    @property
    def verdict(self) -> MetricVerdict:
        return self.comparison.verdict

    @property
    def verdict_reason(self) -> str:
        return self.comparison.verdict_reason

    @property
    def pairs_needed_estimate(self) -> int | None:
        return self.comparison.pairs_needed_estimate

    @property
    def warnings(self) -> list[str]:
        return [w.code for w in self.comparison.warnings]


class StatisticV2(Record):
    """v1 and v2 only (read, never written): one metric's comparison copied field by field from the engine's
    result. v3 embeds :class:`gpuopt.models.stats.Comparison` itself (:class:`Statistic`)."""

    metric: Name = _copied(Comparison, "metric")
    role: Literal["primary", "secondary"] = Field(
        description="primary (the Target's primary metric: decides the verdict) or secondary (measured and "
        "classified, never deciding)"
    )
    n_valid: Count = Field(description="Valid pairs the comparison used")
    n_invalid: Count = Field(
        description="Pairs of the invocation left out (invalid measurements, or a side the engine could "
        "not use)"
    )
    estimator: Literal["median", "mean"] = _copied(Comparison, "estimator")
    ci_method: Literal["bca", "percentile"] = _copied(Comparison, "ci_method")
    ci_method_run: Literal["bca", "percentile"] | None = _copied(Comparison, "ci_method_run")
    confidence: float = _copied(Comparison, "confidence")
    resamples: int = _copied(Comparison, "resamples")
    seed: int = _copied(Comparison, "seed")
    effect_scale: Literal["log_ratio", "arithmetic_pct"] = _copied(Comparison, "effect_scale")
    estimate_log: float | None = _copied(Comparison, "estimate_log")
    ci_low_log: float | None = _copied(Comparison, "ci_low_log")
    ci_high_log: float | None = _copied(Comparison, "ci_high_log")
    estimate_pct: float | None = Field(description="> 0 means the candidate is better")
    ci_low_pct: float | None = _copied(Comparison, "ci_low_pct")
    ci_high_pct: float | None = _copied(Comparison, "ci_high_pct")
    change_pct: float | None = Field(description="Raw change of the candidate, 100·(cand/ref - 1)")
    threshold_pct: NonNegative = Field(
        description="The effect the verdict is judged against (%): the Target's minimum effect for the "
        "primary, a secondary's threshold_pct"
    )
    verdict: MetricVerdict = _copied(Comparison, "verdict")
    verdict_reason: str = _copied(Comparison, "verdict_reason")
    pairs_needed_estimate: int | None = _copied(Comparison, "pairs_needed_estimate")
    warnings: list[str] = Field(description="Codes of the comparison's warnings (bca_degenerate, ...)")


class ConstraintStat(Record):
    """v1 only (``gpuopt.invocation-result/v1``, read, never written): a relative guardrail copied field by
    field from the engine's result. v2 embeds :class:`gpuopt.models.stats.ConstraintResult` itself."""

    metric: Name = _copied(ConstraintResult, "metric")
    max_regression_pct: NonNegative = _copied(RelativeLimit, "max_regression_pct")
    n_valid: Count = _copied(ConstraintResult, "n")
    n_invalid: Count = _copied(ConstraintResult, "n_invalid")
    regression_estimate_pct: float | None = Field(
        description="The estimated regression (%, > 0 = the candidate is worse); null without enough pairs"
    )
    regression_ci_low_pct: float | None = Field(description="Low end of the regression's CI (%)")
    regression_ci_high_pct: float | None = Field(
        description="High end of the regression's CI (%): passed when at or below max_regression_pct"
    )
    status: GateStatus = _copied(ConstraintResult, "status")


class GuardrailViolation(Record):
    pair_index: Count = Field(description="The pair whose candidate call violated the limit")
    case_id: Name = Field(description="That pair's case")
    sample_index: Count = Field(description="The violating sample's position in the call, from 0")


class GuardrailStat(Record):
    """v1 only (read, never written): an absolute limit copied field by field from the engine's result.
    v2 is :class:`GuardrailOutcome`."""

    metric: Name = _copied(GuardrailResult, "metric")
    op: Literal["le", "ge"] = _copied(GuardrailResult, "op")
    limit: Finite = _copied(GuardrailResult, "limit")
    mode: Literal["every_call", "ci"] = _copied(GuardrailResult, "mode")
    n_valid: Count = _copied(GuardrailResult, "n")
    estimate: float | None = _copied(GuardrailResult, "estimate")
    ci_low: float | None = _copied(GuardrailResult, "ci_low")
    ci_high: float | None = _copied(GuardrailResult, "ci_high")
    violations: list[GuardrailViolation] = Field(
        description="every_call mode: each violating sample of a valid pair, located in this invocation's "
        "pairs"
    )
    status: GateStatus = _copied(GuardrailResult, "status")


class GuardrailOutcome(Record):
    """An absolute limit on the candidate: the engine's result as :func:`gpuopt.stats.guardrail` returns
    it, and where its every-call violations lie (the engine numbers the valid pairs it was given)."""

    result: GuardrailResult = Field(
        description="The engine's guardrail result over the valid pairs, as gpuopt.stats.guardrail returns it"
    )
    violations: list[GuardrailViolation] = Field(
        description="result.violations as (pair_index, case_id, sample_index) of this invocation's pairs"
    )

    @property
    def metric(self) -> str:
        return self.result.metric

    @property
    def status(self) -> GateStatus:
        return self.result.status


class CaseStat(CaseEffect):
    """The primary's effect within one case (v3): the engine's :class:`gpuopt.models.stats.CaseEffect`, with
    ``n`` also under the name the v2 twin gave it."""

    @property
    def n_valid(self) -> int:
        return self.n


class CaseStatV2(Record):
    """v1 and v2 only (read, never written): one case's effect copied from the engine's ``CaseEffect``."""

    case_id: Name = _copied(CaseEffect, "case_id")
    n_valid: Count = Field(description="Valid pairs of the case")
    estimate_pct: float | None = _copied(CaseEffect, "estimate_pct")
    ci_low_pct: float | None = _copied(CaseEffect, "ci_low_pct")
    ci_high_pct: float | None = _copied(CaseEffect, "ci_high_pct")


class Statistics(Record):
    """The statistics of a comparison (v3): every result is the engine's own (``gpuopt.stats.compare``,
    ``constraint``, ``guardrail``); the primary's per-case effects and order facts are those of its
    comparison. The invalid pairs left out before the engine are ``primary.n_invalid``."""

    primary: Statistic = Field(
        description="The primary metric's comparison: decides the verdict with the constraints and guardrails"
    )
    constraints: list[ConstraintResult] = Field(
        description="Each relative constraint's non-inferiority check, as the engine returns it"
    )
    guardrails: list[GuardrailOutcome] = Field(
        description="Each absolute guardrail on the candidate, with its violations located"
    )
    secondary: list[Statistic] = Field(
        description="Each secondary metric's comparison: measured and classified, never deciding"
    )

    @property
    def per_case(self) -> list[CaseStat]:
        """The primary per case (``primary.comparison.per_case``): reported, never used for verdicts."""
        return [CaseStat.model_validate(c.model_dump()) for c in self.primary.comparison.per_case]

    @property
    def order_effect(self) -> OrderFacts | None:
        """The primary's AB/BA order facts (``primary.comparison.orders``)."""
        return self.primary.comparison.orders


class _StatisticsTwins(Record):
    primary: StatisticV2 = Field(description="The primary metric's comparison, copied field by field")
    secondary: list[StatisticV2] = Field(
        description="Each secondary metric's comparison, copied field by field"
    )
    per_case: list[CaseStatV2] = Field(description="The primary per case: reported, never used for verdicts")
    order_effect: OrderFacts | None = Field(
        description="The engine's AB/BA order facts, as gpuopt.stats reports them"
    )


class StatisticsV2(_StatisticsTwins):
    """The statistics of a ``gpuopt.invocation-result/v2`` record (read, never written): constraints and
    guardrails are the engine's own results, the metrics and cases twins of its comparison."""

    constraints: list[ConstraintResult] = Field(
        description="Each relative constraint's check, as the engine returns it"
    )
    guardrails: list[GuardrailOutcome] = Field(
        description="Each absolute guardrail on the candidate, with its violations located"
    )


class StatisticsV1(_StatisticsTwins):
    """The statistics of a ``gpuopt.invocation-result/v1`` record (read, never written)."""

    constraints: list[ConstraintStat] = Field(
        description="Each relative constraint's check, copied field by field"
    )
    guardrails: list[GuardrailStat] = Field(
        description="Each absolute guardrail's check, copied field by field"
    )


AnyStatistics = Statistics | StatisticsV2 | StatisticsV1
"""The statistics of a result of any format. A v1 record without constraints or guardrails fits both older
shapes and reads as v2 (the first that fits); ``check_statistics_format`` allows only that overlap."""


def check_statistics_format(result: InvocationResult, statistics: AnyStatistics | None) -> None:
    """Each format carries its own shape of statistics; a v1 record may read as v2 only when its
    constraint and guardrail lists are empty (both shapes are then the same bytes)."""
    if isinstance(statistics, Statistics) and result.format in (RESULT_V1, RESULT_V2):
        raise ValueError(f"a {result.format} record carries metrics copied field by field (no comparison)")
    if isinstance(statistics, StatisticsV2 | StatisticsV1) and result.format not in (RESULT_V1, RESULT_V2):
        raise ValueError(f"a {result.format} record embeds each metric's comparison")
    if isinstance(statistics, StatisticsV1) and result.format != RESULT_V1:
        raise ValueError("statistics in the v1 shape need format gpuopt.invocation-result/v1")
    if (
        isinstance(statistics, StatisticsV2)
        and result.format == RESULT_V1
        and (statistics.constraints or statistics.guardrails)
    ):
        raise ValueError("a gpuopt.invocation-result/v1 record carries v1 constraints and guardrails")
