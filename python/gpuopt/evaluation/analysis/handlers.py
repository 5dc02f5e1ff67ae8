"""The operation handlers (baseline, noise, screen, target, final audit): each turns an executed plan into
its verdict and result fields. The operations registry (:mod:`gpuopt.evaluation.registry`) names each one;
the supervisor's entry point hands it to the runner."""

from __future__ import annotations

from typing import Any

from gpuopt import stats
from gpuopt.errors import InputError
from gpuopt.evaluation.analysis.pairs import Context, cv, median, pair_records
from gpuopt.evaluation.analysis.statistics import resolution, resolution_warning, sides, statistics
from gpuopt.evaluation.analysis.verdicts import Judgment, formal_judgment, prediction, screen_judgment
from gpuopt.evaluation.execution import Execution, ExecutionSpec
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.frozen import BoundCore, FinalAuditCore, ScreenCore, TargetCore
from gpuopt.models.evaluation.invocation import InvocationResult, Warning
from gpuopt.models.evaluation.operations import (
    BaselineCase,
    BaselineMetric,
    BaselineResult,
    BindingStatus,
    ElapsedFacts,
    FinalAuditResult,
    NoiseAt,
    NoiseFacts,
    NoiseMetric,
    NoiseResult,
    OriginalGuardrail,
    RestoreChecks,
    ScreenResult,
    TargetResult,
)
from gpuopt.models.evaluation.statistics import Statistics

# ---- handlers ----------------------------------------------------------------------------------------------


def _ctx(spec: ExecutionSpec, ex: Execution) -> Context:
    ctx = ex.analysis.get("context")
    if not isinstance(ctx, Context):
        ctx = Context(spec, ex)
        ex.analysis["context"] = ctx
    return ctx


def _measured(ex: Execution) -> bool:
    return ex.validity == "valid" and not ex.correctness_failed


class _Handler:
    result_model: type[InvocationResult] = InvocationResult

    def fields(self, ctx: Context) -> dict[str, Any]:
        raise NotImplementedError

    def verdict(self, spec: ExecutionSpec, ex: Execution) -> str:
        ctx = _ctx(spec, ex)
        self._computed(ctx)
        return str(ex.analysis["verdict"])

    def extra_fields(self, spec: ExecutionSpec, ex: Execution) -> dict[str, Any]:
        ctx = _ctx(spec, ex)
        return self._computed(ctx)

    def _computed(self, ctx: Context) -> dict[str, Any]:
        cached = ctx.ex.analysis.get("fields")
        if isinstance(cached, dict):
            return cached
        out = self.fields(ctx)
        ctx.ex.analysis["fields"] = out
        return out


class BaselineHandler(_Handler):
    """Isolated original calls per case: per-case facts and the original's guardrail facts; no effects."""

    result_model = BaselineResult

    def fields(self, ctx: Context) -> dict[str, Any]:
        ex = ctx.ex
        ex.analysis["verdict"] = (
            "failed" if ex.correctness_failed else ("passed" if ex.validity == "valid" else "not_evaluated")
        )
        plan_cases = list(dict.fromkeys(s.case_id for s in ctx.spec.evidence_plan))
        metrics = ctx.target.metrics
        by_case: dict[str, list[tuple[int, dict[str, list[float]]]]] = {c: [] for c in plan_cases}
        for request, result in ex.results:
            for subject in result.subjects:
                samples = {k: list(v.samples) for k, v in subject.measurements.items()}
                by_case.setdefault(request.case.id, []).append((request.call_index, samples))
        cases = []
        for case in plan_cases:
            elapsed = [r.elapsed_s for r in ex.receipts if r.step.case_id == case and r.status == "completed"]
            facts: dict[str, BaselineMetric] = {}
            for name, decl in metrics.items():
                calls = [s[name] for _, s in by_case.get(case, []) if name in s]
                if not calls:
                    continue
                flat = [v for c in calls for v in c]
                cvs = [x for x in (cv(c) for c in calls) if x is not None]
                facts[name] = BaselineMetric(
                    unit=decl.unit,
                    median=float(median(stats.summarize(calls, decl.within_call)) or 0.0),
                    min=min(flat),
                    max=max(flat),
                    within_call_cv_median=median(cvs),
                )
            cases.append(
                BaselineCase(
                    case_id=case,
                    calls=len(by_case.get(case, [])),
                    elapsed_s=None
                    if not elapsed
                    else ElapsedFacts(
                        median=float(median(elapsed) or 0.0), p90=stats.summarize([elapsed], "p90")[0]
                    ),
                    metrics=facts,
                )
            )
        guardrails = []
        for g in ctx.target.objective.guardrails:
            checked = [(i, s[g.metric]) for c in by_case.values() for i, s in c if g.metric in s]
            bad = [
                i
                for i, samples in checked
                if any((v > g.limit) if g.op == "le" else (v < g.limit) for v in samples)
            ]
            guardrails.append(
                OriginalGuardrail(
                    metric=g.metric, op=g.op, limit=g.limit, calls_checked=len(checked), calls_violating=bad
                )
            )
            if bad:
                ex.warnings.append(
                    Warning(
                        code="original_violates_guardrail",
                        message=f"the original violates the guardrail {g.metric} {g.op} {g.limit:g} "
                        f"in {len(bad)} of {len(checked)} calls",
                        expected=f"{g.op} {g.limit:g}",
                        observed=f"calls {bad[:20]}",
                    )
                )
        return {
            "cases": cases,
            "original_guardrails": guardrails,
            "contamination": ctx.contamination(),
        }


def _elapsed(elapsed: list[float]) -> ElapsedFacts:
    return ElapsedFacts(median=float(median(elapsed) or 0.0), p90=stats.summarize([elapsed], "p90")[0])


class NoiseHandler(_Handler):
    """A/A: the original against itself; SD, half-width and MDE; ``aa_effect_detected`` when its CI
    excludes 0."""

    result_model = NoiseResult

    def fields(self, ctx: Context) -> dict[str, Any]:
        ex = ctx.ex
        ctx.judge_contamination()
        ex.analysis["verdict"] = (
            "failed" if ex.correctness_failed else ("passed" if ex.validity == "valid" else "not_evaluated")
        )
        facts = None
        if _measured(ex):
            facts = self._noise(ctx)
        return {
            "pairs": pair_records(ctx),
            "performance_interpreted": facts is not None,
            "contamination": ctx.contamination(),
            "noise": facts,
        }

    def _noise(self, ctx: Context) -> NoiseFacts | None:
        pairs = ctx.valid_pairs()
        n = len(pairs)
        s = ctx.target.statistics
        out: dict[str, NoiseMetric] = {}
        for name, decl in ctx.target.metrics.items():
            if decl.zero_allowed:
                continue
            ref, cand = sides(pairs, name)
            try:
                report = stats.noise(
                    ref,
                    cand,
                    at=sorted({n, s.minimum_pairs, 2 * n}),
                    min_effect=ctx.m,
                    estimator=s.estimator,
                    confidence=s.confidence,
                    power=s.power,
                    resamples=s.resamples,
                    seed=s.seed,
                    minimum_pairs=s.minimum_pairs,
                    within_call=decl.within_call,
                    metric=name,
                    orders=[p.order for p in pairs],
                ).report
            except InputError as exc:
                ctx.ex.warnings.append(Warning(code=exc.code, message=f"noise of {name}: {exc.message}"))
                continue
            aa = report.aa
            for w in report.warnings:
                ctx.ex.warnings.append(Warning(code=w.code, message=f"{name}: {w.message}"))
            cvs = [x for x in (cv(c) for c in [*ref, *cand]) if x is not None]
            out[name] = NoiseMetric(
                metric=name,
                n_pairs=report.n,
                sd_log=report.sd_log,
                robust_sd_log=report.robust_sd_log,
                aa_estimate_pct=aa.estimate_pct,
                aa_ci_low_pct=aa.ci_low_pct,
                aa_ci_high_pct=aa.ci_high_pct,
                aa_verdict=aa.verdict,
                at=[
                    NoiseAt(
                        n_pairs=a.n_pairs,
                        half_width_pct=a.half_width_pct,
                        mde_pct=a.mde_pct,
                        robust_half_width_pct=a.robust_half_width_pct,
                        robust_mde_pct=a.robust_mde_pct,
                    )
                    for a in report.at
                ],
                pairs_for_minimum_effect=report.pairs_for_minimum_effect,
                robust_pairs_for_minimum_effect=report.robust_pairs_for_minimum_effect,
                order_effect_pct=None if aa.orders is None else aa.orders.order_effect_pct,
                within_call_cv_median=median(cvs),
                method="normal_approx",
            )
        request = ctx.request
        return NoiseFacts(
            lifecycle=request.plan.lifecycle,
            samples_per_call=request.plan.samples_per_call,
            metrics=out,
        )


def _binding(ctx: Context, request: BoundCore) -> BindingStatus:
    binding = request.reference_binding
    stale = ctx.ex.stop_reason == "stale_reference"
    return BindingStatus(
        selection=binding.selection,
        pointer_sha256=binding.pointer_sha256,
        status="stale" if stale else "current",
    )


def _comparison_common(ctx: Context) -> tuple[dict[str, Any], Statistics | None]:
    ex = ctx.ex
    request = ctx.core(BoundCore)
    ctx.judge_contamination()
    stats_ = statistics(ctx) if _measured(ex) else None
    plan = request.plan
    planned = (plan.pairs or 0) * len(plan.case_ids)
    res = resolution(ctx.store, ctx.target, request.noise, planned)
    warning = resolution_warning(res)
    if warning is not None:
        ex.warnings.append(warning)
    fields: dict[str, Any] = {
        "pairs": pair_records(ctx),
        "performance_interpreted": stats_ is not None,
        "contamination": ctx.contamination(),
        "reference_binding": _binding(ctx, request),
        "statistics": stats_,
        "resolution": res,
    }
    return fields, stats_


def _judged(ctx: Context, fields: dict[str, Any], judgment: Judgment) -> dict[str, Any]:
    ctx.ex.analysis["verdict"] = judgment.verdict
    if judgment.verdict != "not_evaluated":
        fields["stop_reason"] = judgment.stop_reason
    return fields


class ScreenHandler(_Handler):
    result_model = ScreenResult

    def fields(self, ctx: Context) -> dict[str, Any]:
        experiment = ctx.experiment
        assert experiment is not None
        fields, stats_ = _comparison_common(ctx)
        judgment = screen_judgment(ctx.ex, stats_, ctx.m, experiment)
        claim = "undecided"
        if judgment.verdict == "rejected":
            claim = "contradicted"
        elif stats_ is not None and stats_.primary.verdict == "improved":
            claim = "supported"
        fields.update(
            {
                "experiment": ctx.core(ScreenCore).experiment,
                "mechanism": experiment.mechanism,
                "screen_claim": claim,
            }
        )
        return _judged(ctx, fields, judgment)


def formal_attempts(store: Store, candidate_digest: str, this: str) -> int:
    """Target results for this candidate digest across Experiments, counting this one."""
    targets_for_digest = set()
    results = set()
    for line in store.ledger():
        if line.kind == "invocation" and line.keys.get("operation") == "target":
            if line.keys.get("candidate_digest") == candidate_digest:
                targets_for_digest.add(line.id)
        elif line.kind == "result":
            results.add(line.id)
    return len((targets_for_digest & results) - {this}) + 1


class TargetHandler(_Handler):
    result_model = TargetResult

    def fields(self, ctx: Context) -> dict[str, Any]:
        experiment = ctx.experiment
        assert experiment is not None
        request = ctx.core(TargetCore)
        fields, stats_ = _comparison_common(ctx)
        judgment = formal_judgment(ctx.ex, stats_, ctx.m, ctx.minimum_pairs)
        fields.update(
            {
                "experiment": request.experiment,
                "mechanism": experiment.mechanism,
                "screen_gate": list(request.screens),
                "prediction_check": prediction(experiment, stats_),
                "formal_attempts": formal_attempts(
                    ctx.store, experiment.candidate.digest, ctx.spec.invocation_id
                ),
                "inconclusive_because": judgment.inconclusive_because,
            }
        )
        return _judged(ctx, fields, judgment)


class FinalAuditHandler(_Handler):
    result_model = FinalAuditResult

    def fields(self, ctx: Context) -> dict[str, Any]:
        ex = ctx.ex
        fields, stats_ = _comparison_common(ctx)
        judgment = formal_judgment(ex, stats_, ctx.m, ctx.minimum_pairs)
        original = ctx.spec.variants["original"].digest
        planned = [s.case_id for s in ctx.spec.restore_checks]
        restore_calls = {s.call_index for s in ctx.spec.restore_checks}
        shown = {
            case: any(
                c.passed and c.digest == original and c.role != "candidate" and c.case_id == case
                for c in ex.correctness
            )
            for case in planned
        }
        candidate_failed = any(c.role == "candidate" and not c.passed for c in ex.correctness)
        supported = all(shown.values()) if candidate_failed else judgment.verdict == "rejected"
        fields.update(
            {
                "champion": ctx.core(FinalAuditCore).champion,
                "inconclusive_because": judgment.inconclusive_because,
                "restore_checks": RestoreChecks(
                    planned=planned,
                    ran=[r.call_index for r in ex.receipts if r.call_index in restore_calls],
                    original_passed=shown,
                ),
                "restore_supported": supported,
            }
        )
        return _judged(ctx, fields, judgment)
