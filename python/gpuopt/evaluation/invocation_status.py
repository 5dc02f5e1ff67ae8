"""Status, cancel and wait of supervised invocations, derived from the files and OS facts only (pid plus
start token); status never writes. :mod:`gpuopt.evaluation.invocation` submits."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio, locks
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.records import invocation_rel, read_request, read_result
from gpuopt.evaluation.store import Store
from gpuopt.evaluation.supervisor import EventLog
from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.invocation import CleanupStatus, FrozenRequest
from gpuopt.models.evaluation.status import (
    ActiveChild,
    Event,
    InvocationStatus,
    Occupancy,
    RootStatus,
    StatusCalls,
    SupervisorRecord,
)

UNRESPONSIVE_S = 60.0


def _events(store: Store, inv_id: str) -> list[Event]:
    rel = invocation_rel(inv_id, "events.jsonl")
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
    rel = invocation_rel(inv_id, "supervisor.json")
    if not store.exists(rel):
        return None
    record, _ = store.read_record(rel, SupervisorRecord, what="supervisor.json")
    return record


def _active_child(store: Store, inv_id: str) -> ActiveChild | None:
    """The recorded running call, if any. The supervisor removes the file when a call ends, so it can
    vanish between any check and the read: a missing file is simply no active child."""
    try:
        data = store.read_bytes(invocation_rel(inv_id, "active-child.json"))
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
        cancel_requested=store.exists(invocation_rel(inv_id, "cancel")),
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
    events = EventLog(store.root, invocation_rel(inv_id, "events.jsonl"))
    if store.write_bytes(invocation_rel(inv_id, "cancel"), b"").created:
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
            store.remove(invocation_rel(inv_id, "active-child.json"))
            _clear_occupancy(request, inv_id)
            events("cleanup_confirmed", call_index=child.call_index, detail="terminated by gpuopt cancel")
        else:
            events(
                "cleanup_unconfirmed", call_index=child.call_index, detail=f"survivors {report['survivors']}"
            )
    return status(store.root, inv_id)


def _clear_occupancy(request: FrozenRequest, inv_id: str) -> None:

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


def wait(root: str | Path, inv_id: str, *, timeout_s: float, poll_s: float = 0.05) -> InvocationStatus:
    """Polls status until the invocation is completed or lost (or the timeout passes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        st = status(root, inv_id)
        if st.state in ("completed", "lost") or time.monotonic() >= deadline:
            return st
        time.sleep(poll_s)
