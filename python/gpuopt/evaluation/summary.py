"""One-screen text summaries of an evaluation's dry-run plan and result, for people (the ``summary``
field of the command's data)."""

from __future__ import annotations

import json
from typing import Any

from gpuopt._effects import effect
from gpuopt.models.evaluation.common import ResultRef
from gpuopt.models.evaluation.evaluation_data import DryRun
from gpuopt.models.evaluation.invocation import InvocationResult

# ---- summaries for people ----------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f} %"


def statistic_line(label: str, s: Any) -> str:
    log_ratio = getattr(s, "effect_scale", None) == "log_ratio"
    return (
        f"{label}: {s.verdict} {effect(s.estimate_pct) if log_ratio else _pct(s.estimate_pct)} "
        f"[{_pct(s.ci_low_pct)}, {_pct(s.ci_high_pct)}] at {s.confidence:g} "
        f"({s.n_valid} valid pairs, minimum effect {s.threshold_pct:g} %)"
    )


def disjoint_cases(per_case: list[Any]) -> tuple[Any, Any] | None:
    """Two cases whose primary CIs do not overlap (the lowest upper bound below the highest lower bound),
    or None when every pair of per-case CIs overlaps."""
    with_ci = [c for c in per_case if c.ci_low_pct is not None and c.ci_high_pct is not None]
    if len(with_ci) < 2:
        return None
    low = min(with_ci, key=lambda c: c.ci_high_pct)
    high = max(with_ci, key=lambda c: c.ci_low_pct)
    return (low, high) if high.ci_low_pct > low.ci_high_pct else None


def _case_line(c: Any) -> str:
    return (
        f"case {c.case_id}: {_pct(c.estimate_pct)} [{_pct(c.ci_low_pct)}, {_pct(c.ci_high_pct)}] "
        f"({c.n_valid} valid pairs)"
    )


def per_case_lines(stats: Any) -> list[str]:
    """Per-case rows of the primary and a warning, when the per-case CIs do not overlap: the pooled
    effect averages over cases whose effects differ (seen: +177 % pooled over +538 % and +17 %)."""
    found = disjoint_cases(list(stats.per_case))
    if found is None:
        return []
    low, high = found
    return [
        *(f"primary {stats.primary.metric} {_case_line(c)}" for c in stats.per_case),
        f"warning per_case_effects_differ: the per-case CIs of {stats.primary.metric} do not overlap "
        f"({low.case_id} [{_pct(low.ci_low_pct)}, {_pct(low.ci_high_pct)}], {high.case_id} "
        f"[{_pct(high.ci_low_pct)}, {_pct(high.ci_high_pct)}]): the pooled "
        f"{_pct(stats.primary.estimate_pct)} hides that the cases differ",
    ]


def reference_line(ref: ResultRef) -> str:
    """The result's reference, ready to paste into the next request (the id alone is accepted too)."""
    return "reference: " + json.dumps({"invocation_id": ref.invocation_id, "sha256": ref.sha256})


def result_summary(result: InvocationResult) -> list[str]:
    lines = [
        f"{result.invocation_id} {result.operation}: {result.verdict} "
        f"({result.execution_status}/{result.measurement_validity}, stop {result.stop_reason})",
        f"calls {result.calls.completed}/{result.calls.planned}, skipped {len(result.calls.skipped)}, "
        f"cleanup {result.cleanup_status}, {result.elapsed_s:.1f} s",
    ]
    stats = getattr(result, "statistics", None)
    if stats is not None:
        lines.append(statistic_line(f"primary {stats.primary.metric}", stats.primary))
        lines += per_case_lines(stats)
        lines += [f"constraint {c.metric}: {c.status}" for c in stats.constraints]
        lines += [f"guardrail {g.metric}: {g.status}" for g in stats.guardrails]
        lines += [statistic_line(f"secondary {s.metric}", s) for s in stats.secondary]
    elif getattr(result, "performance_interpreted", True) is False:
        lines.append("performance not interpreted (measurement invalid)")
    noise_facts = getattr(result, "noise", None)
    if noise_facts is not None:
        for name, n in noise_facts.metrics.items():
            at = ", ".join(f"{a.mde_pct:.2f} % at {a.n_pairs}" for a in n.at)
            lines.append(
                f"noise {name}: A/A {n.aa_verdict} {_pct(n.aa_estimate_pct)} "
                f"[{_pct(n.aa_ci_low_pct)}, {_pct(n.aa_ci_high_pct)}], SD {n.sd_log:.4f} (log), "
                f"MDE {at} pairs"
            )
    for case in getattr(result, "cases", []):
        facts = ", ".join(f"{k} median {v.median:.4g} {v.unit}" for k, v in case.metrics.items())
        lines.append(f"case {case.case_id}: {case.calls} calls, {facts}")
    res = getattr(result, "resolution", None)
    if res is not None:
        mde = "—" if res.mde_pct is None else f"{res.mde_pct:.2f} %"
        lines.append(f"resolution: {res.status} (MDE {mde} at {res.planned_pairs} planned pairs)")
    lines += [f"warning {w.code}: {w.message}" for w in result.warnings]
    return lines


def _basis_text(basis: list[str]) -> str:
    return ", ".join(basis) if len(basis) <= 6 else f"{', '.join(basis[:6])} and {len(basis) - 6} more"


def dry_run_summary(plan: DryRun) -> list[str]:
    est = plan.estimate
    duration = "unknown" if est.p50_s is None else f"p50 {est.p50_s:.1f} s, p90 {est.p90_s or 0:.1f} s"
    lines = [
        f"{plan.invocation_id}: dedupe {plan.dedupe}, {plan.calls.total} calls "
        + ", ".join(f"{k} {v}" for k, v in sorted(plan.calls.by_role.items()))
        + (f", {plan.calls.restore_checks} conditional restore checks" if plan.restore_checks else ""),
        f"expected duration {duration}"
        + (f" (basis {_basis_text(est.basis)})" if est.basis else "")
        + (", scaled" if est.scaled else "")
        + (f", {len(est.unknown_steps)} steps without basis" if est.unknown_steps else ""),
    ]
    for step in plan.evidence_plan:
        pair = "" if step.pair_index is None else f" pair {step.pair_index} {step.order}"
        lines.append(
            f"  call {step.call_index}: {step.case_id}{pair} {'+'.join(step.roles)} ({step.lifecycle})"
        )
    return lines
