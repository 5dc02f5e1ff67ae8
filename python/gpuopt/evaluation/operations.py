"""The evaluations: ``baseline``, ``noise``, ``screen``, ``target`` and ``final-audit`` (spec §3.3, §3.5).

Each validates its request, applies its gates (stale Experiments, the screen gate, one formal attempt, a
non-original Champion), builds the frozen evidence plan and submits one supervised invocation — or, with
``dry_run``, returns the plan, the dedupe decision and the expected duration, writing nothing. The plan a
dry run shows is the plan that runs: both come from the same frozen request.

Python twins of the CLI verbs: :func:`baseline`, :func:`noise`, :func:`screen`, :func:`target`,
:func:`final_audit` take the request (model, JSON bytes or dict) and return the command's data model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gpuopt.errors import InputError
from gpuopt.evaluation import experiment as experiments
from gpuopt.evaluation import invocation, jsonio, plans, target_gates
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.outcome import outcome, outcome_lines
from gpuopt.evaluation.records import (
    Current,
    complete_result_refs,
    load_experiment,
    load_request,
    read_request,
    read_result,
    resolve_champion,
)
from gpuopt.evaluation.store import Store
from gpuopt.evaluation.summary import dry_run_summary, reference_line, result_summary
from gpuopt.models.evaluation.common import RecordRef, ResultRef, Role
from gpuopt.models.evaluation.experiment import Contract, Experiment, Lifecycle
from gpuopt.models.evaluation.frozen import (
    BaselineCore,
    FinalAuditCore,
    NoiseCore,
    ScreenCore,
    TargetCore,
)
from gpuopt.models.evaluation.invocation import (
    EvidenceStep,
    FrozenVariant,
    InvocationResult,
    Plan,
    RequestCore,
)
from gpuopt.models.evaluation.operations import (
    DATA_MODELS,
    BaselinePlanSpec,
    BaselineRequest,
    Binding,
    CallCounts,
    ChampionFacts,
    DryRun,
    EvaluationData,
    EvaluationRequestBase,
    FinalAuditRequest,
    NoiseRequest,
    NoiseResult,
    PairPlanSpec,
    ScreenRequest,
    TargetRequest,
)
from gpuopt.models.evaluation.target import Target, Variant
from gpuopt.models.evaluation.views import ResultOutcome

REQUESTS: dict[str, type[EvaluationRequestBase]] = {
    "baseline": BaselineRequest,
    "noise": NoiseRequest,
    "screen": ScreenRequest,
    "target": TargetRequest,
    "final_audit": FinalAuditRequest,
}
WAIT_MARGIN_S = 120.0


@dataclass(frozen=True)
class _Built:
    """An operation's typed core, ready to submit, with the store and Target it was built against."""

    store: Store
    target: Target
    core: RequestCore
    restore: list[EvidenceStep]

    @property
    def steps(self) -> list[EvidenceStep]:
        return list(self.core.evidence_plan)


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


# ---- builders ----------------------------------------------------------------------------------------------


def _build_baseline(req: BaselineRequest, cwd: Path) -> _Built:
    store, target, _ = _open(req, cwd)
    plan = _plan(target, req.plan, pairs=None, calls=req.plan.calls_per_case, lifecycle="isolated")
    steps = plans.single_steps(plan.case_ids, req.plan.calls_per_case, "original")
    core = BaselineCore(
        operation="baseline",
        plan=plan,
        evidence_plan=steps,
        variants={"original": _variant(target.original)},
    )
    return _Built(store, target, core, [])


def _build_noise(req: NoiseRequest, cwd: Path) -> _Built:
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
    return _Built(store, target, core, [])


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


def _build_screen(req: ScreenRequest, cwd: Path) -> _Built:
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
    return _Built(c.store, c.target, core, [])


def _build_target(req: TargetRequest, cwd: Path) -> _Built:
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
    return _Built(c.store, c.target, core, [])


def _build_final_audit(req: FinalAuditRequest, cwd: Path) -> _Built:
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
    return _Built(store, target, core, restore)


_BUILDERS: dict[str, Callable[[Any, Path], _Built]] = {
    "baseline": _build_baseline,
    "noise": _build_noise,
    "screen": _build_screen,
    "target": _build_target,
    "final_audit": _build_final_audit,
}


# ---- run ---------------------------------------------------------------------------------------------------


def parse(
    operation: str, data: bytes | dict[str, Any] | EvaluationRequestBase, cwd: Path
) -> EvaluationRequestBase:
    """A request, strict; result references given by invocation id alone are completed from the store."""
    model = REQUESTS[operation]
    if isinstance(data, model):
        return data
    if isinstance(data, bytes):
        return load_request(model, data, cwd=cwd, what=f"{operation} request")
    return jsonio.validate(model, complete_result_refs(data, cwd), what=f"{operation} request")


def _dry_run(built: _Built, req: EvaluationRequestBase) -> DryRun:
    prepared = invocation.prepare(built.store.root, built.core)
    try:
        action, inv_id = invocation.decide(built.store, prepared.first, req.retry_of)
        dedupe: Any = action
    except InputError as exc:
        if exc.code != "retry_required":
            raise
        dedupe, inv_id = "retry_required", prepared.first
    now = time.time()
    limits = invocation.resolve_limits(req.limits, now)
    frozen = invocation.frozen_document(
        prepared, limits=limits, retry_of=req.retry_of, keep_workspace=req.keep_workspace, now=now
    )
    steps = built.steps
    plan = frozen.plan
    counts = plans.role_counts(steps)
    return DryRun(
        request=frozen.model_dump(mode="json"),
        request_digest=prepared.digest,
        invocation_id=inv_id,
        dedupe=dedupe,
        evidence_plan=steps,
        restore_checks=built.restore,
        calls=CallCounts(total=len(steps), by_role=counts, restore_checks=len(built.restore)),  # type: ignore[arg-type]
        estimate=plans.estimate(
            built.store,
            built.target,
            steps,
            samples_per_call=plan.samples_per_call,
            warmup_per_call=plan.warmup_per_call,
        ),
    )


def run(
    operation: str,
    data: bytes | dict[str, Any] | EvaluationRequestBase,
    *,
    cwd: Path | None = None,
    dry_run: bool = False,
    wait: bool = False,
    timeout_s: float | None = None,
    start: bool = True,
) -> EvaluationData:
    """Validates, gates and submits one evaluation (or only plans it with ``dry_run``)."""
    cwd = Path.cwd() if cwd is None else cwd
    req = parse(operation, data, cwd)
    built: _Built = _BUILDERS[operation](req, cwd)
    model = DATA_MODELS[operation]
    if dry_run:
        plan = _dry_run(built, req)
        return model.model_validate(
            {
                "operation": operation,
                "dry_run": plan,
                "submission": None,
                "estimate": plan.estimate,
                "result_ref": None,
                "result": None,
                "summary": dry_run_summary(plan),
            }
        )
    frozen_plan = built.core.plan
    estimate = plans.estimate(
        built.store,
        built.target,
        built.steps,
        samples_per_call=frozen_plan.samples_per_call,
        warmup_per_call=frozen_plan.warmup_per_call,
    )
    sub = invocation.submit(
        built.store.root,
        built.core,
        limits=req.limits,
        retry_of=req.retry_of,
        keep_workspace=req.keep_workspace,
        start=start,
    )
    if wait:
        limit = timeout_s if timeout_s is not None else req.limits.operation_timeout_s + WAIT_MARGIN_S
        status = invocation.wait(built.store.root, sub.invocation_id, timeout_s=limit)
        sub = sub.model_copy(update={"status": status})
    found = read_result(built.store, sub.invocation_id) if sub.status.state == "completed" else None
    ref = None if found is None else ResultRef(invocation_id=sub.invocation_id, sha256=found[1])
    why = None if found is None else outcome(found[0])
    return model.model_validate(
        {
            "operation": operation,
            "dry_run": None,
            "submission": sub,
            "estimate": estimate,
            "result_ref": ref,
            "result": None if found is None else found[0],
            "outcome": why,
            "summary": [f"{sub.invocation_id}: {sub.status.state}"]
            if found is None or ref is None or why is None
            else [*_summary(found[0], why), reference_line(ref)],
        }
    )


def _summary(result: InvocationResult, why: ResultOutcome) -> list[str]:
    """The result's summary, then why it came out so, each case and each invalid pair (lines the summary
    already holds left out)."""
    lines = result_summary(result)
    return lines + [x for x in outcome_lines(why)[1:] if x.strip().removeprefix("why: ") not in lines]


def baseline(data: bytes | dict[str, Any] | BaselineRequest, **kw: Any) -> EvaluationData:
    """``gpuopt baseline``: the original on every case, isolated; correctness first."""
    return run("baseline", data, **kw)


def noise(data: bytes | dict[str, Any] | NoiseRequest, **kw: Any) -> EvaluationData:
    """``gpuopt noise``: A/A pairs of the original against itself (two materialized copies)."""
    return run("noise", data, **kw)


def screen(data: bytes | dict[str, Any] | ScreenRequest, **kw: Any) -> EvaluationData:
    """``gpuopt screen``: the Experiment's short comparison (rejected or not_rejected, never passed)."""
    return run("screen", data, **kw)


def target(data: bytes | dict[str, Any] | TargetRequest, **kw: Any) -> EvaluationData:
    """``gpuopt target``: the formal comparison (needs a non-rejecting screen; one formal attempt)."""
    return run("target", data, **kw)


def final_audit(data: bytes | dict[str, Any] | FinalAuditRequest, **kw: Any) -> EvaluationData:
    """``gpuopt final-audit``: the original vs the current Champion, with restore checks."""
    return run("final_audit", data, **kw)
