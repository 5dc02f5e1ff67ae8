"""Supervised invocations: submit (frozen request, digest, dedupe and explicit retry), status and cancel.

The invocation id comes from the request digest, which excludes the limits, so an identical request
returns the existing valid result. Status and cancel are derived from the files and OS facts only (pid plus
start token); status never writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import driver as drv
from gpuopt.evaluation import formats, identity, jsonio, registry
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.execution import ExecutionSpec, OperationHandler
from gpuopt.evaluation.identity import tool_identity
from gpuopt.evaluation.invocation_status import cancel, root_status, status, wait
from gpuopt.evaluation.records import invocation_rel, read_request, read_result
from gpuopt.evaluation.store import Store, ledger_keys
from gpuopt.evaluation.supervisor import Supervisor
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.frozen import BoundCore, ContractCore, FinalAuditCore, SmokeCore
from gpuopt.models.evaluation.invocation import (
    EvidenceStep,
    FrozenRequest,
    FrozenVariant,
    InvocationResult,
    Limits,
    Plan,
    RequestCore,
    ToolIdentity,
)
from gpuopt.models.evaluation.status import SubmitOutcome
from gpuopt.models.evaluation.target import Target

__all__ = [
    "base_id",
    "cancel",
    "decide",
    "execution_spec",
    "frozen_document",
    "handler_for",
    "is_final",
    "prepare",
    "read_request",
    "read_result",
    "request_core",
    "request_digest",
    "resolve_limits",
    "root_status",
    "start_supervisor",
    "status",
    "submit",
    "submit_smoke",
    "supervisor_for",
    "wait",
]

LAUNCH_WINDOW_S = 60.0
DIGEST_EXCLUDES = ("limits", "retry_of", "keep_workspace", "created_at_epoch", "request_digest")
MAX_RETRIES = 100_000


def request_digest(request: dict[str, Any]) -> str:
    return jsonio.digest({k: v for k, v in request.items() if k not in DIGEST_EXCLUDES})


def base_id(digest: str) -> str:
    return "inv-" + jsonio.digest({"request_digest": digest})[:32]


# ---- submit ------------------------------------------------------------------------------------------------


def check_runnable(store: Store, target: Target, ref: RecordRef) -> None:
    """Before any launch: the Target file, driver identity, inherited environment and observed runtime are
    still the frozen ones (``target_changed``, ``driver_changed``, ``environment_changed``,
    ``identity_changed``; a missing GPU is ``gpu_not_found``, exit 3)."""
    targets.load(store, ref)
    drv.check_driver(target.driver)
    drv.check_environment(target.driver, os.environ, store)
    frozen = target.runtime_identity.observed
    now = identity.observe(target.gpus, [t.name for t in frozen.required_tools])
    identity.check_unchanged(frozen, now)


def is_final(result: InvocationResult) -> bool:
    return result.execution_status == "succeeded" and (
        result.measurement_validity == "valid" or result.stop_reason == "correctness_failed"
    )


def _chain(store: Store, first: str) -> list[str]:
    out = []
    for n in range(MAX_RETRIES):
        inv_id = first if n == 0 else f"{first}-r{n}"
        if not store.exists(invocation_rel(inv_id)):
            break
        out.append(inv_id)
    return out


def _outcome(store: Store, inv_id: str, digest: str, *, deduplicated: bool) -> SubmitOutcome:
    st = status(store.root, inv_id)
    return SubmitOutcome(
        invocation_id=inv_id,
        request_digest=digest,
        deduplicated=deduplicated,
        already_running=st.state in ("starting", "running") and deduplicated,
        status=st,
    )


def resolve_limits(limits: Limits, now: float) -> Limits:
    if limits.launch_deadline_epoch is not None and limits.launch_deadline_epoch <= now:
        raise InputError(
            "deadline_passed",
            "the launch deadline lies in the past",
            path="limits.launch_deadline_epoch",
            observed=str(limits.launch_deadline_epoch),
        )
    if limits.absolute_deadline_epoch is not None and limits.absolute_deadline_epoch <= now:
        raise InputError(
            "deadline_passed",
            "the absolute deadline lies in the past",
            path="limits.absolute_deadline_epoch",
            observed=str(limits.absolute_deadline_epoch),
        )
    if limits.termination_grace_s > limits.cleanup_timeout_s:
        raise InputError(
            "field_invalid",
            "termination_grace_s must not exceed cleanup_timeout_s",
            path="limits.termination_grace_s",
        )
    if limits.launch_deadline_epoch is None:
        limits = limits.model_copy(update={"launch_deadline_epoch": now + LAUNCH_WINDOW_S})
    return limits


@dataclass(frozen=True)
class Prepared:
    """A request frozen in memory (nothing written): the operation's core, what gpuopt adds to it, the
    digest and the id of the first attempt."""

    store: Store
    core: RequestCore
    target: RecordRef
    tool_identity: ToolIdentity
    host_id: str
    gpus: tuple[str, ...]

    @cached_property
    def digest(self) -> str:
        return request_digest(self.digested)

    @property
    def first(self) -> str:
        """The invocation id of the first attempt of this request."""
        return base_id(self.digest)

    @cached_property
    def digested(self) -> dict[str, Any]:
        """The frozen request's fields that its digest covers (everything but :data:`DIGEST_EXCLUDES`)."""
        return {
            **self.core.model_dump(),
            "format": formats.INVOCATION_REQUEST,
            "target": self.target.model_dump(),
            "tool_identity": self.tool_identity.model_dump(),
            "host_id": self.host_id,
            "gpus": list(self.gpus),
        }


def request_core(core: RequestCore | dict[str, Any]) -> RequestCore:
    """A typed core as is; a dict (the Python API's JSON-shaped input) validated strictly into the core
    model of its operation in the registry (``field_unknown``, ``field_missing``, ``field_invalid`` with the
    path; an operation the registry does not run is refused by the base model)."""
    if isinstance(core, RequestCore):
        return core
    found = registry.find_supervised(core.get("operation"))
    model: type[RequestCore] = RequestCore if found is None else registry.load(found.core)
    return jsonio.validate(model, core, what="request core")


def prepare(root: str | Path, core: RequestCore | dict[str, Any]) -> Prepared:
    """Freezes a request in memory: adds the Target ref, gpuopt's tool identity, the observed host and the
    GPUs, after re-verifying that the Target can run here. Writes nothing."""
    typed = request_core(core)
    store = Store.open(root)
    target, ref = targets.load(store)
    target = targets.optimizable(target)
    check_runnable(store, target, ref)
    return Prepared(
        store=store,
        core=typed,
        target=ref,
        tool_identity=tool_identity(),
        host_id=target.runtime_identity.observed.host.host_id,
        gpus=tuple(target.gpus),
    )


Dedupe = Literal["run", "reuse", "attach"]


def decide(store: Store, first: str, retry_of: str | None) -> tuple[Dedupe, str]:
    """What submitting this digest would do now: ``reuse`` a final result, ``attach`` to a running attempt,
    or ``run`` a new attempt (its id). ``retry_required``, ``retry_invalid`` and ``cleanup_unconfirmed``
    are raised. Reads only."""
    chain = _chain(store, first)
    if retry_of is not None:
        _native.validate_id("invocation", retry_of)
        for existing in chain:
            if read_request(store, existing).retry_of == retry_of:
                return (
                    "attach" if status(store.root, existing).state in ("starting", "running") else "reuse"
                ), existing
    if not chain:
        if retry_of is not None:
            raise InputError(
                "retry_invalid",
                "there is no earlier attempt of this request to retry",
                path="retry_of",
                observed=retry_of,
            )
        return "run", first
    latest = chain[-1]
    st = status(store.root, latest)
    found = read_result(store, latest)
    if found is not None and st.state == "completed" and is_final(found[0]):
        return "reuse", latest
    if st.state in ("starting", "running"):
        return "attach", latest
    if retry_of is None:
        raise InputError(
            "retry_required",
            f"the latest attempt {latest} of this request did not end final "
            f"({st.summary or st.state}); "
            "rerun with retry_of set to it",
            expected=latest,
        )
    if retry_of != latest:
        raise InputError(
            "retry_invalid",
            "retry_of must name the latest attempt",
            path="retry_of",
            expected=latest,
            observed=retry_of,
        )
    if st.cleanup_status not in ("confirmed", "not_required"):
        raise InputError(
            "cleanup_unconfirmed",
            f"{latest} has cleanup {st.cleanup_status}; run gpuopt cancel on it first",
            expected="confirmed",
            observed=st.cleanup_status,
        )
    return "run", f"{first}-r{len(chain)}"


def frozen_document(
    prepared: Prepared, *, limits: Limits, retry_of: str | None, keep_workspace: bool, now: float
) -> FrozenRequest:
    model: type[FrozenRequest] = registry.load(registry.supervised(prepared.core.operation)[1].frozen)
    return jsonio.validate(
        model,
        {
            **prepared.digested,
            "limits": limits.model_dump(),
            "retry_of": retry_of,
            "keep_workspace": keep_workspace,
            "created_at_epoch": now,
            "request_digest": prepared.digest,
        },
        what="frozen request",
    )


def submit(
    root: str | Path,
    core: RequestCore | dict[str, Any],
    *,
    limits: Limits,
    retry_of: str | None = None,
    keep_workspace: bool = False,
    start: bool = True,
) -> SubmitOutcome:
    """Freezes and submits an invocation. ``core`` is the operation's typed core (``operation``, ``plan``,
    ``evidence_plan``, ``variants`` and any operation-specific fields; a dict is validated into it); gpuopt
    adds the Target ref, its tool identity, the observed host and the GPUs. Identical requests dedupe; a
    failed attempt needs ``retry_of``."""
    prepared = prepare(root, core)
    store, digest = prepared.store, prepared.digest
    now = time.time()
    limits = resolve_limits(limits, now)
    with store.lock("root", exclusive=False), store.lock(f"inv-{digest[:16]}"):
        action, inv_id = decide(store, prepared.first, retry_of)
        if action != "run":
            return _outcome(store, inv_id, digest, deduplicated=True)
        frozen = frozen_document(
            prepared, limits=limits, retry_of=retry_of, keep_workspace=keep_workspace, now=now
        )
        published = store.write_record(invocation_rel(inv_id, "request.json"), frozen)
        store.ledger_append("invocation", inv_id, published, ledger_keys(frozen.model_dump(mode="json")))
    if start:
        start_supervisor(store.root, inv_id)
    return _outcome(store, inv_id, digest, deduplicated=False)


def start_supervisor(root: Path, inv_id: str) -> None:
    """Starts the detached supervisor (its first process forks the real one and exits at once)."""
    inv_dir = root / invocation_rel(inv_id)
    # 0600, as the calls' logs: what a supervisor prints may quote its driver's output.
    fd = os.open(inv_dir / "supervisor.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuopt.evaluation.detached", "detached", str(root), inv_id],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
            cwd=str(root),
        )
    proc.wait()


def supervisor_for(root: Path, inv_id: str) -> Supervisor:
    """Builds the supervisor of a submitted invocation from its frozen request and Target."""
    store = Store.open(root)
    request = read_request(store, inv_id)
    target = targets.optimizable(targets.load(store)[0])
    spec = execution_spec(store, inv_id, request, target)

    def checks() -> None:
        check_runnable(store, target, request.target)

    return Supervisor(
        spec=spec,
        handler=handler_for(request.operation),
        inv_dir=store.root / invocation_rel(inv_id),
        mode="detached",
        launch_deadline_epoch=request.limits.launch_deadline_epoch,
        tool_identity=request.tool_identity,
        ledger_store=store,
        target_checks=checks,
    )


def handler_for(operation: str) -> OperationHandler:
    """The registered handler that turns an execution of ``operation`` into its result."""
    handler: OperationHandler = registry.load(registry.supervised(operation)[1].handler)()
    return handler


def execution_spec(store: Store, inv_id: str, request: FrozenRequest, target: Target) -> ExecutionSpec:
    contract = request.contract if isinstance(request, ContractCore) else None
    binding = request.reference_binding if isinstance(request, BoundCore) else None
    restore: list[EvidenceStep] = request.restore_checks if isinstance(request, FinalAuditCore) else []
    return ExecutionSpec(
        invocation_id=inv_id,
        operation=request.operation,
        target_id=target.id,
        target=request.target,
        request_digest=request.request_digest,
        store_root=str(store.root),
        gpus=request.gpus,
        driver=target.driver,
        metrics=target.metrics,
        rules=target.accuracy.rules,
        test_set_digest=target.test_set.digest,
        accuracy_reference=target.accuracy.reference,
        variants=request.variants,
        evidence_plan=request.evidence_plan,
        samples_per_call=request.plan.samples_per_call,
        warmup_per_call=request.plan.warmup_per_call,
        seed=request.plan.seed,
        shared_state=[] if contract is None else list(contract.shared_state),
        rebuilt_state=[] if contract is None else list(contract.rebuilt_state),
        expected_reported=target.runtime_identity.reported,
        limits=request.limits,
        keep_workspace=request.keep_workspace,
        gates=[] if contract is None else list(contract.gates),
        diagnostics=[] if contract is None else list(contract.diagnostics),
        restore_checks=list(restore),
        binding=binding,
        contamination=target.contamination,
    )


def submit_smoke(
    root: str | Path,
    *,
    case_ids: list[str] | None = None,
    samples_per_call: int = 2,
    limits: Limits | None = None,
    retry_of: str | None = None,
    keep_workspace: bool = False,
) -> SubmitOutcome:
    """Re-runs the readiness smoke of a published Target as a supervised invocation: one isolated call of
    the original per case, the gates and the correctness rule, no statistics."""
    store = Store.open(root)
    target = targets.optimizable(targets.load(store)[0])
    cases = list(case_ids) if case_ids is not None else list(target.test_set.case_ids)
    unknown = [c for c in cases if c not in target.test_set.case_ids]
    if unknown or not cases:
        raise InputError(
            "case_unknown",
            f"case {unknown[0] if unknown else '(none)'} is not in the Target's test set",
            path="plan.case_ids",
        )
    steps = [
        EvidenceStep(
            call_index=i, pair_index=None, case_id=c, order=None, roles=["original"], lifecycle="isolated"
        )
        for i, c in enumerate(cases)
    ]
    core = SmokeCore(
        operation="readiness_smoke",
        plan=Plan(
            case_ids=cases,
            pairs=None,
            calls_per_case=1,
            samples_per_call=samples_per_call,
            warmup_per_call=0,
            seed=target.statistics.seed,
            lifecycle="isolated",
        ),
        evidence_plan=steps,
        variants={"original": FrozenVariant(kind=target.original.kind, digest=target.original.digest)},
    )
    return submit(root, core, limits=limits or Limits(), retry_of=retry_of, keep_workspace=keep_workspace)
