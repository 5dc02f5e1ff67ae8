"""Building and running ``gate`` invocations: the frozen core, then submission with a retry budget.

Paired (the baseline's variant is a tree of this root, so it can be rerun): its variant as ``reference``
and the current code as ``candidate``, interleaved AB/BA under the baseline's plan (cases, samples and
warmup per call, lifecycle and shared state; pairs per case unless ``pairs`` is given). Unpaired: the
current code alone, isolated, as many calls per case as the baseline saved (or ``pairs``).

A measurement made invalid by contamination or a failed sampler is rerun as a retry of the same request
(``retry_of``), at most ``retries`` times; every attempt is kept and cited. An identical request whose
latest attempt is final returns that result (dedupe): a new measurement of the same code needs another
``seed`` or ``pairs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuopt.errors import InputError
from gpuopt.evaluation import invocation, plans
from gpuopt.evaluation.experiment import check_contract
from gpuopt.evaluation.records import read_request, read_result
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.experiment import Contract
from gpuopt.models.evaluation.frozen import ContractCore, GateCore
from gpuopt.models.evaluation.gate import BaselinePlan, GateMode, GateResult, GateSpec
from gpuopt.models.evaluation.invocation import FrozenVariant, Limits, Plan
from gpuopt.models.evaluation.target import Target
from gpuopt.models.gate import GateAttempt

RETRYABLE = ("contaminated", "sampler_failed")
WAIT_MARGIN_S = 120.0


@dataclass(frozen=True)
class Reference:
    """What the current code is compared with: a variant and the plan it was measured under."""

    variant: FrozenVariant
    plan: BaselinePlan
    spec: GateSpec


def tree_present(store: Store, digest: str) -> bool:
    return store.exists(f"objects/trees/{digest}.json")


def champion_plan(store: Store, selection_result: ResultRef | None) -> BaselinePlan:
    """The plan of the Champion's justifying result, else of the newest passed noise of the Target."""
    inv_id = None if selection_result is None else selection_result.invocation_id
    if inv_id is None:
        for line in reversed(store.ledger()):
            keys = line.keys
            if line.kind == "result" and keys.get("operation") == "noise" and keys.get("verdict") == "passed":
                inv_id = line.id
                break
    if inv_id is None:
        raise InputError(
            "gate_plan_unknown",
            "the Champion is the original and the Target has no passed noise record to take a plan from: "
            "save a baseline from an evaluation (gpuopt gate save NAME --from INVOCATION) and check against "
            "it",
            path="against",
        )
    request = read_request(store, inv_id)
    contract = request.contract if isinstance(request, ContractCore) else None
    return BaselinePlan(
        case_ids=list(request.plan.case_ids),
        pairs=request.plan.pairs or request.plan.calls_per_case or 1,
        samples_per_call=request.plan.samples_per_call,
        warmup_per_call=request.plan.warmup_per_call,
        lifecycle=request.plan.lifecycle,
        shared_state=[] if contract is None else list(contract.shared_state),
        rebuilt_state=[] if contract is None else list(contract.rebuilt_state),
    )


def newest_noise(store: Store, lifecycle: str, samples: int) -> ResultRef | None:
    """The newest passed noise result with this lifecycle and samples per call (for the resolution)."""
    for line in reversed(store.ledger()):
        if (
            line.kind != "result"
            or line.keys.get("operation") != "noise"
            or line.keys.get("verdict") != "passed"
        ):
            continue
        request = read_request(store, line.id)
        if request.plan.lifecycle == lifecycle and request.plan.samples_per_call == samples:
            return ResultRef(invocation_id=line.id, sha256=line.sha256)
    return None


def _plan(
    target: Target, base: BaselinePlan, *, calls: int | None, pairs: int | None, seed: int | None
) -> Plan:
    cases = plans.case_ids(target, base.case_ids)
    plans.check_samples(target.metrics, base.samples_per_call)
    return Plan(
        case_ids=cases,
        pairs=pairs,
        calls_per_case=calls,
        samples_per_call=base.samples_per_call,
        warmup_per_call=base.warmup_per_call,
        seed=target.statistics.seed if seed is None else seed,
        lifecycle="isolated" if calls is not None else base.lifecycle,
    )


def build(
    store: Store,
    target: Target,
    ref: Reference,
    candidate: FrozenVariant,
    *,
    pairs: int | None,
    seed: int | None,
) -> GateCore:
    """The gate's frozen core (typed errors for a plan the Target cannot run)."""
    base = ref.plan
    if ref.spec.mode == "paired":
        count = base.pairs if pairs is None else pairs
        plan = _plan(target, base, calls=None, pairs=count, seed=seed)
        total = count * len(plan.case_ids)
        if total < target.statistics.minimum_pairs:
            raise InputError(
                "pairs_below_minimum",
                f"{count} pairs x {len(plan.case_ids)} cases = {total} is below the Target's minimum",
                path="pairs",
                expected=f">= {target.statistics.minimum_pairs} pairs in all",
                observed=str(total),
            )
        contract = Contract(
            lifecycle=base.lifecycle, shared_state=base.shared_state, rebuilt_state=base.rebuilt_state
        )
        steps = plans.paired_steps(plan.case_ids, count, plan.seed, base.lifecycle)
        variants = {"reference": ref.variant, "candidate": candidate}
    else:
        if base.lifecycle != "isolated":
            raise InputError(
                "gate_unpaired_unsupported",
                "an unpaired check measures the current code alone, so the baseline's calls must be "
                "isolated ones (one subject per process); this baseline was measured same_process",
                path="mode",
                expected="a baseline saved from isolated calls (gpuopt baseline, or an isolated comparison)",
                observed=base.lifecycle,
            )
        count = base.pairs if pairs is None else pairs
        plan = _plan(target, base, calls=count, pairs=None, seed=seed)
        contract = Contract(lifecycle="isolated")
        steps = plans.single_steps(plan.case_ids, count, "candidate")
        variants = {"candidate": candidate}
    check_contract(contract, target, target.driver, path="plan")
    return GateCore(
        operation="gate",
        plan=plan,
        evidence_plan=steps,
        variants=variants,  # type: ignore[arg-type]
        contract=contract,
        gate=ref.spec,
        noise=newest_noise(store, plan.lifecycle, plan.samples_per_call),
    )


@dataclass
class Attempts:
    """The invocations of one check, first to last, and the last result."""

    items: list[GateAttempt] = field(default_factory=list)
    result: GateResult | None = None
    result_ref: ResultRef | None = None


def _attempt(
    store: Store, inv_id: str, deduplicated: bool
) -> tuple[GateAttempt, GateResult | None, str | None]:
    found = read_result(store, inv_id)
    result = found[0] if found is not None and isinstance(found[0], GateResult) else None
    sha = None if found is None else found[1]
    c = None if result is None else result.contamination
    return (
        GateAttempt(
            invocation_id=inv_id,
            result=None if sha is None else ResultRef(invocation_id=inv_id, sha256=sha),
            deduplicated=deduplicated,
            execution_status=None if result is None else result.execution_status,
            measurement_validity=None if result is None else result.measurement_validity,
            stop_reason=None if result is None else result.stop_reason,
            elapsed_s=None if result is None else result.elapsed_s,
            contamination_checked=None if c is None else c.checked,
            contaminated_pairs=None if c is None else max(c.pairs_invalid, c.calls_contaminated),
            contamination_by_rule={} if c is None else dict(c.by_rule),
        ),
        result,
        sha,
    )


def run(
    store: Store,
    core: GateCore,
    *,
    retries: int,
    limits: Limits,
    timeout_s: float | None,
) -> Attempts:
    """Submits the core and waits; reruns an invalid measurement (contamination, sampler) up to
    ``retries`` times. An earlier non-final attempt of the same request is retried, counted in the budget."""
    out = Attempts()
    retry_of: str | None = None
    limit = timeout_s if timeout_s is not None else limits.operation_timeout_s + WAIT_MARGIN_S
    for _ in range(retries + 1):
        try:
            sub = invocation.submit(store.root, core, limits=limits, retry_of=retry_of)
        except InputError as exc:
            if exc.code != "retry_required" or exc.expected is None or retry_of is not None:
                raise
            retry_of = exc.expected
            sub = invocation.submit(store.root, core, limits=limits, retry_of=retry_of)
        status = invocation.wait(store.root, sub.invocation_id, timeout_s=limit)
        if status.state != "completed":
            raise InputError(
                "invocation_lost" if status.state == "lost" else "gate_timeout",
                f"gate invocation {sub.invocation_id} is {status.state} after waiting {limit:g} s",
                path=sub.invocation_id,
            )
        attempt, result, sha = _attempt(store, sub.invocation_id, sub.deduplicated)
        out.items.append(attempt)
        out.result = result
        out.result_ref = None if sha is None else ResultRef(invocation_id=sub.invocation_id, sha256=sha)
        if result is None or result.stop_reason not in RETRYABLE:
            break
        retry_of = sub.invocation_id
    return out


def reference_for_baseline(
    store: Store, ref: RecordRef, variant: FrozenVariant, plan: BaselinePlan, mode: str
) -> Reference:
    """The reference of a samples baseline: paired when its variant's tree is here (or asked), else
    unpaired."""
    present = tree_present(store, variant.digest)
    chosen: GateMode = "paired" if (mode == "paired" or (mode == "auto" and present)) else "unpaired"
    if chosen == "paired" and not present:
        raise InputError(
            "gate_baseline_not_rerunnable",
            f"the baseline's variant {variant.digest} is not in this root's store, so it cannot be rerun "
            "paired; import the bundle it was exported with, or check --mode unpaired",
            path="mode",
            expected="the variant's tree in objects/trees/",
        )
    return Reference(
        variant=variant,
        plan=plan,
        spec=GateSpec(against="baseline", baseline=ref, selection=None, mode=chosen),
    )
