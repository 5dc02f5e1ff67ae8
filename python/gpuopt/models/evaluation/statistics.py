"""The statistics of a comparison result (spec §6.4): the primary and secondary metrics, the constraints and
guardrails (v2: the engine's own ``ConstraintResult``/``GuardrailResult``; v1's field-by-field twins are read
only), the per-case effects and the order facts. The engine's ``n`` is recorded as ``n_valid``, and ``role``
says whether a statistic is the primary or a secondary metric.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models.evaluation.common import Count, Finite, Name, NonNegative, Record
from gpuopt.models.evaluation.invocation import RESULT_V1, InvocationResult
from gpuopt.models.stats import ConstraintResult, GuardrailResult, OrderFacts

MetricVerdict = Literal["improved", "regressed", "equivalent", "inconclusive"]
GateStatus = Literal["passed", "failed", "inconclusive"]


class Statistic(Record):
    """One metric's comparison (spec §6.4)."""

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


class CaseStat(Record):
    case_id: Name
    n_valid: Count
    estimate_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None


class _StatisticsBase(Record):
    primary: Statistic
    secondary: list[Statistic]
    per_case: list[CaseStat] = Field(description="The primary per case: reported, never used for verdicts")
    order_effect: OrderFacts | None = Field(
        description="The engine's AB/BA order facts, as gpuopt.stats reports them"
    )


class Statistics(_StatisticsBase):
    """The statistics of a comparison (v2): constraints and guardrails are the engine's own results
    (``gpuopt.stats.constraint``/``guardrail``); their invalid pairs are ``primary.n_invalid``."""

    constraints: list[ConstraintResult]
    guardrails: list[GuardrailOutcome]


class StatisticsV1(_StatisticsBase):
    """The statistics of a ``gpuopt.invocation-result/v1`` record (read, never written)."""

    constraints: list[ConstraintStat]
    guardrails: list[GuardrailStat]


def check_statistics_format(result: InvocationResult, statistics: Statistics | StatisticsV1 | None) -> None:
    """v2 records carry v2 statistics; a v1 record may read as v2 only when its constraint and guardrail
    lists are empty (both shapes are then the same bytes)."""
    if isinstance(statistics, StatisticsV1) and result.format != RESULT_V1:
        raise ValueError("statistics in the v1 shape need format gpuopt.invocation-result/v1")
    if (
        isinstance(statistics, Statistics)
        and result.format == RESULT_V1
        and (statistics.constraints or statistics.guardrails)
    ):
        raise ValueError("a gpuopt.invocation-result/v1 record carries v1 constraints and guardrails")
