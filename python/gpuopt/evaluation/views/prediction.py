"""A target result's prediction check as people read it: the observed primary effect against the effect its
Experiment's opportunity claim expected, and against the claim's Amdahl ceiling.

An observed effect outside the expected range is a fact about the claim, not a detail of the verdict: above
the ceiling, the claim's model (coverage x local saving) gave less than was measured, so the model is wrong,
or the measurement is. Views put the sentence beside the verdict (summary tables, reports), never only in
the hand-off.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gpuopt._effects import effect
from gpuopt.evaluation.views.records import Root, ci
from gpuopt.models.evaluation.operations import TargetResult


def _pct(value: float) -> str:
    """``+4,900 %`` (a computed 4899.9999999 as well), ``+12.50 %``."""
    text = f"{value:+,.2f}"
    return f"{text.removesuffix('.00')} %"


@dataclass(frozen=True)
class Prediction:
    """The check of one target result, with what a sentence about it needs."""

    invocation_id: str
    experiment_id: str
    mechanism: str
    status: str
    expected_low_pct: float | None
    expected_high_pct: float | None
    ceiling_pct: float | None
    estimate_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None

    @property
    def above_ceiling(self) -> bool:
        """The whole CI lies above the claim's Amdahl ceiling."""
        if self.status != "observed_above" or self.ceiling_pct is None or self.ci_low_pct is None:
            return False
        return self.ci_low_pct > self.ceiling_pct

    def text(self) -> str:
        expected = (
            "—"
            if self.expected_low_pct is None or self.expected_high_pct is None
            else f"[{_pct(self.expected_low_pct)}, {_pct(self.expected_high_pct)}]"
        )
        ceiling = "" if self.ceiling_pct is None else f", Amdahl ceiling {_pct(self.ceiling_pct)}"
        observed = f"observed {effect(self.estimate_pct)} {ci(self.ci_low_pct, self.ci_high_pct)}"
        if self.above_ceiling and self.ceiling_pct is not None:
            return (
                f"{observed} lies above the claim's Amdahl ceiling {_pct(self.ceiling_pct)} (expected "
                f"{expected}): the claim's model of the change is wrong, or the measurement is"
            )
        if self.status == "observed_above":
            return (
                f"{observed} lies above the claim's expected effect {expected}{ceiling}: the claim's model "
                "of the change is wrong, or the measurement is"
            )
        if self.status == "observed_below":
            return f"{observed} lies below the claim's expected effect {expected}{ceiling}"
        if self.status == "consistent":
            return f"{observed} overlaps the claim's expected effect {expected}{ceiling}"
        if self.status == "not_evaluated":
            return f"no CI to hold against the claim's expected effect {expected}{ceiling}"
        return "the claim declares no expected effect"

    def short(self) -> str:
        """The status for a table cell: above the ceiling is said as such."""
        return "observed_above_ceiling" if self.above_ceiling else self.status

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "text": self.text()}


def of_result(root: Root, inv_id: str) -> Prediction | None:
    """The prediction check of invocation ``inv_id``'s result; none unless it is a target's."""
    found = root.result(inv_id)
    if found is None or not isinstance(found[0], TargetResult):
        return None
    result = found[0]
    check = result.prediction_check
    experiment, _ = root.experiment(result.experiment.id)
    stats = result.statistics
    primary = None if stats is None else stats.primary
    return Prediction(
        invocation_id=inv_id,
        experiment_id=experiment.id,
        mechanism=result.mechanism,
        status=check.status,
        expected_low_pct=check.expected_low_pct,
        expected_high_pct=check.expected_high_pct,
        ceiling_pct=experiment.opportunity_claim.computed.ceiling_pct,
        estimate_pct=None if primary is None else primary.estimate_pct,
        ci_low_pct=None if primary is None else primary.ci_low_pct,
        ci_high_pct=None if primary is None else primary.ci_high_pct,
    )
