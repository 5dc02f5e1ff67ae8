"""The builders of the evaluations (``baseline``, ``noise``, ``screen``, ``target``, ``final_audit``): each
opens the root, applies the verb's gates (stale Experiments, the screen gate, one formal attempt, a
non-original Champion) and returns the typed frozen core its request asks for. The operations registry
names each one; :func:`gpuopt.evaluation.operations.run` submits what they build (or dry-runs it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gpuopt.errors import InputError
from gpuopt.evaluation import experiment as experiments
from gpuopt.evaluation import invocation, plans, target_gates
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.operations import Built
from gpuopt.evaluation.records import Current, load_experiment, read_request, resolve_champion
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef, ResultRef, Role
from gpuopt.models.evaluation.experiment import Contract, Experiment, Lifecycle
from gpuopt.models.evaluation.frozen import (
    BaselineCore,
    FinalAuditCore,
    NoiseCore,
    ScreenCore,
    TargetCore,
)
from gpuopt.models.evaluation.invocation import EvidenceStep, FrozenVariant, Plan
from gpuopt.models.evaluation.operations import (
    BaselinePlanSpec,
    BaselineRequest,
    Binding,
    ChampionFacts,
    EvaluationRequestBase,
    FinalAuditRequest,
    NoiseRequest,
    NoiseResult,
    PairPlanSpec,
    ScreenRequest,
    TargetRequest,
)
from gpuopt.models.evaluation.target import Target, Variant


def _variant(variant: Variant) -> FrozenVariant:
    return FrozenVariant(kind=variant.kind, digest=variant.digest)


def _plan(
    target: Target,
    plan: BaselinePlanSpec | PairPlanSpec,
    *,
    pairs: int | None,
    calls: int | None,
    lifecycle: Lifecycle,
) -> Plan:
    cases = plans.case_ids(target, plan.case_ids)
    plans.check_samples(target.metrics, plan.samples_per_call)
    return Plan(
        case_ids=cases,
        pairs=pairs,
        calls_per_case=calls,
        samples_per_call=plan.samples_per_call,
        warmup_per_call=plan.warmup_per_call,
        seed=target.statistics.seed if plan.seed is None else plan.seed,
        lifecycle=lifecycle,
    )


def _open(req: EvaluationRequestBase, cwd: Path) -> tuple[Store, Target, RecordRef]:
    store = Store.open(cwd / req.root)
    target, ref = targets.load(store, req.target)
    return store, targets.optimizable(target), ref


def _newest_noise(store: Store, lifecycle: str, samples: int) -> ResultRef | None:
    """The newest passed noise result of this Target with the same lifecycle and samples per call."""
    for line in reversed(store.ledger()):
        if (
            line.kind != "result"
            or line.keys.get("operation") != "noise"
            or line.keys.get("verdict") != "passed"
        ):
            continue
        try:
            request = read_request(store, line.id)
        except InputError:
            continue
        if request.plan.lifecycle == lifecycle and request.plan.samples_per_call == samples:
            return ResultRef(invocation_id=line.id, sha256=line.sha256)
    return None


def _noise_ref(store: Store, given: ResultRef | None, plan: Plan) -> ResultRef | None:
    if given is not None:
        store.read_record(
            f"invocations/{given.invocation_id}/result.json",
            NoiseResult,
            what="noise result",
            sha256=given.sha256,
        )
        return given
    return _newest_noise(store, plan.lifecycle, plan.samples_per_call)


def _minimum_pairs(target: Target, plan: Plan) -> None:
    pairs = plan.pairs or 0
    total = pairs * len(plan.case_ids)
    if total < target.statistics.minimum_pairs:
        raise InputError(
            "pairs_below_minimum",
            f"{pairs} pairs x {len(plan.case_ids)} cases = {total} is below the Target's minimum",
            path="plan.pairs",
            expected=f">= {target.statistics.minimum_pairs} pairs in all",
            observed=str(total),
        )


def baseline(req: BaselineRequest, cwd: Path) -> Built:
    store, target, _ = _open(req, cwd)
    plan = _plan(target, req.plan, pairs=None, calls=req.plan.calls_per_case, lifecycle="isolated")
    steps = plans.single_steps(plan.case_ids, req.plan.calls_per_case, "original")
    core = BaselineCore(
        operation="baseline",
        plan=plan,
        evidence_plan=steps,
        variants={"original": _variant(target.original)},
    )
    return Built(store, target, core, [])


def noise(req: NoiseRequest, cwd: Path) -> Built:
    store, target, _ = _open(req, cwd)
    plan = _plan(target, req.plan, pairs=req.plan.pairs, calls=None, lifecycle=req.plan.lifecycle)
    contract = Contract(
        lifecycle=req.plan.lifecycle,
        shared_state=req.acquisition.shared_state,
        rebuilt_state=req.acquisition.rebuilt_state,
    )
    experiments.check_contract(contract, target, target.driver, path="acquisition")
    steps = plans.paired_steps(plan.case_ids, req.plan.pairs, plan.seed, req.plan.lifecycle)
    original = _variant(target.original)
    core = NoiseCore(
        operation="noise",
        plan=plan,
        evidence_plan=steps,
        variants={"reference": original, "candidate": original},
        contract=contract,
    )
    return Built(store, target, core, [])


def _stale(exp: Experiment, cur: Current) -> None:
    if exp.reference.pointer_sha256 != cur.pointer_sha256:
        raise InputError(
            "stale_reference",
            f"the Champion changed since Experiment {exp.id} was created; a new Experiment is needed",
            path="experiment",
            expected=exp.reference.pointer_sha256 or "absent",
            observed=cur.pointer_sha256 or "absent",
        )


@dataclass(frozen=True)
class _Comparison:
    """What a screen and a target share: the Experiment's candidate against the Champion it is bound to."""

    store: Store
    target: Target
    experiment: Experiment
    plan: Plan
    steps: list[EvidenceStep]
    variants: dict[Role, FrozenVariant]
    binding: Binding
    noise: ResultRef | None


def _comparison(req: ScreenRequest, cwd: Path) -> _Comparison:
    store, target, tref = _open(req, cwd)
    exp = load_experiment(store, req.experiment)
    if exp.target.id != tref.id:
        raise InputError(
            "experiment_not_found", "the Experiment belongs to another Target", path="experiment.id"
        )
    cur = resolve_champion(store, target, tref)
    _stale(exp, cur)
    lifecycle = exp.contract.lifecycle
    plan = _plan(target, req.plan, pairs=req.plan.pairs, calls=None, lifecycle=lifecycle)
    return _Comparison(
        store=store,
        target=target,
        experiment=exp,
        plan=plan,
        steps=plans.paired_steps(plan.case_ids, req.plan.pairs, plan.seed, lifecycle),
        variants={"reference": _variant(cur.variant), "candidate": _variant(exp.candidate)},
        binding=Binding(selection=cur.selection_ref, pointer_sha256=cur.pointer_sha256),
        noise=_noise_ref(store, req.noise, plan),
    )


def screen(req: ScreenRequest, cwd: Path) -> Built:
    c = _comparison(req, cwd)
    core = ScreenCore(
        operation="screen",
        plan=c.plan,
        evidence_plan=c.steps,
        variants=c.variants,
        experiment=req.experiment,
        mechanism=c.experiment.mechanism,
        reference_binding=c.binding,
        contract=c.experiment.contract,
        noise=c.noise,
    )
    return Built(c.store, c.target, core, [])


def target(req: TargetRequest, cwd: Path) -> Built:
    c = _comparison(req, cwd)
    _minimum_pairs(c.target, c.plan)
    core = TargetCore(
        operation="target",
        plan=c.plan,
        evidence_plan=c.steps,
        variants=c.variants,
        experiment=req.experiment,
        mechanism=c.experiment.mechanism,
        reference_binding=c.binding,
        contract=c.experiment.contract,
        noise=c.noise,
        screens=target_gates.screen_gate(c.store, c.experiment, c.variants, c.binding),
    )
    target_gates.one_formal_attempt(c.store, c.experiment, invocation.prepare(c.store.root, core).digest)
    return Built(c.store, c.target, core, [])


def final_audit(req: FinalAuditRequest, cwd: Path) -> Built:
    store, target, tref = _open(req, cwd)
    cur = resolve_champion(store, target, tref)
    if cur.is_original or cur.selection is None or cur.selection_ref is None:
        raise InputError(
            "champion_required", "a final audit needs a selected (non-original) Champion", path="champion"
        )
    exp_ref = cur.selection.experiment
    exp = None if exp_ref is None else load_experiment(store, exp_ref)
    source: Literal["request", "experiment"]
    if req.contract is not None:
        contract, source = req.contract, "request"
    elif exp is not None:
        contract, source = exp.contract, "experiment"
    else:
        raise InputError("field_missing", "the Champion has no Experiment: give a contract", path="contract")
    experiments.check_contract(contract, target, target.driver, path="contract")
    plan = _plan(target, req.plan, pairs=req.plan.pairs, calls=None, lifecycle=contract.lifecycle)
    _minimum_pairs(target, plan)
    steps = plans.paired_steps(plan.case_ids, req.plan.pairs, plan.seed, contract.lifecycle)
    restore = plans.single_steps(plan.case_ids, 1, "original", start=len(steps))
    original = _variant(target.original)
    core = FinalAuditCore(
        operation="final_audit",
        plan=plan,
        evidence_plan=steps,
        variants={"reference": original, "candidate": _variant(cur.variant), "original": original},
        champion=ChampionFacts(selection=cur.selection_ref, experiment=exp_ref, contract_source=source),
        reference_binding=Binding(selection=cur.selection_ref, pointer_sha256=cur.pointer_sha256),
        contract=contract,
        noise=_noise_ref(store, req.noise, plan),
        restore_checks=restore,
    )
    return Built(store, target, core, restore)
