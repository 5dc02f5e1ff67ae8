"""Evaluation summaries show per-case rows and warn when the per-case CIs of the primary do not overlap (a
pooled effect hides cases that differ; seen: +177 % pooled over cases at +538 % and +17 %)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from gpuopt.evaluation.summary import disjoint_cases, per_case_lines


def _case(case_id: str, est: float, low: float, high: float) -> NS:
    return NS(case_id=case_id, n_valid=8, estimate_pct=est, ci_low_pct=low, ci_high_pct=high)


def _stats(*cases: NS, pooled: float = 177.0) -> NS:
    return NS(primary=NS(metric="time_ms", estimate_pct=pooled), per_case=list(cases))


def test_disjoint_cases_print_rows_and_warn() -> None:
    a, b = _case("rows256", 538.0, 501.0, 570.0), _case("rows512", 17.0, 12.0, 22.5)
    lines = per_case_lines(_stats(a, b))
    assert lines == [
        "primary time_ms case rows256: +538.00 % [+501.00 %, +570.00 %] (8 valid pairs)",
        "primary time_ms case rows512: +17.00 % [+12.00 %, +22.50 %] (8 valid pairs)",
        "warning per_case_effects_differ: the per-case CIs of time_ms do not overlap (rows512 [+12.00 %, "
        "+22.50 %], rows256 [+501.00 %, +570.00 %]): the pooled +177.00 % hides that the cases differ",
    ]


def test_overlapping_or_missing_cis_print_nothing() -> None:
    # [10, 30] and [25, 40] overlap; a third case [0, 26] overlaps both: max low 25 <= min high 26.
    over = _stats(_case("a", 20, 10, 30), _case("b", 30, 25, 40), _case("c", 5, 0, 26))
    assert disjoint_cases(over.per_case) is None and per_case_lines(over) == []
    # Touching CIs overlap at one point; a case without a CI is not compared.
    touch = _stats(_case("a", 20, 10, 30), _case("b", 35, 30, 40), NS(case_id="c", n_valid=0,
                   estimate_pct=None, ci_low_pct=None, ci_high_pct=None))  # fmt: skip
    assert per_case_lines(touch) == []
    assert per_case_lines(_stats(_case("only", 5, 1, 9))) == []


def test_three_cases_the_extremes_are_named() -> None:
    cases = (_case("a", 20, 10, 30), _case("b", 25, 15, 35), _case("c", 80, 60, 90))
    low, high = disjoint_cases(list(cases)) or (None, None)
    assert (low.case_id, high.case_id) == ("a", "c")  # type: ignore[union-attr]
    assert len(per_case_lines(_stats(*cases))) == 4
