"""Verdicts per the outcome matrix (spec §6.5, §6.8) and the check of an Experiment's predicted effect."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuopt.evaluation.execution import Execution
from gpuopt.models.evaluation.experiment import Experiment
from gpuopt.models.evaluation.operations import (
    PredictionCheck,
)
from gpuopt.models.evaluation.statistics import Statistics

# ---- verdicts ----------------------------------------------------------------------------------------------


@dataclass
class Judgment:
    verdict: str
    stop_reason: str
    inconclusive_because: list[str] = field(default_factory=list)


def _failed_gates(stats_: Statistics) -> str | None:
    if any(g.status == "failed" for g in stats_.guardrails):
        return "guardrail_failed"
    if any(c.status == "failed" for c in stats_.constraints):
        return "constraint_failed"
    return None


def _below_minimum(stats_: Statistics, m: float, minimum: int) -> bool:
    p = stats_.primary
    return p.n_valid >= minimum and p.ci_high_pct is not None and p.ci_high_pct < m


def formal_judgment(ex: Execution, stats_: Statistics | None, m: float, minimum: int) -> Judgment:
    """Target and final audit (spec §6.5): passed iff valid, primary improved and every constraint and
    guardrail passed; rejected iff correctness failed, a guardrail or constraint failed, or (n >= minimum
    and CI high < the minimum effect); otherwise inconclusive."""
    if ex.correctness_failed:
        return Judgment("rejected", "correctness_failed")
    if stats_ is None:
        return Judgment("not_evaluated", ex.stop_reason)
    failed = _failed_gates(stats_)
    if failed is not None:
        return Judgment("rejected", failed)
    if _below_minimum(stats_, m, minimum):
        reason = "primary_regressed" if stats_.primary.verdict == "regressed" else "minimum_effect_not_met"
        return Judgment("rejected", reason)
    because = []
    if stats_.primary.verdict != "improved":
        because.append("primary")
    if any(c.status != "passed" for c in stats_.constraints):
        because.append("constraint")
    if any(g.status != "passed" for g in stats_.guardrails):
        because.append("guardrail")
    if not because:
        return Judgment("passed", "completed")
    return Judgment("inconclusive", "completed", because)


def screen_judgment(ex: Execution, stats_: Statistics | None, m: float, experiment: Experiment) -> Judgment:
    """Screen: ``rejected`` or ``not_rejected``, never passed; no statistical rejection below the screen's
    minimum pairs."""
    if ex.correctness_failed:
        return Judgment("rejected", "correctness_failed")
    if stats_ is None:
        return Judgment("not_evaluated", ex.stop_reason)
    failed = _failed_gates(stats_)
    if failed is not None:
        return Judgment("rejected", failed)
    enough = stats_.primary.n_valid >= experiment.screen.minimum_pairs
    if (
        enough
        and "primary_regressed" in experiment.screen.reject_if
        and stats_.primary.verdict == "regressed"
    ):
        return Judgment("rejected", "primary_regressed")
    if (
        enough
        and "upper_bound_below_minimum" in experiment.screen.reject_if
        and _below_minimum(stats_, m, experiment.screen.minimum_pairs)
    ):
        return Judgment("rejected", "upper_bound_below_minimum")
    return Judgment("not_rejected", "completed")


def prediction(experiment: Experiment, stats_: Statistics | None) -> PredictionCheck:
    expected = experiment.opportunity_claim.expected_effect_pct
    low = None if expected is None else expected.low
    high = None if expected is None else expected.high
    if expected is None:
        return PredictionCheck(status="not_declared", expected_low_pct=None, expected_high_pct=None)
    p = None if stats_ is None else stats_.primary
    if p is None or p.ci_low_pct is None or p.ci_high_pct is None:
        return PredictionCheck(status="not_evaluated", expected_low_pct=low, expected_high_pct=high)
    if p.ci_high_pct < expected.low:
        status = "observed_below"
    elif p.ci_low_pct > expected.high:
        status = "observed_above"
    else:
        status = "consistent"
    return PredictionCheck(status=status, expected_low_pct=low, expected_high_pct=high)  # type: ignore[arg-type]
