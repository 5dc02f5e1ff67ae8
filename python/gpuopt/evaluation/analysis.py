"""From an executed plan to a result: pairs, statistics through the engine (:mod:`gpuopt.stats`), verdicts
per the outcome matrix (spec §6.5, §6.8), baseline facts, noise facts and the minimum effect's resolution.

Correctness first: a correctness (or contract, identity, binding) failure leaves the measurement invalid,
and its performance samples are kept but never interpreted (``statistics: null``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt.errors import InputError
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import ResultRef
from gpuopt.models.evaluation.invocation import FrozenRequest, InvocationResult, Warning
from gpuopt.models.evaluation.operations import (
    BaselineCase,
    BaselineMetric,
    BaselineResult,
    BindingStatus,
    CaseStat,
    ConstraintStat,
    ContaminationFacts,
    ElapsedFacts,
    FinalAuditResult,
    GuardrailStat,
    GuardrailViolation,
    NoiseAt,
    NoiseFacts,
    NoiseMetric,
    NoiseResult,
    OrderEffect,
    OriginalGuardrail,
    Pair,
    PairValue,
    PredictionCheck,
    Resolution,
    RestoreChecks,
    ScreenResult,
    Statistic,
    Statistics,
    TargetResult,
)
from gpuopt.models.evaluation.target import MetricDeclaration, Target

if TYPE_CHECKING:
    from gpuopt.evaluation.executor import Execution, ExecutionSpec
    from gpuopt.models.evaluation.experiment import Experiment
    from gpuopt.models.stats import Comparison


# ---- within-call summaries ---------------------------------------------------------------------------------

_QUANTILES = {"p90": 0.9, "p95": 0.95, "p99": 0.99}


def summarize(samples: list[float], how: str) -> float:
    """A call's value: its samples' median, mean, min, max or type-7 quantile (spec §6.1)."""
    import numpy as np

    values = np.asarray(samples, dtype=float)
    if how == "mean":
        return float(values.mean())
    if how == "min":
        return float(values.min())
    if how == "max":
        return float(values.max())
    return float(np.quantile(values, _QUANTILES.get(how, 0.5)))


def effect_log(reference: float, candidate: float, direction: str) -> float | None:
    """The log-ratio effect; > 0 means the candidate is better (spec §6.2)."""
    if reference <= 0 or candidate <= 0:
        return None
    return math.log(reference / candidate) if direction == "lower" else math.log(candidate / reference)


def cv(samples: list[float]) -> float | None:
    import numpy as np

    values = np.asarray(samples, dtype=float)
    mean = float(values.mean()) if len(values) else 0.0
    if len(values) < 2 or mean == 0:
        return None
    return float(values.std(ddof=1) / mean)


def median(values: list[float]) -> float | None:
    import numpy as np

    return float(np.median(values)) if values else None


# ---- the context of one invocation -------------------------------------------------------------------------


@dataclass
class _Side:
    call_index: int
    samples: dict[str, list[float]]
    passed: bool
    identity_equal: bool


@dataclass
class _PairBuild:
    pair_index: int
    case_id: str
    order: str
    calls: list[int] = field(default_factory=list)
    sides: dict[str, _Side] = field(default_factory=dict)
    failed_calls: list[str] = field(default_factory=list)
    contaminated: dict[str, list[str]] = field(default_factory=dict)
    """Contamination rule ids that fired, by the role of the contaminated window (``both`` for a
    same-process call)."""

    def contamination_rules(self) -> list[str]:
        return sorted({r for rules in self.contaminated.values() for r in rules})

    def contaminated_position(self) -> str | None:
        if not self.contaminated:
            return None
        keys = set(self.contaminated)
        return keys.pop() if len(keys) == 1 else "both"

    def invalid_reasons(self) -> list[str]:
        reasons = list(self.failed_calls)
        for role in ("reference", "candidate"):
            side = self.sides.get(role)
            if side is None:
                if not reasons:
                    reasons.append(f"{role}_missing")
            else:
                if not side.passed:
                    reasons.append(f"{role}_correctness_failed")
                if not side.identity_equal:
                    reasons.append(f"{role}_identity_changed")
        reasons.extend(r for r in self.contamination_rules() if r not in reasons)
        return reasons


class Context:
    """The frozen request, Target and (for comparisons) Experiment of an invocation, read once."""

    def __init__(self, spec: ExecutionSpec, ex: Execution) -> None:
        self.spec = spec
        self.ex = ex
        self.store = Store(Path(spec.store_root))

    @cached_property
    def request(self) -> FrozenRequest:
        from gpuopt.evaluation import invocation

        return invocation.read_request(self.store, self.spec.invocation_id)

    @cached_property
    def target(self) -> Target:
        from gpuopt.evaluation import target as targets

        return targets.optimizable(targets.load(self.store)[0])

    @cached_property
    def experiment(self) -> Experiment | None:
        from gpuopt.evaluation import experiment as experiments

        ref = getattr(self.request, "experiment", None)
        if ref is None:
            return None
        return experiments.load(self.store, ref)

    @property
    def m(self) -> float:
        return float(self.target.objective.minimum_effect_pct)

    @property
    def minimum_pairs(self) -> int:
        if self.spec.operation == "screen" and self.experiment is not None:
            return self.experiment.screen.minimum_pairs
        return self.target.statistics.minimum_pairs

    @cached_property
    def pairs(self) -> list[_PairBuild]:
        return build_pairs(self.spec, self.ex)

    def valid_pairs(self) -> list[_PairBuild]:
        return [p for p in self.pairs if not p.invalid_reasons()]

    def contamination(self) -> ContaminationFacts:
        from gpuopt.evaluation import sampling

        out = self.ex.sampling if self.ex.sampling is not None else sampling.not_checked(self.spec)
        by_rule: dict[str, int] = {}
        by_position: dict[str, int] = {}
        paired = [p for p in self.pairs if p.contaminated]
        for p in paired:
            for rule in p.contamination_rules():
                by_rule[rule] = by_rule.get(rule, 0) + 1
            position = p.contaminated_position()
            if position is not None:
                by_position[position] = by_position.get(position, 0) + 1
        calls = {k: v for k, v in out.per_call.items() if v}
        if not any(s.pair_index is not None for s in self.spec.evidence_plan):
            for rules in calls.values():  # no pairs (baseline): count the contaminated calls
                for rule in rules:
                    by_rule[rule] = by_rule.get(rule, 0) + 1
        return ContaminationFacts(
            **sampling.facts_fields(out),
            pairs_invalid=len(paired),
            by_rule=dict(sorted(by_rule.items())),
            by_position=dict(sorted(by_position.items())),
            calls_contaminated=len(calls),
        )

    def judge_contamination(self) -> None:
        """Spec §6.8, §7.2: fewer valid pairs than the minimum after contamination stops a valid measurement
        as ``contaminated``; contamination that hit only one role's windows is warned about."""
        ex = self.ex
        paired = [p for p in self.pairs if p.contaminated]
        if not paired:
            return
        positions = [p.contaminated_position() for p in paired]
        one_sided = {pos for pos in positions if pos in ("reference", "candidate")}
        if len(positions) >= ASYMMETRY_MIN_PAIRS and len(one_sided) == 1 and "both" not in positions:
            side = one_sided.pop()
            ex.warnings.append(
                Warning(
                    code="contamination_role_asymmetry",
                    message=f"all {len(positions)} contaminated pairs were contaminated in the {side}'s "
                    "window only: the remaining pairs may be biased",
                    observed=f"{side}: {len(positions)}",
                )
            )
        valid = len(self.valid_pairs())
        if (
            ex.execution_status == "succeeded"
            and ex.validity == "valid"
            and not ex.correctness_failed
            and valid < self.minimum_pairs
        ):
            ex.stop("succeeded", "contaminated")
            ex.warnings.append(
                Warning(
                    code="contaminated",
                    message=f"contamination left {valid} valid pairs, fewer than the minimum "
                    f"{self.minimum_pairs}",
                    expected=f">= {self.minimum_pairs}",
                    observed=str(valid),
                )
            )


ASYMMETRY_MIN_PAIRS = 3
"""``contamination_role_asymmetry`` needs at least this many contaminated pairs, all on one role."""


def build_pairs(spec: ExecutionSpec, ex: Execution) -> list[_PairBuild]:
    """Pairs (pair_index, case) from the calls that ran, in plan order; incomplete pairs are kept."""
    corr = {(c.call_index, c.role): c for c in ex.correctness}
    receipts = {r.call_index: r for r in ex.receipts}
    groups: dict[tuple[int, str], _PairBuild] = {}
    ran = {request.call_index for request, _ in ex.results}
    for receipt in ex.receipts:
        step = receipt.step
        if step.pair_index is None or step.order is None:
            continue
        key = (step.pair_index, step.case_id)
        build = groups.setdefault(key, _PairBuild(step.pair_index, step.case_id, step.order))
        build.calls.append(step.call_index)
        if receipt.contamination:
            position = step.roles[0] if len(step.roles) == 1 else "both"
            build.contaminated.setdefault(position, []).extend(receipt.contamination)
        if step.call_index not in ran:
            build.failed_calls.append(f"call_{receipt.stop_reason or receipt.status}")
    for request, result in ex.results:
        if request.pair is None:
            continue
        build = groups[(request.pair.index, request.case.id)]
        receipt = receipts[request.call_index]
        for subject in result.subjects:
            c = corr.get((request.call_index, subject.role))
            build.sides[subject.role] = _Side(
                call_index=request.call_index,
                samples={k: list(v.samples) for k, v in subject.measurements.items()},
                passed=c is not None and c.passed,
                identity_equal=receipt.identity_equal is not False,
            )
    return list(groups.values())


def pair_records(ctx: Context) -> list[Pair]:
    out = []
    metrics = ctx.target.metrics
    for p in ctx.pairs:
        values: dict[str, PairValue] = {}
        effects: dict[str, float] = {}
        ref, cand = p.sides.get("reference"), p.sides.get("candidate")
        if ref is not None and cand is not None:
            for name, decl in metrics.items():
                if name in ref.samples and name in cand.samples:
                    rv = summarize(ref.samples[name], decl.within_call)
                    cv_ = summarize(cand.samples[name], decl.within_call)
                    values[name] = PairValue(reference=rv, candidate=cv_)
                    ell = effect_log(rv, cv_, decl.direction)
                    if ell is not None:
                        effects[name] = ell
        reasons = p.invalid_reasons()
        out.append(
            Pair(
                pair_index=p.pair_index,
                case_id=p.case_id,
                order=p.order,  # type: ignore[arg-type]
                calls=p.calls,
                values=values,
                effects_log=effects,
                valid=not reasons,
                invalid_reasons=reasons,
            )
        )
    return out


# ---- statistics --------------------------------------------------------------------------------------------


def _sides(pairs: list[_PairBuild], metric: str) -> tuple[list[list[float]], list[list[float]]]:
    return (
        [p.sides["reference"].samples[metric] for p in pairs],
        [p.sides["candidate"].samples[metric] for p in pairs],
    )


def _weights(target: Target, pairs: list[_PairBuild]) -> dict[str, float] | None:
    weights = target.test_set.case_weights
    if weights is None:
        return None
    present = {p.case_id for p in pairs}
    return {c: w for c, w in weights.items() if c in present}


def _statistic(
    comparison: Comparison, *, role: str, n_invalid: int, threshold: float, effect_scale: str
) -> Statistic:
    c = comparison
    return Statistic.model_validate(
        {
            "metric": c.metric,
            "role": role,
            "n_valid": c.n,
            "n_invalid": n_invalid,
            "estimator": c.estimator,
            "ci_method": c.ci_method,
            "ci_method_run": c.ci_method_run,
            "confidence": c.confidence,
            "resamples": c.resamples,
            "seed": c.seed,
            "effect_scale": effect_scale,
            "estimate_log": c.estimate_log,
            "ci_low_log": c.ci_low_log,
            "ci_high_log": c.ci_high_log,
            "estimate_pct": c.estimate_pct,
            "ci_low_pct": c.ci_low_pct,
            "ci_high_pct": c.ci_high_pct,
            "change_pct": c.change_pct,
            "threshold_pct": threshold,
            "verdict": c.verdict,
            "verdict_reason": c.verdict_reason,
            "pairs_needed_estimate": c.pairs_needed_estimate,
            "warnings": [w.code for w in c.warnings],
        }
    )


def _common(ctx: Context, decl: MetricDeclaration, name: str) -> dict[str, Any]:
    s = ctx.target.statistics
    return {
        "estimator": s.estimator,
        "ci_method": s.ci_method,
        "confidence": s.confidence,
        "resamples": s.resamples,
        "seed": s.seed,
        "minimum_pairs": ctx.minimum_pairs,
        "within_call": decl.within_call,
        "metric": name,
        "scope": ctx.spec.request_digest,
    }


def compare_metric(ctx: Context, name: str, threshold: float, role: str) -> tuple[Statistic, Comparison]:
    from gpuopt import stats

    decl = ctx.target.metrics[name]
    pairs = ctx.valid_pairs()
    ref, cand = _sides(pairs, name)
    out = stats.compare(
        ref,
        cand,
        direction=decl.direction,
        min_effect=threshold,
        effect_scale=ctx.target.statistics.effect_scale,
        power=ctx.target.statistics.power,
        cases=[p.case_id for p in pairs],
        case_weights=_weights(ctx.target, pairs),
        orders=[p.order for p in pairs],
        **_common(ctx, decl, name),
    )
    n_invalid = len(ctx.pairs) - len(pairs)
    statistic = _statistic(
        out.result,
        role=role,
        n_invalid=n_invalid,
        threshold=threshold,
        effect_scale=ctx.target.statistics.effect_scale,
    )
    return statistic, out.result


def statistics(ctx: Context) -> Statistics:
    """Primary, constraints, guardrails and secondaries over the valid pairs."""
    from gpuopt import stats

    objective = ctx.target.objective
    pairs = ctx.valid_pairs()
    n_invalid = len(ctx.pairs) - len(pairs)
    primary, comparison = compare_metric(ctx, objective.primary, ctx.m, "primary")
    constraints = []
    for c in objective.constraints:
        decl = ctx.target.metrics[c.metric]
        ref, cand = _sides(pairs, c.metric)
        res = stats.constraint(
            ref,
            cand,
            max_regression_pct=c.max_regression_pct,
            direction=decl.direction,
            **_common(ctx, decl, c.metric),
        )
        constraints.append(
            ConstraintStat(
                metric=c.metric,
                max_regression_pct=c.max_regression_pct,
                n_valid=res.n,
                n_invalid=n_invalid,
                regression_estimate_pct=res.regression_estimate,
                regression_ci_low_pct=res.regression_ci_low,
                regression_ci_high_pct=res.regression_ci_high,
                status=res.status,
            )
        )
    guardrails = []
    for g in objective.guardrails:
        decl = ctx.target.metrics[g.metric]
        _, cand = _sides(pairs, g.metric)
        res_g = stats.guardrail(cand, limit=g.limit, op=g.op, mode=g.mode, **_common(ctx, decl, g.metric))
        guardrails.append(
            GuardrailStat(
                metric=g.metric,
                op=g.op,
                limit=g.limit,
                mode=g.mode,
                n_valid=res_g.n,
                estimate=res_g.estimate,
                ci_low=res_g.ci_low,
                ci_high=res_g.ci_high,
                violations=[
                    GuardrailViolation(
                        pair_index=pairs[i].pair_index, case_id=pairs[i].case_id, sample_index=k
                    )
                    for i, k in res_g.violations
                ],
                status=res_g.status,
            )
        )
    secondary = [compare_metric(ctx, s.metric, s.threshold_pct, "secondary")[0] for s in objective.secondary]
    per_case = [
        CaseStat(
            case_id=c.case_id,
            n_valid=c.n,
            estimate_pct=c.estimate_pct,
            ci_low_pct=c.ci_low_pct,
            ci_high_pct=c.ci_high_pct,
        )
        for c in comparison.per_case
    ]
    order = comparison.orders
    return Statistics(
        primary=primary,
        constraints=constraints,
        guardrails=guardrails,
        secondary=secondary,
        per_case=per_case,
        order_effect=None
        if order is None
        else OrderEffect(
            ab_pairs=order.ab_pairs, ba_pairs=order.ba_pairs, order_effect_pct=order.order_effect_pct
        ),
    )


# ---- resolution --------------------------------------------------------------------------------------------


def mde_pct(sd_log: float, n: int, *, confidence: float, power: float, estimator: str) -> float:
    """MDE(n) = (z_c + z_p)·k·s/√n on the log scale, as a percentage (spec §6.6, normal approximation)."""
    from statistics import NormalDist

    z_c = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    z_p = NormalDist().inv_cdf(power)
    k = 1.0 if estimator == "mean" else math.sqrt(math.pi / 2)
    return 100.0 * (math.exp((z_c + z_p) * k * sd_log / math.sqrt(max(n, 1))) - 1.0)


def resolution(store: Store, target: Target, noise_ref: ResultRef | None, planned_pairs: int) -> Resolution:
    m = float(target.objective.minimum_effect_pct)
    if noise_ref is None:
        return Resolution(
            noise_ref=None,
            planned_pairs=planned_pairs,
            mde_pct=None,
            minimum_effect_pct=m,
            status="no_noise_record",
            method="normal_approx",
        )
    noise, _ = store.read_record(
        f"invocations/{noise_ref.invocation_id}/result.json",
        NoiseResult,
        what="noise result",
        sha256=noise_ref.sha256,
    )
    facts = None if noise.noise is None else noise.noise.metrics.get(target.objective.primary)
    if facts is None:
        return Resolution(
            noise_ref=noise_ref,
            planned_pairs=planned_pairs,
            mde_pct=None,
            minimum_effect_pct=m,
            status="no_noise_record",
            method="normal_approx",
        )
    s = target.statistics
    mde = mde_pct(facts.sd_log, planned_pairs, confidence=s.confidence, power=s.power, estimator=s.estimator)
    return Resolution(
        noise_ref=noise_ref,
        planned_pairs=planned_pairs,
        mde_pct=mde,
        minimum_effect_pct=m,
        status="below_mde" if m < mde else "resolvable",
        method="normal_approx",
    )


def resolution_warning(res: Resolution) -> Warning | None:
    if res.status != "below_mde" or res.mde_pct is None:
        return None
    return Warning(
        code="minimum_effect_below_mde",
        message=(
            f"the minimum effect {res.minimum_effect_pct:g} % is below the MDE {res.mde_pct:.3g} % that the "
            f"noise record predicts at {res.planned_pairs} pairs"
        ),
        expected=f">= {res.mde_pct:.6g}",
        observed=f"{res.minimum_effect_pct:g}",
    )


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
                    median=float(median([summarize(c, decl.within_call) for c in calls]) or 0.0),
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
                    else ElapsedFacts(median=float(median(elapsed) or 0.0), p90=_p90(elapsed)),
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


def _p90(values: list[float]) -> float:
    import numpy as np

    return float(np.quantile(np.asarray(values, dtype=float), 0.9))


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
        from gpuopt import stats

        pairs = ctx.valid_pairs()
        n = len(pairs)
        s = ctx.target.statistics
        out: dict[str, NoiseMetric] = {}
        for name, decl in ctx.target.metrics.items():
            if decl.zero_allowed:
                continue
            ref, cand = _sides(pairs, name)
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


def _binding(ctx: Context) -> BindingStatus:
    binding = getattr(ctx.request, "reference_binding", None)
    stale = ctx.ex.stop_reason == "stale_reference"
    return BindingStatus(
        selection=None if binding is None else binding.selection,
        pointer_sha256=None if binding is None else binding.pointer_sha256,
        status="stale" if stale else "current",
    )


def _comparison_common(ctx: Context) -> tuple[dict[str, Any], Statistics | None]:
    ex = ctx.ex
    ctx.judge_contamination()
    stats_ = statistics(ctx) if _measured(ex) else None
    plan = ctx.request.plan
    planned = (plan.pairs or 0) * len(plan.case_ids)
    res = resolution(ctx.store, ctx.target, getattr(ctx.request, "noise", None), planned)
    warning = resolution_warning(res)
    if warning is not None:
        ex.warnings.append(warning)
    fields: dict[str, Any] = {
        "pairs": pair_records(ctx),
        "performance_interpreted": stats_ is not None,
        "contamination": ctx.contamination(),
        "reference_binding": _binding(ctx),
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
                "experiment": ctx.request.experiment,  # type: ignore[attr-defined]
                "mechanism": experiment.mechanism,
                "screen_claim": claim,
            }
        )
        return _judged(ctx, fields, judgment)


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
        fields, stats_ = _comparison_common(ctx)
        judgment = formal_judgment(ctx.ex, stats_, ctx.m, ctx.minimum_pairs)
        fields.update(
            {
                "experiment": ctx.request.experiment,  # type: ignore[attr-defined]
                "mechanism": experiment.mechanism,
                "screen_gate": list(ctx.request.screens),  # type: ignore[attr-defined]
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
                "champion": ctx.request.champion,  # type: ignore[attr-defined]
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


HANDLERS: dict[str, Any] = {
    "baseline": BaselineHandler(),
    "noise": NoiseHandler(),
    "screen": ScreenHandler(),
    "target": TargetHandler(),
    "final_audit": FinalAuditHandler(),
}


def mark_stale(result: InvocationResult, *, observed: str | None) -> InvocationResult:
    """A bound result whose Champion moved before publication: measurement invalid, not evaluated. A result
    that was already not evaluated (refused, failed, timed out) keeps its stop reason."""
    update: dict[str, Any] = {
        "measurement_validity": "invalid",
        "verdict": "not_evaluated",
        "stop_reason": "stale_reference" if result.verdict != "not_evaluated" else result.stop_reason,
        "warnings": [
            *result.warnings,
            Warning(
                code="stale_reference",
                message="the Champion changed before this result was published",
                observed=observed,
            ),
        ],
    }
    binding = getattr(result, "reference_binding", None)
    if isinstance(binding, BindingStatus):
        update["reference_binding"] = binding.model_copy(update={"status": "stale"})
    if hasattr(result, "performance_interpreted"):
        update["performance_interpreted"] = False
    if hasattr(result, "statistics"):
        update["statistics"] = None
    return type(result).model_validate({**result.model_dump(), **update})
