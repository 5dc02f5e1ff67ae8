"""Statistics through the engine (:mod:`gpuopt.stats`): the primary and secondary comparisons, constraints,
guardrails, per-case effects and the minimum effect's resolution against a noise record (spec §6.4, §6.6)."""

from __future__ import annotations

from typing import Any, Literal

from gpuopt import stats
from gpuopt.evaluation.analysis.pairs import Context, PairBuild
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import ResultRef
from gpuopt.models.evaluation.invocation import Warning
from gpuopt.models.evaluation.operations import NoiseResult, Resolution
from gpuopt.models.evaluation.statistics import (
    GuardrailOutcome,
    GuardrailViolation,
    Statistic,
    Statistics,
)
from gpuopt.models.evaluation.target import MetricDeclaration, Target

# ---- statistics --------------------------------------------------------------------------------------------


def sides(pairs: list[PairBuild], metric: str) -> tuple[list[list[float]], list[list[float]]]:
    return (
        [p.sides["reference"].samples[metric] for p in pairs],
        [p.sides["candidate"].samples[metric] for p in pairs],
    )


def _weights(target: Target, pairs: list[PairBuild]) -> dict[str, float] | None:
    weights = target.test_set.case_weights
    if weights is None:
        return None
    present = {p.case_id for p in pairs}
    return {c: w for c, w in weights.items() if c in present}


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


def compare_metric(
    ctx: Context, name: str, threshold: float, role: Literal["primary", "secondary"]
) -> Statistic:
    """One metric's comparison over the valid pairs: the engine's result and the pairs left out before it."""
    decl = ctx.target.metrics[name]
    pairs = ctx.valid_pairs()
    ref, cand = sides(pairs, name)
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
    return Statistic(role=role, n_invalid=len(ctx.pairs) - len(pairs), comparison=out.result)


def statistics(ctx: Context) -> Statistics:
    """Primary, constraints, guardrails and secondaries over the valid pairs."""
    objective = ctx.target.objective
    pairs = ctx.valid_pairs()
    primary = compare_metric(ctx, objective.primary, ctx.m, "primary")
    constraints = []
    for c in objective.constraints:
        decl = ctx.target.metrics[c.metric]
        ref, cand = sides(pairs, c.metric)
        constraints.append(
            stats.constraint(
                ref,
                cand,
                max_regression_pct=c.max_regression_pct,
                direction=decl.direction,
                **_common(ctx, decl, c.metric),
            )
        )
    guardrails = []
    for g in objective.guardrails:
        decl = ctx.target.metrics[g.metric]
        _, cand = sides(pairs, g.metric)
        res = stats.guardrail(cand, limit=g.limit, op=g.op, mode=g.mode, **_common(ctx, decl, g.metric))
        located = [
            GuardrailViolation(pair_index=pairs[i].pair_index, case_id=pairs[i].case_id, sample_index=k)
            for i, k in res.violations
        ]
        guardrails.append(GuardrailOutcome(result=res, violations=located))
    secondary = [compare_metric(ctx, s.metric, s.threshold_pct, "secondary") for s in objective.secondary]
    return Statistics(primary=primary, constraints=constraints, guardrails=guardrails, secondary=secondary)


# ---- resolution --------------------------------------------------------------------------------------------


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
    mde = stats.mde_pct(
        facts.sd_log, planned_pairs, confidence=s.confidence, power=s.power, estimator=s.estimator
    )
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
