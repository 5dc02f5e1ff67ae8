"""The unpaired gate: this invocation's calls of the current code against a baseline's saved calls.

Each case is compared on its own (an unpaired comparison has no strata, and cases of different sizes must
not be pooled): the engine's unpaired comparison (``gpuopt.stats``, the Target's estimator, CI method,
confidence, resamples, seed and minimum count, applied to each side) over one value per call, each call a
separate process. The dependence rules of ``references/stats.md`` apply with the *session* (the invocation a
call ran in) as the block: the engine diagnoses each side's sessions, and

- when the baseline's sessions disagree with each other (``dependent_samples_suspected``), the variation
  between sessions exceeds what the CI holds, so an effect between this session and the saved ones cannot
  be told from it: that case is ``inconclusive``;
- a side from one session (``blocks_too_few``: always this side) is stated as a reason: the CI holds the
  variation between calls, not between sessions.

A call counts when it completed, passed correctness, kept the Target's runtime identity and no
contamination rule fired in its window; when contamination leaves a case with fewer calls than the minimum,
the measurement is invalid (``contaminated``), as a comparison's would be.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from gpuopt import stats
from gpuopt.errors import InputError
from gpuopt.evaluation.analysis.pairs import Context
from gpuopt.evaluation.analysis.statistics import resolution
from gpuopt.evaluation.gate import judge
from gpuopt.evaluation.gate.store import read_baseline
from gpuopt.models.evaluation.frozen import GateCore
from gpuopt.models.evaluation.gate import (
    GateOutcome,
    GateReason,
    UnpairedComparison,
    UnpairedStatistics,
)
from gpuopt.models.evaluation.invocation import Warning
from gpuopt.models.evaluation.statistics import GuardrailOutcome, Statistic
from gpuopt.models.stats import CompareOptions, Comparison

Calls = dict[str, list[tuple[str, int, dict[str, float]]]]
"""Per case: (session, call index, within-call value per metric)."""


def current_calls(ctx: Context) -> tuple[Calls, int]:
    """This invocation's valid candidate calls per case, and how many were contaminated."""
    ex = ctx.ex
    passed = {(c.call_index, c.role) for c in ex.correctness if c.passed}
    receipts = {r.call_index: r for r in ex.receipts}
    out: Calls = defaultdict(list)
    contaminated = 0
    for request, result in ex.results:
        receipt = receipts.get(request.call_index)
        if receipt is None or receipt.identity_equal is False:
            continue
        if receipt.contamination:
            contaminated += 1
            continue
        for subject in result.subjects:
            if subject.role != "candidate" or (request.call_index, "candidate") not in passed:
                continue
            values = {
                name: float(stats.summarize([list(m.samples)], ctx.target.metrics[name].within_call)[0])
                for name, m in subject.measurements.items()
                if name in ctx.target.metrics
            }
            out[request.case.id].append((ctx.spec.invocation_id, request.call_index, values))
    return out, contaminated


def _rows(calls: list[tuple[str, int, dict[str, float]]], metric: str) -> str:
    return "".join(
        json.dumps({"call": f"{s}/{i}", "session": s, "value": v[metric]}) + "\n"
        for s, i, v in calls
        if metric in v
    )


def compare(
    ctx: Context,
    base: list[tuple[str, int, dict[str, float]]],
    cur: list[tuple[str, int, dict[str, float]]],
    metric: str,
    threshold: float,
    case_id: str,
) -> Comparison:
    """The engine's unpaired comparison of one metric in one case, sessions diagnosed as blocks."""
    decl = ctx.target.metrics[metric]
    s = ctx.target.statistics
    options = CompareOptions(
        metric=metric,
        direction=decl.direction,
        minimum_effect_pct=threshold,
        within_call=decl.within_call,
        confidence=s.confidence,
        resamples=s.resamples,
        minimum_pairs=s.minimum_pairs,
        seed=s.seed,
        estimator=s.estimator,
        ci_method=s.ci_method,
        effect_scale=s.effect_scale,
        power=s.power,
        scope=f"{ctx.spec.request_digest}/{case_id}",
    )
    with tempfile.TemporaryDirectory(prefix="gpuopt-gate-") as tmp:
        b, c = Path(tmp) / "baseline.jsonl", Path(tmp) / "current.jsonl"
        b.write_text(_rows(base, metric), encoding="utf-8")
        c.write_text(_rows(cur, metric), encoding="utf-8")
        return stats.compare_files(
            b, c, column="value", key_column="call", unpaired=True, options=options
        ).result


def _dependence(comparison: Comparison, case_id: str) -> tuple[list[GateReason], bool]:
    codes = {w.code: w.message for w in comparison.warnings}
    reasons = []
    suspected = "dependent_samples_suspected" in codes
    for code, outcome in (("dependent_samples_suspected", "inconclusive"), ("blocks_too_few", None)):
        if code in codes:
            reasons.append(
                judge.reason(code, codes[code], outcome, metric=comparison.metric, case_id=case_id)  # type: ignore[arg-type]
            )
    return reasons, suspected


def _guardrails(ctx: Context, cur: Calls) -> list[GuardrailOutcome]:
    out = []
    calls = [v for case in cur.values() for v in case]
    s = ctx.target.statistics
    for g in ctx.target.objective.guardrails:
        values = [[v[g.metric]] for _, _, v in calls if g.metric in v]
        result = stats.guardrail(
            values,
            limit=g.limit,
            op=g.op,
            mode=g.mode,
            estimator=s.estimator,
            ci_method=s.ci_method,
            confidence=s.confidence,
            resamples=s.resamples,
            seed=s.seed,
            minimum_pairs=s.minimum_pairs,
            within_call=ctx.target.metrics[g.metric].within_call,
            metric=g.metric,
            scope=ctx.spec.request_digest,
        )
        out.append(GuardrailOutcome(result=result, violations=[]))
    return out


def _judge_case(
    ctx: Context, base: Any, cur: Any, case_id: str
) -> tuple[list[UnpairedComparison], list[GateOutcome], list[GateReason]]:
    comparisons: list[UnpairedComparison] = []
    outcomes: list[GateOutcome] = []
    reasons: list[GateReason] = []
    objective = ctx.target.objective
    checks = [(objective.primary, ctx.m, "primary")]
    checks += [(c.metric, c.max_regression_pct, "constraint") for c in objective.constraints]
    for metric, threshold, role in checks:
        try:
            comparison = compare(ctx, base, cur, metric, threshold, case_id)
        except InputError as exc:
            ctx.ex.warnings.append(Warning(code=exc.code, message=f"{case_id} {metric}: {exc.message}"))
            outcomes.append("inconclusive")
            reasons.append(
                judge.reason(exc.code, exc.message, "inconclusive", metric=metric, case_id=case_id)
            )
            continue
        rule = judge.rule(comparison, threshold, ctx.target.statistics.minimum_pairs)
        outcome = rule.outcome
        if role == "constraint" and outcome == "improvement":
            outcome = "pass"
        dependence, suspected = _dependence(comparison, case_id)
        if suspected and outcome != "inconclusive":
            outcome = "inconclusive"
        outcomes.append(outcome)
        reasons.append(
            judge.reason(
                f"{role}_{rule.code}",
                f"{case_id}: " + judge.describe(comparison, threshold, role),
                outcome,
                metric=metric,
                case_id=case_id,
            )
        )
        reasons.extend(dependence)
        comparisons.append(
            UnpairedComparison(
                case_id=case_id,
                role=role,  # type: ignore[arg-type]
                threshold_pct=threshold,
                statistic=Statistic(
                    role="primary" if role == "primary" else "secondary", n_invalid=0, comparison=comparison
                ),
            )
        )
    return comparisons, outcomes, reasons


def fields(ctx: Context, core: GateCore) -> dict[str, Any]:
    """The unpaired gate's result fields (see the module docstring)."""
    ex = ctx.ex
    assert core.gate.baseline is not None
    saved = read_baseline(ctx.store, core.gate.baseline).samples
    assert saved is not None
    base: Calls = defaultdict(list)
    for call in saved.calls:
        base[call.case_id].append((call.session, call.call_index, dict(call.values)))
    cur, contaminated = current_calls(ctx)
    cases = list(core.plan.case_ids)
    minimum = ctx.target.statistics.minimum_pairs
    if contaminated and judge.not_judged(ex) is None and any(len(cur.get(c, [])) < minimum for c in cases):
        ex.stop("succeeded", "contaminated")
        ex.warnings.append(
            Warning(
                code="contaminated",
                message=f"contamination voided {contaminated} calls, leaving a case below the minimum "
                f"{minimum} calls",
                expected=f">= {minimum} calls per case",
                observed=", ".join(f"{c}: {len(cur.get(c, []))}" for c in cases),
            )
        )
    arithmetic = ctx.target.statistics.effect_scale == "arithmetic_pct"
    stopped = judge.not_judged(ex)
    comparisons: list[UnpairedComparison] = []
    statistics = None
    if stopped is not None:
        judgment = judge.judgment(stopped[0], ctx.m, arithmetic, [stopped[1]])
    else:
        outcomes: list[GateOutcome] = []
        reasons: list[GateReason] = []
        for case_id in cases:
            found, o, r = _judge_case(ctx, base.get(case_id, []), cur.get(case_id, []), case_id)
            comparisons += found
            outcomes += o
            reasons += r
        guardrails = _guardrails(ctx, cur)
        for g in guardrails:
            outcome = judge.status_outcome(g.status)
            outcomes.append(outcome)
            reasons.append(
                judge.reason(
                    f"guardrail_{g.status}", f"guardrail {g.metric}: {g.status}", outcome, metric=g.metric
                )
            )
        judgment = judge.judgment(judge.combine(outcomes), ctx.m, arithmetic, reasons)
        statistics = UnpairedStatistics(
            comparisons=comparisons,
            guardrails=guardrails,
            calls_baseline={c: len(base.get(c, [])) for c in cases},
            calls_current={c: len(cur.get(c, [])) for c in cases},
        )
    calls = (core.plan.calls_per_case or 0) * len(cases)
    return {
        "pairs": [],
        "performance_interpreted": statistics is not None,
        "contamination": ctx.contamination(),
        "gate": core.gate,
        "statistics": None,
        "unpaired": statistics,
        "resolution": resolution(ctx.store, ctx.target, core.noise, calls),
        "judgment": judgment,
    }
