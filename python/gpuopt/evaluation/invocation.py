"""Supervised invocations: submit (frozen request, digest, dedupe and explicit retry), status and cancel.

The invocation id comes from the request digest, which excludes the limits, so an identical request
returns the existing valid result. Status and cancel are derived from the files and OS facts only (pid plus
start token); status never writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import formats, jsonio
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.executor import ExecutionSpec
from gpuopt.evaluation.identity import tool_identity
from gpuopt.evaluation.store import Store, ledger_keys
from gpuopt.evaluation.supervisor import EventLog, Supervisor
from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.invocation import (
    ActiveChild,
    CleanupStatus,
    Event,
    EvidenceStep,
    FrozenRequest,
    InvocationResult,
    InvocationStatus,
    Limits,
    RootStatus,
    StatusCalls,
    SubmitOutcome,
    SupervisorRecord,
)
from gpuopt.models.evaluation.operations import FROZEN_MODELS, RESULT_MODELS
from gpuopt.models.evaluation.target import Target

DIGEST_EXCLUDES = ("limits", "retry_of", "keep_workspace", "created_at_epoch", "request_digest")
LAUNCH_WINDOW_S = 60.0
UNRESPONSIVE_S = 60.0
MAX_RETRIES = 100_000

REQUEST_MODELS: dict[str, type[FrozenRequest]] = {"readiness_smoke": FrozenRequest, **FROZEN_MODELS}
"""Frozen-request model per operation (operations with their own fields register a subclass)."""


def request_digest(request: dict[str, Any]) -> str:
    return jsonio.digest({k: v for k, v in request.items() if k not in DIGEST_EXCLUDES})


def base_id(digest: str) -> str:
    return "inv-" + jsonio.digest({"request_digest": digest})[:32]


def _rel(inv_id: str, name: str = "") -> str:
    _native.validate_id("invocation", inv_id)
    return f"invocations/{inv_id}" + (f"/{name}" if name else "")


def read_request(store: Store, inv_id: str) -> FrozenRequest:
    rel = _rel(inv_id, "request.json")
    if not store.exists(rel):
        raise InputError("invocation_not_found", f"no invocation {inv_id} in {store.root}", path=rel)
    raw = jsonio.parse(store.read_bytes(rel), max_bytes=jsonio.MAX_RECORD_BYTES, what="request.json")
    model = REQUEST_MODELS.get(str(raw.get("operation")), FrozenRequest)
    return jsonio.validate(model, raw, what=rel)


def read_result(store: Store, inv_id: str) -> tuple[InvocationResult, str] | None:
    rel = _rel(inv_id, "result.json")
    if not store.exists(rel):
        return None
    raw = jsonio.parse(store.read_bytes(rel), max_bytes=jsonio.MAX_RECORD_BYTES, what="result.json")
    operation = raw.get("operation") if isinstance(raw, dict) else None
    model = RESULT_MODELS.get(str(operation), InvocationResult)
    result, sha = store.read_record(rel, model, what="invocation result")
    return result, sha


def _events(store: Store, inv_id: str) -> list[Event]:
    rel = _rel(inv_id, "events.jsonl")
    if not store.exists(rel):
        return []
    lines = store.read_bytes(rel, max_bytes=1 << 30).split(b"\n")
    out = []
    for raw in lines[:-1]:  # a torn last line is ignored
        try:
            out.append(jsonio.load(Event, raw, what="event"))
        except InputError:
            continue
    return out


def _proc(pid: int) -> dict[str, Any] | None:
    info = _native.proc_info(pid)
    return None if info is None else json.loads(info)


def _alive(pid: int, token: str) -> bool:
    return _native.proc_alive(pid, token)


def _supervisor(store: Store, inv_id: str) -> SupervisorRecord | None:
    rel = _rel(inv_id, "supervisor.json")
    if not store.exists(rel):
        return None
    record, _ = store.read_record(rel, SupervisorRecord, what="supervisor.json")
    return record


def _active_child(store: Store, inv_id: str) -> ActiveChild | None:
    """The recorded running call, if any. The supervisor removes the file when a call ends, so it can
    vanish between any check and the read: a missing file is simply no active child."""
    try:
        data = store.read_bytes(_rel(inv_id, "active-child.json"))
    except InputError as exc:
        if exc.code == "file_not_found":
            return None
        raise
    return jsonio.load(ActiveChild, data, what="active-child.json")


def _child_running(child: ActiveChild) -> bool:
    if _alive(child.pid, child.start_token) or _native.group_exists(child.pgid):
        return True
    return bool(json.loads(_native.call_processes(child.pgid, None, [], child.env_tag)))


def status(root: str | Path, inv_id: str, *, now: float | None = None) -> InvocationStatus:
    """The state of an invocation (spec §5.6), from files and OS facts; writes nothing."""
    store = Store.open(root)
    request = read_request(store, inv_id)
    now = time.time() if now is None else now
    sup = _supervisor(store, inv_id)
    sup_alive = sup is not None and _alive(sup.pid, sup.start_token)
    found = read_result(store, inv_id)
    events = _events(store, inv_id)
    state: Literal["starting", "running", "completed", "lost"]
    launch_deadline = request.limits.launch_deadline_epoch
    if sup_alive:
        state = "running"
    elif found is not None:
        state = "completed"
    elif sup is None and launch_deadline is not None and now <= launch_deadline:
        state = "starting"
    else:
        state = "lost"
    beats = [e for e in events if e.event == "heartbeat"]
    last_beat = beats[-1] if beats else None
    heartbeat_age = None if last_beat is None else max(now - last_beat.at_epoch, 0.0)
    finished = [e for e in events if e.event == "call_finished"]
    child = _active_child(store, inv_id)
    current = child.call_index if child is not None and sup_alive else None
    started = [e for e in events if e.event == "call_started" and e.call_index == current]
    current_elapsed = None
    if current is not None and started:
        current_elapsed = max(now - started[-1].at_epoch, 0.0)
    cleanup: CleanupStatus
    if found is not None and child is None:
        cleanup = found[0].cleanup_status
    elif child is not None and not sup_alive:
        cleanup = "orphan_running" if _child_running(child) else "unconfirmed"
    elif child is not None:
        cleanup = "unconfirmed"
    elif any(e.event == "cleanup_confirmed" for e in events) or any(
        e.event == "call_started" for e in events
    ):
        cleanup = "confirmed"
    else:
        cleanup = "not_required"
    result_ref = None
    summary = None
    gpu_seconds = sum((e.elapsed_s or 0.0) for e in finished) * len(request.gpus)
    if found is not None:
        result, sha = found
        result_ref = ResultRef(invocation_id=inv_id, sha256=sha)
        summary = {
            "execution_status": result.execution_status,
            "measurement_validity": result.measurement_validity,
            "verdict": result.verdict,
            "stop_reason": result.stop_reason,
        }
        gpu_seconds = result.gpu_seconds
    return InvocationStatus(
        invocation_id=inv_id,
        operation=request.operation,
        state=state,
        phase=None if last_beat is None or state != "running" else last_beat.phase,
        heartbeat_age_s=heartbeat_age,
        unresponsive=bool(sup_alive and heartbeat_age is not None and heartbeat_age > UNRESPONSIVE_S),
        calls=StatusCalls(
            planned=len(request.evidence_plan),
            completed=len(finished),
            current=current,
            current_elapsed_s=current_elapsed,
        ),
        gpu_seconds=gpu_seconds,
        eta_s=_eta(
            state, len(request.evidence_plan), [e.elapsed_s or 0.0 for e in finished], current_elapsed
        ),
        cleanup_status=cleanup,
        cancel_requested=store.exists(_rel(inv_id, "cancel")),
        result_ref=result_ref,
        summary=summary,
    )


def _eta(state: str, planned: int, finished_s: list[float], current_elapsed: float | None) -> float | None:
    """Remaining calls x the mean finished call, less the current call's elapsed time (spec §3.6)."""
    if state == "completed":
        return 0.0
    if state != "running" or not finished_s:
        return None
    per_call = sum(finished_s) / len(finished_s)
    return max((planned - len(finished_s)) * per_call - (current_elapsed or 0.0), 0.0)


def root_status(root: str | Path) -> RootStatus:
    """The Target, the current Champion and every invocation that is not completed."""
    store = Store.open(root)
    _, ref = targets.load(store)
    seen: list[str] = []
    for line in store.ledger():
        if line.kind == "invocation" and line.id not in seen:
            seen.append(line.id)
    pending = [s for s in (status(store.root, i) for i in seen) if s.state != "completed"]
    champion: Literal["original"] | RecordRef = "original"
    if store.exists("champion/current.json"):
        pointer = jsonio.parse(store.read_bytes("champion/current.json"), max_bytes=1 << 20)
        sel = pointer.get("selection") if isinstance(pointer, dict) else None
        if not isinstance(sel, dict):
            raise InputError(
                "selection_invalid", "champion/current.json names no selection", path="champion/current.json"
            )
        champion = RecordRef.model_validate(sel)
    return RootStatus(root=str(store.root), target=ref, champion=champion, invocations=pending)


def cancel(root: str | Path, inv_id: str) -> InvocationStatus:
    """Asks a running supervisor to cancel; if the supervisor is gone, terminates the recorded orphan group.
    Idempotent; on a completed invocation with confirmed cleanup it only reports."""
    store = Store.open(root)
    before = status(store.root, inv_id)
    if before.state == "completed" and before.cleanup_status in ("confirmed", "not_required"):
        return before
    events = EventLog(store.root, _rel(inv_id, "events.jsonl"))
    if store.write_bytes(_rel(inv_id, "cancel"), b"").created:
        events("cancel_requested")
    sup = _supervisor(store, inv_id)
    if sup is not None and _alive(sup.pid, sup.start_token):
        return status(store.root, inv_id)
    child = _active_child(store, inv_id)
    if child is not None:
        request = read_request(store, inv_id)
        report = json.loads(
            _native.terminate(
                child.pgid,
                None,
                [],
                child.env_tag,
                request.limits.termination_grace_s,
                request.limits.cleanup_timeout_s,
            )
        )
        if report["confirmed"]:
            store.remove(_rel(inv_id, "active-child.json"))
            _clear_occupancy(request, inv_id)
            events("cleanup_confirmed", call_index=child.call_index, detail="terminated by gpuopt cancel")
        else:
            events(
                "cleanup_unconfirmed", call_index=child.call_index, detail=f"survivors {report['survivors']}"
            )
    return status(store.root, inv_id)


def _clear_occupancy(request: FrozenRequest, inv_id: str) -> None:
    from gpuopt.evaluation import locks
    from gpuopt.models.evaluation.invocation import Occupancy

    directory = locks.lock_dir()
    for uuid in request.gpus:
        rel = f"{locks.lock_name(request.host_id, uuid)}.occupancy.json"
        if _native.store_exists(str(directory), rel):
            try:
                occ = jsonio.load(
                    Occupancy, _native.store_read(str(directory), rel, 1 << 20), what="occupancy"
                )
            except InputError:
                continue
            if occ.invocation_id == inv_id:
                _native.store_remove(str(directory), rel)


# ---- submit ------------------------------------------------------------------------------------------------


def is_final(result: InvocationResult) -> bool:
    return result.execution_status == "succeeded" and (
        result.measurement_validity == "valid" or result.stop_reason == "correctness_failed"
    )


def _chain(store: Store, first: str) -> list[str]:
    out = []
    for n in range(MAX_RETRIES):
        inv_id = first if n == 0 else f"{first}-r{n}"
        if not store.exists(_rel(inv_id)):
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
    """A request frozen in memory (nothing written): its digest and the id of its first attempt."""

    store: Store
    request: dict[str, Any]
    digest: str
    first: str
    model: type[FrozenRequest]


def prepare(root: str | Path, core: dict[str, Any]) -> Prepared:
    """Freezes a request in memory: adds the Target ref, gpuopt's tool identity, the observed host and the
    GPUs, after re-verifying that the Target can run here. Writes nothing."""
    store = Store.open(root)
    target, ref = targets.load(store)
    target = targets.optimizable(target)
    targets.check_runnable(store, target, ref)
    model = REQUEST_MODELS.get(str(core.get("operation")), FrozenRequest)
    request: dict[str, Any] = {
        **core,
        "format": formats.INVOCATION_REQUEST,
        "target": ref.model_dump(),
        "tool_identity": tool_identity().model_dump(),
        "host_id": target.runtime_identity.observed.host.host_id,
        "gpus": list(target.gpus),
    }
    digest = request_digest(request)
    return Prepared(store, request, digest, base_id(digest), model)


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
    return jsonio.validate(
        prepared.model,
        {
            **prepared.request,
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
    core: dict[str, Any],
    *,
    limits: Limits,
    retry_of: str | None = None,
    keep_workspace: bool = False,
    start: bool = True,
) -> SubmitOutcome:
    """Freezes and submits an invocation. ``core`` holds the operation's fields (``operation``, ``plan``,
    ``evidence_plan``, ``variants`` and any operation-specific ones); gpuopt adds the Target ref, its tool
    identity, the observed host and the GPUs. Identical requests dedupe; a failed attempt needs
    ``retry_of``."""
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
        published = store.write_record(_rel(inv_id, "request.json"), frozen)
        store.ledger_append("invocation", inv_id, published, ledger_keys(frozen.model_dump(mode="json")))
    if start:
        start_supervisor(store.root, inv_id)
    return _outcome(store, inv_id, digest, deduplicated=False)


def start_supervisor(root: Path, inv_id: str) -> None:
    """Starts the detached supervisor (its first process forks the real one and exits at once)."""
    inv_dir = root / _rel(inv_id)
    with open(inv_dir / "supervisor.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuopt.evaluation.supervisor", "detached", str(root), inv_id],
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
        targets.check_runnable(store, target, request.target)

    return Supervisor(
        spec=spec,
        inv_dir=store.root / _rel(inv_id),
        mode="detached",
        launch_deadline_epoch=request.limits.launch_deadline_epoch,
        tool_identity=request.tool_identity,
        ledger_store=store,
        target_checks=checks,
    )


def execution_spec(store: Store, inv_id: str, request: FrozenRequest, target: Target) -> ExecutionSpec:
    contract = getattr(request, "contract", None)
    binding = getattr(request, "reference_binding", None)
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
        restore_checks=list(getattr(request, "restore_checks", [])),
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
    core = {
        "operation": "readiness_smoke",
        "plan": {
            "case_ids": cases,
            "pairs": None,
            "calls_per_case": 1,
            "samples_per_call": samples_per_call,
            "warmup_per_call": 0,
            "seed": target.statistics.seed,
            "lifecycle": "isolated",
        },
        "evidence_plan": [s.model_dump() for s in steps],
        "variants": {"original": {"kind": target.original.kind, "digest": target.original.digest}},
    }
    return submit(root, core, limits=limits or Limits(), retry_of=retry_of, keep_workspace=keep_workspace)


def wait(root: str | Path, inv_id: str, *, timeout_s: float, poll_s: float = 0.05) -> InvocationStatus:
    """Polls status until the invocation is completed or lost (or the timeout passes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        st = status(root, inv_id)
        if st.state in ("completed", "lost") or time.monotonic() >= deadline:
            return st
        time.sleep(poll_s)
