"""Why a result came out as it did: its verdict, the reasons in sentences with their numbers, each case's
outcome and every invalid pair, read from the result record alone (``gpuopt show`` and the evaluation
commands carry it, so one command answers "why was this candidate rejected")."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from gpuopt.evaluation.summary import statistic_line
from gpuopt.models.evaluation.invocation import CorrectnessReceipt, InvocationResult
from gpuopt.models.evaluation.views import CaseOutcome, InvalidPair, ResultOutcome

#: What each pair-invalidity code means (analysis/pairs.py makes them); a contamination rule's code is
#: its id in the Target's contamination rules, a failed call's ``call_<stop reason>``.
_PAIR_REASONS = {
    "reference_correctness_failed": "the reference's output failed a correctness rule in this pair",
    "candidate_correctness_failed": "the candidate's output failed a correctness rule in this pair",
    "reference_missing": "the reference has no measurement in this pair (its call did not complete)",
    "candidate_missing": "the candidate has no measurement in this pair (its call did not complete)",
    "reference_identity_changed": "the reference's runtime identity changed during its call",
    "candidate_identity_changed": "the candidate's runtime identity changed during its call",
}

_OPS = {"le": "at most", "ge": "at least", "eq": "equal to"}


def pair_reason(code: str) -> str:
    """``code: sentence`` for one reason a pair is invalid."""
    if code in _PAIR_REASONS:
        return f"{code}: {_PAIR_REASONS[code]}"
    if code.startswith("call_"):
        return f"{code}: a call of this pair stopped ({code.removeprefix('call_')}) before it measured"
    return f"{code}: the contamination rule {code} fired in this pair's call window"


def _failures(receipt: CorrectnessReceipt) -> list[str]:
    where = f"{receipt.role} (call {receipt.call_index})"
    out = [
        f"{where}: {r.metric} was {r.observed}, the rule requires {_OPS[r.op]} {r.value}"
        for r in [*receipt.rules, *receipt.gates]
        if not r.passed
    ]
    if not out and not receipt.passed:
        out.append(f"{where}: the driver reported {receipt.driver_status}")
    return out


def _case_ids(result: InvocationResult) -> list[str]:
    """Every case the result names, in plan order (call order), then any seen only in pairs or cases."""
    ids = [r.step.case_id for r in result.call_receipts]
    ids += [p.case_id for p in getattr(result, "pairs", [])]
    ids += [c.case_id for c in getattr(result, "cases", [])]
    return list(dict.fromkeys(ids))


def _cases(result: InvocationResult, stats: Any) -> list[CaseOutcome]:
    pairs = getattr(result, "pairs", [])
    per_case = {c.case_id: c for c in (stats.per_case if stats is not None else [])}
    out = []
    for case in _case_ids(result):
        receipts = [r for r in result.correctness if r.case_id == case]
        failures = [line for r in receipts for line in _failures(r)]
        correctness: Literal["passed", "failed", "not_checked"] = (
            "not_checked" if not receipts else ("failed" if failures else "passed")
        )
        effect = per_case.get(case)
        out.append(
            CaseOutcome(
                case_id=case,
                correctness=correctness,
                failures=failures,
                pairs_valid=sum(1 for p in pairs if p.case_id == case and p.valid),
                pairs_invalid=sum(1 for p in pairs if p.case_id == case and not p.valid),
                estimate_pct=None if effect is None else effect.estimate_pct,
                ci_low_pct=None if effect is None else effect.ci_low_pct,
                ci_high_pct=None if effect is None else effect.ci_high_pct,
            )
        )
    return out


def _gates(stats: Any) -> list[str]:
    out = []
    for c in stats.constraints:
        if c.status != "passed":
            out.append(f"constraint {c.metric}: {c.status}")
    for g in stats.guardrails:
        if g.status != "passed":
            n = len(g.violations)
            out.append(f"guardrail {g.metric}: {g.status}" + (f", {n} samples beyond its limit" if n else ""))
    return out


def _statistical(result: InvocationResult, stats: Any) -> list[str]:
    p = stats.primary
    reason = result.stop_reason
    if reason == "primary_regressed":
        return [f"the primary metric {p.metric} regressed: the candidate is worse ({p.verdict_reason})"]
    if reason in ("minimum_effect_not_met", "upper_bound_below_minimum"):
        return [
            f"the primary metric {p.metric} cannot reach the minimum effect: the interval's high end "
            f"{p.ci_high_pct:+.2f} % is below {p.threshold_pct:g} %"
        ]
    return []


def _why(result: InvocationResult, stats: Any, cases: list[CaseOutcome]) -> list[str]:
    reason = result.stop_reason
    failed = [f"case {c.case_id}, {line}" for c in cases for line in c.failures]
    lines = []
    if reason == "correctness_failed":
        lines.append(
            f"rejected because correctness failed in {len(failed)} check(s): " + "; ".join(failed[:3])
        )
        if result.calls.skipped:
            lines.append(
                f"the first failure stopped the plan: {len(result.calls.skipped)} calls were skipped"
            )
    elif stats is not None and reason in ("guardrail_failed", "constraint_failed"):
        lines.append(f"rejected because a gate failed: {'; '.join(_gates(stats))}")
    elif stats is not None:
        lines += _statistical(result, stats)
    because = getattr(result, "inconclusive_because", [])
    if result.verdict == "inconclusive" and because:
        lines.append(f"inconclusive because {', '.join(because)} did not pass (see the statistics below)")
    if result.verdict in ("not_evaluated",) or result.execution_status != "succeeded":
        lines.append(f"stopped with {reason} (execution {result.execution_status})")
    if stats is not None:
        lines.append(statistic_line(f"primary {stats.primary.metric}", stats.primary))
        lines += [g for g in _gates(stats) if reason not in ("guardrail_failed", "constraint_failed")]
    elif getattr(result, "performance_interpreted", True) is False:
        lines.append("performance was not interpreted: the measurement is invalid")
    pairs = getattr(result, "pairs", [])
    invalid = [p for p in pairs if not p.valid]
    if invalid:
        counts = Counter(code for p in invalid for code in p.invalid_reasons)
        lines.append(
            f"{len(invalid)} of {len(pairs)} pairs are invalid: "
            + ", ".join(f"{code} ({n})" for code, n in counts.most_common())
        )
    return lines


def outcome(result: InvocationResult) -> ResultOutcome:
    """Why ``result`` came out as it did."""
    stats = getattr(result, "statistics", None)
    cases = _cases(result, stats)
    invalid = [
        InvalidPair(
            pair_index=p.pair_index, case_id=p.case_id, reasons=[pair_reason(r) for r in p.invalid_reasons]
        )
        for p in getattr(result, "pairs", [])
        if not p.valid
    ]
    return ResultOutcome(
        invocation_id=result.invocation_id,
        operation=result.operation,
        verdict=result.verdict,
        stop_reason=result.stop_reason,
        why=_why(result, stats, cases),
        cases=cases,
        invalid_pairs=invalid,
    )


def outcome_lines(o: ResultOutcome) -> list[str]:
    """The outcome for people: the verdict, why, each case and each invalid pair, one line each."""
    lines = [f"{o.invocation_id} {o.operation}: {o.verdict} ({o.stop_reason})"]
    lines += [f"  why: {w}" for w in o.why]
    for c in o.cases:
        effect = (
            ""
            if c.estimate_pct is None
            else f", primary {c.estimate_pct:+.2f} % [{_pct(c.ci_low_pct)}, {_pct(c.ci_high_pct)}]"
        )
        lines.append(
            f"  case {c.case_id}: correctness {c.correctness}, {c.pairs_valid} valid / {c.pairs_invalid} "
            f"invalid pairs{effect}"
        )
        lines += [f"    failed: {f}" for f in c.failures]
    for p in o.invalid_pairs:
        lines.append(f"  invalid pair {p.pair_index} ({p.case_id}): {'; '.join(p.reasons)}")
    return lines


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f} %"
