"""The gate's rule, applied to the statistics the evaluations compute (pure; no I/O).

On the effect scale of spec §6.2 (> 0: the current code is better), with the Target's minimum effect m,
τ = ln(1 + m/100) and the CI of the primary metric:

| condition (checked in order) | outcome |
|---|---|
| fewer valid pairs (unpaired: calls per side) than the Target's minimum | inconclusive (too_few_pairs) |
| CI high ≤ -τ (m = 0: CI high < 0): a regression at least as large as m | regression |
| CI low ≥ τ (m = 0: CI low > 0): an improvement at least as large as m | improvement |
| CI low > -τ: a regression as large as m is excluded (non-inferiority at margin m) | pass |
| otherwise: the CI reaches a regression of m without lying beyond it | inconclusive |

At m = 0 nothing passes without an improvement: the gate needs a margin. A relative constraint of the Target
applies the same rule with its own limit (a failed constraint is a regression, an undecided one
inconclusive); a failed guardrail is a regression. Parity mode (``arithmetic_pct``) compares the percent CI
with ±m directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuopt.evaluation.execution import Execution
from gpuopt.models.evaluation.gate import GateJudgment, GateOutcome, GateReason
from gpuopt.models.stats import Comparison

ORDER: tuple[GateOutcome, ...] = (
    "correctness_failed",
    "identity_mismatch",
    "invalid",
    "regression",
    "inconclusive",
    "improvement",
    "pass",
)
"""Which outcome wins when parts of a check disagree (first wins)."""


def combine(outcomes: list[GateOutcome]) -> GateOutcome:
    present = set(outcomes)
    if present == {"improvement"}:
        return "improvement"
    return next((o for o in ORDER if o in present and o != "improvement"), "pass")


def regression_bound_pct(m: float, arithmetic: bool) -> float:
    """The effect (%) of a regression exactly as large as m."""
    return -m if arithmetic else 100.0 * (1.0 / (1.0 + m / 100.0) - 1.0)


@dataclass(frozen=True)
class Rule:
    """The comparison's CI against ±m, as a gate outcome and one reason."""

    outcome: GateOutcome
    code: str


def rule(comparison: Comparison, m: float, minimum: int) -> Rule:
    """One comparison against the minimum effect (see the module table)."""
    arithmetic = comparison.effect_scale == "arithmetic_pct"
    if comparison.n < minimum:
        return Rule("inconclusive", "too_few_pairs")
    if arithmetic:
        low, high, tau = comparison.ci_low_pct, comparison.ci_high_pct, m
    else:
        low, high, tau = comparison.ci_low_log, comparison.ci_high_log, math.log1p(m / 100.0)
    if low is None or high is None:
        return Rule("inconclusive", "no_interval")
    if (m > 0 and high <= -tau) or (m == 0 and high < 0):
        return Rule("regression", "regressed")
    if (m > 0 and low >= tau) or (m == 0 and low > 0):
        return Rule("improvement", "improved")
    if m > 0 and low > -tau:
        return Rule("pass", "non_inferior")
    return Rule("inconclusive", "ci_reaches_minimum")


def describe(comparison: Comparison, threshold: float, what: str) -> str:
    """One line: the metric's effect and CI against the threshold."""
    if comparison.estimate_pct is None or comparison.ci_low_pct is None or comparison.ci_high_pct is None:
        return f"{what} {comparison.metric}: no interval ({comparison.n} valid)"
    return (
        f"{what} {comparison.metric}: effect {comparison.estimate_pct:+.2f} % "
        f"[{comparison.ci_low_pct:+.2f}, {comparison.ci_high_pct:+.2f}] over {comparison.n} "
        f"(> 0 = current better; minimum effect {threshold:g} %)"
    )


def judgment(outcome: GateOutcome, m: float, arithmetic: bool, reasons: list[GateReason]) -> GateJudgment:
    return GateJudgment(
        outcome=outcome,
        minimum_effect_pct=m,
        regression_bound_pct=regression_bound_pct(m, arithmetic),
        improvement_bound_pct=m,
        reasons=reasons,
    )


def reason(
    code: str,
    message: str,
    outcome: GateOutcome | None,
    *,
    metric: str | None = None,
    case_id: str | None = None,
) -> GateReason:
    return GateReason(code=code, outcome=outcome, metric=metric, case_id=case_id, message=message[:4096])


def status_outcome(status: str) -> GateOutcome:
    """A constraint's or guardrail's status (passed, failed, inconclusive) as a gate outcome."""
    return "regression" if status == "failed" else "pass" if status == "passed" else "inconclusive"


def not_judged(ex: Execution) -> tuple[GateOutcome, GateReason] | None:
    """The outcome of a run that produced nothing to judge, if it did not."""
    if ex.correctness_failed:
        return "correctness_failed", reason(
            "correctness_failed",
            "the current code failed the Target's correctness rules",
            "correctness_failed",
        )
    if ex.stop_reason == "identity_changed":
        return "identity_mismatch", reason(
            "identity_changed",
            "the driver reported another runtime identity than the Target's",
            "identity_mismatch",
        )
    if ex.execution_status != "succeeded" or ex.validity != "valid":
        return "invalid", reason(
            ex.stop_reason,
            f"the measurement ended {ex.execution_status}/{ex.validity} ({ex.stop_reason}): not judged",
            "invalid",
        )
    return None
