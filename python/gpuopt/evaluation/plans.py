"""Evidence plans (spec §3.1, §4.5, §6.7) and the expected duration of a plan from earlier calls.

A comparison plan is frozen before any call: for pair p the seeded balanced schedule gives its order
(``AB`` = reference first); pairs → cases in plan order → roles in order. ``isolated`` makes two calls per
pair (one subject each, back to back), ``same_process`` one call with both subjects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuopt.errors import InputError
from gpuopt.evaluation.records import read_request, read_result
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import Role
from gpuopt.models.evaluation.evaluation_data import Estimate
from gpuopt.models.evaluation.invocation import EvidenceStep, InvocationResult
from gpuopt.models.evaluation.target import MetricDeclaration, Target

QUANTILE_SAMPLES = {"p90": 100, "p95": 200, "p99": 1000}
"""A within-call quantile q needs at least ceil(10/(1-q)) samples per call."""


def case_ids(target: Target, requested: list[str] | None) -> list[str]:
    """The plan's cases: a subset of the Target's, order kept (default all)."""
    cases = list(target.test_set.case_ids) if requested is None else list(requested)
    if not cases:
        raise InputError("plan_invalid", "the plan names no case", path="plan.case_ids")
    for i, c in enumerate(cases):
        if c not in target.test_set.case_ids:
            raise InputError(
                "case_unknown",
                f"case {c} is not in the Target's test set",
                path=f"plan.case_ids[{i}]",
                expected=", ".join(target.test_set.case_ids),
                observed=c,
            )
    if len(set(cases)) != len(cases):
        raise InputError("plan_invalid", "a case is listed twice", path="plan.case_ids")
    return cases


def check_samples(metrics: dict[str, MetricDeclaration], samples_per_call: int) -> None:
    """A metric summarized by a within-call quantile needs enough samples per call (``plan_invalid``)."""
    for name, m in sorted(metrics.items()):
        need = QUANTILE_SAMPLES.get(m.within_call)
        count = m.samples_per_call if m.samples_per_call is not None else samples_per_call
        if need is not None and count < need:
            raise InputError(
                "plan_invalid",
                f"metric {name} is summarized by {m.within_call} and needs >= {need} samples per call",
                path="plan.samples_per_call",
                expected=f">= {need}",
                observed=str(count),
            )


def single_steps(cases: list[str], calls_per_case: int, role: Role, start: int = 0) -> list[EvidenceStep]:
    """Isolated one-subject calls, case by case (baseline, restore checks)."""
    steps = []
    index = start
    for case in cases:
        for _ in range(calls_per_case):
            steps.append(
                EvidenceStep(
                    call_index=index,
                    pair_index=None,
                    case_id=case,
                    order=None,
                    roles=[role],
                    lifecycle="isolated",
                )
            )
            index += 1
    return steps


def orders(pairs: int, seed: int) -> list[str]:
    """The seeded balanced AB/BA schedule (``gpuopt.rng/v1``, the statistics engine's)."""
    from gpuopt import stats

    return list(stats.schedule(pairs, seed).orders)


def paired_steps(cases: list[str], pairs: int, seed: int, lifecycle: str) -> list[EvidenceStep]:
    """Pairs → cases in plan order → roles in order (``AB`` = reference first)."""
    steps: list[EvidenceStep] = []
    for pair_index, order in enumerate(orders(pairs, seed)):
        roles: list[Role] = ["reference", "candidate"] if order == "AB" else ["candidate", "reference"]
        for case in cases:
            groups = [roles] if lifecycle == "same_process" else [[r] for r in roles]
            for group in groups:
                steps.append(
                    EvidenceStep.model_validate(
                        {
                            "call_index": len(steps),
                            "pair_index": pair_index,
                            "case_id": case,
                            "order": order,
                            "roles": group,
                            "lifecycle": lifecycle,
                        }
                    )
                )
    return steps


# ---- estimate ----------------------------------------------------------------------------------------------


@dataclass
class _Basis:
    """Earlier call times keyed by what makes them comparable."""

    by_kind: dict[tuple[str, str, int], list[tuple[float, int, str]]] = field(default_factory=dict)
    baseline: dict[str, list[tuple[float, int, str]]] = field(default_factory=dict)
    smoke: tuple[str, float, int] | None = None


def _quantile(values: list[float], q: float) -> float:
    """Type-7 quantile of a few call times (a descriptive summary for the estimate)."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _basis(store: Store, target: Target) -> _Basis:
    basis = _Basis()
    smoke = target.readiness.smoke_request
    basis.smoke = (
        smoke.case.id,
        target.readiness.smoke_receipt.elapsed_s,
        sum(smoke.sampling.samples_per_call.values()) // max(len(smoke.sampling.samples_per_call), 1)
        + smoke.sampling.warmup_per_call,
    )
    for line in store.ledger():
        if line.kind != "result":
            continue
        try:
            found = read_result(store, line.id)
            request = read_request(store, line.id)
        except InputError:
            continue
        if found is None:
            continue
        result: InvocationResult = found[0]
        work = request.plan.samples_per_call + request.plan.warmup_per_call
        for receipt in result.call_receipts:
            if receipt.status != "completed":
                continue
            step = receipt.step
            key = (step.case_id, step.lifecycle, len(step.roles))
            basis.by_kind.setdefault(key, []).append((receipt.elapsed_s, work, line.id))
            if request.operation == "baseline":
                basis.baseline.setdefault(step.case_id, []).append((receipt.elapsed_s, work, line.id))
    return basis


def estimate(
    store: Store,
    target: Target,
    steps: list[EvidenceStep],
    *,
    samples_per_call: int,
    warmup_per_call: int,
) -> Estimate:
    """Per step: completed calls of the same case, lifecycle and subject count in earlier invocations of
    this Target; else the baseline's calls of that case; else the readiness smoke. Times are scaled
    linearly by samples + warmup (and by subjects for a one-subject basis) when those differ."""
    basis = _basis(store, target)
    work = samples_per_call + warmup_per_call
    p50 = p90 = 0.0
    used: set[str] = set()
    scaled = False
    unknown: list[int] = []
    for step in steps:
        subjects = len(step.roles)
        found = basis.by_kind.get((step.case_id, step.lifecycle, subjects))
        factor_subjects = 1.0
        if not found:
            found = basis.baseline.get(step.case_id)
            factor_subjects = float(subjects)
        if not found and basis.smoke is not None and basis.smoke[0] == step.case_id:
            _, elapsed, smoke_work = basis.smoke
            found = [(elapsed, smoke_work, "target.readiness.smoke_receipt")]
            factor_subjects = float(subjects)
        if not found:
            unknown.append(step.call_index)
            continue
        times = []
        for elapsed, their_work, ref in found:
            factor = factor_subjects * (work / their_work if their_work else 1.0)
            if factor != 1.0:
                scaled = True
            times.append(elapsed * factor)
            used.add(ref)
        p50 += _quantile(times, 0.5)
        p90 += _quantile(times, 0.9)
    known = len(steps) - len(unknown)
    return Estimate(
        p50_s=p50 if known else None,
        p90_s=p90 if known else None,
        gpu_seconds_p50=(p50 * len(target.gpus)) if known else None,
        basis=sorted(used),
        scaled=scaled,
        unknown_steps=unknown,
    )


def role_counts(steps: list[EvidenceStep]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for step in steps:
        for role in step.roles:
            counts[role] = counts.get(role, 0) + 1
    return counts
