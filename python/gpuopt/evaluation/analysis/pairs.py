"""Pairs from an executed plan: the invocation's context (frozen request, Target, Experiment), the pairs
the calls form, their within-call values and effects (through :mod:`gpuopt.stats`), their validity and
contamination, and the descriptive facts of a baseline."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from gpuopt import stats
from gpuopt.errors import InternalError
from gpuopt.evaluation import sampling
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.execution import Execution, ExecutionSpec
from gpuopt.evaluation.records import load_experiment, read_request
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.experiment import Experiment
from gpuopt.models.evaluation.frozen import ExperimentCore
from gpuopt.models.evaluation.invocation import FrozenRequest, RequestCore, Warning
from gpuopt.models.evaluation.operations import (
    ContaminationFacts,
    Pair,
    PairValue,
)
from gpuopt.models.evaluation.target import Target

C = TypeVar("C", bound=RequestCore)

# ---- descriptive facts -------------------------------------------------------------------------------------


def cv(samples: list[float]) -> float | None:
    """A call's coefficient of variation (sample SD / mean), None below two samples or at a zero mean."""
    import numpy as np

    values = np.asarray(samples, dtype=float)
    mean = float(values.mean()) if len(values) else 0.0
    if len(values) < 2 or mean == 0:
        return None
    return float(values.std(ddof=1) / mean)


def median(values: list[float]) -> float | None:
    """A descriptive median (of per-call values or elapsed times)."""
    import numpy as np

    return float(np.median(values)) if values else None


# ---- the context of one invocation -------------------------------------------------------------------------


@dataclass
class Side:
    call_index: int
    samples: dict[str, list[float]]
    passed: bool
    identity_equal: bool


@dataclass
class PairBuild:
    pair_index: int
    case_id: str
    order: str
    calls: list[int] = field(default_factory=list)
    sides: dict[str, Side] = field(default_factory=dict)
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
        return read_request(self.store, self.spec.invocation_id)

    @cached_property
    def target(self) -> Target:
        return targets.optimizable(targets.load(self.store)[0])

    def core(self, model: type[C]) -> C:
        """The frozen request as the core its operation builds (``request_mismatch``, an internal error,
        when the invocation holds another operation's request)."""
        request = self.request
        if not isinstance(request, model):
            raise InternalError(
                "request_mismatch",
                f"{self.spec.invocation_id} holds a {request.operation} request, not a {model.__name__}",
            )
        return request

    @cached_property
    def experiment(self) -> Experiment | None:
        request = self.request
        if not isinstance(request, ExperimentCore):
            return None
        return load_experiment(self.store, request.experiment)

    @property
    def m(self) -> float:
        return float(self.target.objective.minimum_effect_pct)

    @property
    def minimum_pairs(self) -> int:
        if self.spec.operation == "screen" and self.experiment is not None:
            return self.experiment.screen.minimum_pairs
        return self.target.statistics.minimum_pairs

    @cached_property
    def pairs(self) -> list[PairBuild]:
        return build_pairs(self.spec, self.ex)

    def valid_pairs(self) -> list[PairBuild]:
        return [p for p in self.pairs if not p.invalid_reasons()]

    def contamination(self) -> ContaminationFacts:
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


def build_pairs(spec: ExecutionSpec, ex: Execution) -> list[PairBuild]:
    """Pairs (pair_index, case) from the calls that ran, in plan order; incomplete pairs are kept."""
    corr = {(c.call_index, c.role): c for c in ex.correctness}
    receipts = {r.call_index: r for r in ex.receipts}
    groups: dict[tuple[int, str], PairBuild] = {}
    ran = {request.call_index for request, _ in ex.results}
    for receipt in ex.receipts:
        step = receipt.step
        if step.pair_index is None or step.order is None:
            continue
        key = (step.pair_index, step.case_id)
        build = groups.setdefault(key, PairBuild(step.pair_index, step.case_id, step.order))
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
            build.sides[subject.role] = Side(
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
                    rv, cv_ = stats.summarize([ref.samples[name], cand.samples[name]], decl.within_call)
                    values[name] = PairValue(reference=rv, candidate=cv_)
                    ell = stats.pair_effects([rv], [cv_], direction=decl.direction)[0]
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
