"""The statistics of a comparison result (spec §6.4): the primary and secondary metrics, the constraints and
guardrails, the per-case effects and the order facts.

v3 (written now) embeds the engine's own results: each metric's :class:`gpuopt.models.stats.Comparison` as
:func:`gpuopt.stats.compare` returns it (its per-case effects and order facts included), the constraints'
``ConstraintResult`` and the guardrails' ``GuardrailResult``. v2 copied each metric's comparison field by
field (:class:`StatisticV2`, :class:`CaseStatV2`), and v1 copied the constraints and guardrails as well
(:class:`ConstraintStat`, :class:`GuardrailStat`); both are read, never written.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

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
)

MetricVerdict = Literal["improved", "regressed", "equivalent", "inconclusive"]
GateStatus = Literal["passed", "failed", "inconclusive"]


class Statistic(Record):
    """One metric's comparison (spec §6.4, v3): the engine's result as :func:`gpuopt.stats.compare` returns
    it, and what the evaluation adds (the metric's role, the pairs it left out before the comparison). The
    properties answer every name of the v2 twin's fields."""

    role: Literal["primary", "secondary"]
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

    metric: Name
    role: Literal["primary", "secondary"]
    n_valid: Count
    n_invalid: Count
    estimator: Literal["median", "mean"]
    ci_method: Literal["bca", "percentile"]
    ci_method_run: Literal["bca", "percentile"] | None
    confidence: float
    resamples: int
    seed: int
    effect_scale: Literal["log_ratio", "arithmetic_pct"]
    estimate_log: float | None
    ci_low_log: float | None
    ci_high_log: float | None
    estimate_pct: float | None = Field(description="> 0 means the candidate is better")
    ci_low_pct: float | None
    ci_high_pct: float | None
    change_pct: float | None = Field(description="Raw change of the candidate, 100·(cand/ref - 1)")
    threshold_pct: NonNegative
    verdict: MetricVerdict
    verdict_reason: str
    pairs_needed_estimate: int | None
    warnings: list[str]


class ConstraintStat(Record):
    """v1 only (``gpuopt.invocation-result/v1``, read, never written): a relative guardrail copied field by
    field from the engine's result. v2 embeds :class:`gpuopt.models.stats.ConstraintResult` itself."""

    metric: Name
    max_regression_pct: NonNegative
    n_valid: Count
    n_invalid: Count
    regression_estimate_pct: float | None
    regression_ci_low_pct: float | None
    regression_ci_high_pct: float | None
    status: GateStatus


class GuardrailViolation(Record):
    pair_index: Count
    case_id: Name
    sample_index: Count


class GuardrailStat(Record):
    """v1 only (read, never written): an absolute limit copied field by field from the engine's result.
    v2 is :class:`GuardrailOutcome`."""

    metric: Name
    op: Literal["le", "ge"]
    limit: Finite
    mode: Literal["every_call", "ci"]
    n_valid: Count
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    violations: list[GuardrailViolation]
    status: GateStatus


class GuardrailOutcome(Record):
    """An absolute limit on the candidate: the engine's result as :func:`gpuopt.stats.guardrail` returns
    it, and where its every-call violations lie (the engine numbers the valid pairs it was given)."""

    result: GuardrailResult
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

    case_id: Name
    n_valid: Count
    estimate_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None


class Statistics(Record):
    """The statistics of a comparison (v3): every result is the engine's own (``gpuopt.stats.compare``,
    ``constraint``, ``guardrail``); the primary's per-case effects and order facts are those of its
    comparison. The invalid pairs left out before the engine are ``primary.n_invalid``."""

    primary: Statistic
    constraints: list[ConstraintResult]
    guardrails: list[GuardrailOutcome]
    secondary: list[Statistic]

    @property
    def per_case(self) -> list[CaseStat]:
        """The primary per case (``primary.comparison.per_case``): reported, never used for verdicts."""
        return [CaseStat.model_validate(c.model_dump()) for c in self.primary.comparison.per_case]

    @property
    def order_effect(self) -> OrderFacts | None:
        """The primary's AB/BA order facts (``primary.comparison.orders``)."""
        return self.primary.comparison.orders


class _StatisticsTwins(Record):
    primary: StatisticV2
    secondary: list[StatisticV2]
    per_case: list[CaseStatV2] = Field(description="The primary per case: reported, never used for verdicts")
    order_effect: OrderFacts | None = Field(
        description="The engine's AB/BA order facts, as gpuopt.stats reports them"
    )


class StatisticsV2(_StatisticsTwins):
    """The statistics of a ``gpuopt.invocation-result/v2`` record (read, never written): constraints and
    guardrails are the engine's own results, the metrics and cases twins of its comparison."""

    constraints: list[ConstraintResult]
    guardrails: list[GuardrailOutcome]


class StatisticsV1(_StatisticsTwins):
    """The statistics of a ``gpuopt.invocation-result/v1`` record (read, never written)."""

    constraints: list[ConstraintStat]
    guardrails: list[GuardrailStat]


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
