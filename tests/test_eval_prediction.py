"""A target's prediction check where people look (issue 27): the observed effect against the claim's
expected effect and Amdahl ceiling, as a sentence beside the verdict. Read from a real target record (the
CPU example's ``faster`` candidate, ``tests/data/eval_v2``: observed far above the claim's ceiling)."""

from __future__ import annotations

from pathlib import Path

from gpuopt.evaluation import jsonio
from gpuopt.evaluation.views.prediction import Prediction
from gpuopt.models.evaluation.operations import TargetResult

RESULT = Path(__file__).parent / "data" / "eval_v2" / "target" / "result.json"
#: The example's claim: coverage 1.0 of the timed call, a 50x local speedup: 100·(1/(1 - 0.98) - 1).
CEILING_PCT = 4900.0


def _prediction(result: TargetResult, **changes: float | str | None) -> Prediction:
    primary = result.statistics.primary if result.statistics is not None else None
    assert primary is not None
    fields = {
        "invocation_id": result.invocation_id,
        "experiment_id": result.experiment.id,
        "mechanism": result.mechanism,
        "status": result.prediction_check.status,
        "expected_low_pct": result.prediction_check.expected_low_pct,
        "expected_high_pct": result.prediction_check.expected_high_pct,
        "ceiling_pct": CEILING_PCT,
        "estimate_pct": primary.estimate_pct,
        "ci_low_pct": primary.ci_low_pct,
        "ci_high_pct": primary.ci_high_pct,
    }
    return Prediction(**(fields | changes))  # type: ignore[arg-type]


def _record() -> TargetResult:
    return jsonio.load(TargetResult, RESULT.read_bytes(), what="result", max_bytes=jsonio.MAX_RECORD_BYTES)


def test_an_effect_above_the_claims_ceiling_says_the_claims_model_is_wrong() -> None:
    result = _record()
    assert (result.verdict, result.prediction_check.status) == ("passed", "observed_above")
    checked = _prediction(result)
    assert checked.above_ceiling and checked.short() == "observed_above_ceiling"
    assert checked.text() == (
        "observed +6662.12 % (67.62x better) [+5659.74 %, +7990.91 %] lies above the claim's Amdahl "
        "ceiling +4,900 % (expected [+100 %, +4,900 %]): the claim's model of the change is wrong, or the "
        "measurement is"
    )
    assert checked.as_dict()["text"] == checked.text()


def test_the_other_statuses_read_as_what_they_are() -> None:
    result = _record()
    # Above the expected effect but not above a higher ceiling.
    above = _prediction(result, ceiling_pct=9000.0)
    assert above.short() == "observed_above"
    assert above.text() == (
        "observed +6662.12 % (67.62x better) [+5659.74 %, +7990.91 %] lies above the claim's expected effect "
        "[+100 %, +4,900 %], Amdahl ceiling +9,000 %: the claim's model of the change is wrong, or the "
        "measurement is"
    )
    below = _prediction(
        result, status="observed_below", estimate_pct=20.0, ci_low_pct=10.5, ci_high_pct=30.25
    )
    assert below.text() == (
        "observed +20.00 % [+10.50 %, +30.25 %] lies below the claim's expected effect [+100 %, +4,900 %], "
        "Amdahl ceiling +4,900 %"
    )
    consistent = _prediction(
        result, status="consistent", estimate_pct=900.0, ci_low_pct=800.0, ci_high_pct=1000.0
    )
    assert consistent.text() == (
        "observed +900.00 % (10.00x better) [+800.00 %, +1000.00 %] overlaps the claim's expected effect "
        "[+100 %, +4,900 %], Amdahl ceiling +4,900 %"
    )
    undeclared = _prediction(
        result, status="not_declared", expected_low_pct=None, expected_high_pct=None, ceiling_pct=None
    )
    assert (undeclared.short(), undeclared.text()) == (
        "not_declared",
        "the claim declares no expected effect",
    )
