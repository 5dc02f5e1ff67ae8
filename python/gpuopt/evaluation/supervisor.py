"""The supervisor: one process per invocation that owns its launch-deadline and tool-identity checks, GPU
locks and orphan recovery, deadlines, heartbeats, events, driver launches and cleanup, and runs the worker.

Its process starts in :mod:`gpuopt.evaluation.detached`, which hands it the operation's handler. It marks
itself a child subreaper, so a driver's escaped descendants stay findable and are killed with its group.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Literal

from gpuopt import _native
from gpuopt.errors import GpuoptError, InputError
from gpuopt.evaluation import jsonio, locks
from gpuopt.evaluation import sampling as sampling_
from gpuopt.evaluation.execution import Execution, ExecutionSpec, OperationHandler
from gpuopt.evaluation.executor import Worker, build_result, refused_result
from gpuopt.evaluation.identity import current_tool_identity
from gpuopt.evaluation.launch import CallOutcome, Deadlines, Hooks, LaunchSpec, run_call
from gpuopt.evaluation.records import mark_stale
from gpuopt.evaluation.store import Published, Store, ledger_keys
from gpuopt.host import host_identity
from gpuopt.models.evaluation.invocation import InvocationResult, Tables, ToolIdentity, Warning
from gpuopt.models.evaluation.status import ActiveChild, ProcessRef, SupervisorRecord

HEARTBEAT_S = 10.0
UNSYNCED_EVENTS = frozenset({"heartbeat", "call_started", "call_finished", "termination"})
"""Progress events whose facts are durable elsewhere (active-child.json, receipts): written, not fsynced."""


class EventLog:
    """``events.jsonl``: sequenced, flock'd, fsynced appends (shared with ``gpuopt cancel``)."""

    def __init__(self, base: Path, rel: str) -> None:
        self.base = base
        self.rel = rel

    def __call__(self, event: str, **fields: Any) -> None:

        entry = {"at_epoch": time.time(), "at_mono_ns": time.monotonic_ns(), "event": event}
        entry.update({k: v for k, v in fields.items() if v is not None})
        sync = event not in UNSYNCED_EVENTS
        _native.ledger_append(str(self.base), self.rel, jsonio.canonical(entry), sync)


class Heartbeat(threading.Thread):
    """Writes ``heartbeat {phase}`` every 10 s and at every phase change."""

    def __init__(self, events: EventLog) -> None:
        super().__init__(name="gpuopt-heartbeat", daemon=True)
        self.events = events
        self.phase = "between_calls"
        self.stopped = threading.Event()
        self.lock = threading.Lock()

    def set_phase(self, phase: str) -> None:
        with self.lock:
            self.phase = phase
        self.beat()

    def beat(self) -> None:

        with self.lock:
            phase = self.phase
        with contextlib.suppress(GpuoptError):  # a full disk must not kill the supervisor
            self.events("heartbeat", phase=phase)

    def run(self) -> None:
        while not self.stopped.wait(HEARTBEAT_S):
            self.beat()


class Supervisor:
    """Supervises one invocation directory."""

    def __init__(
        self,
        *,
        spec: ExecutionSpec,
        inv_dir: Path,
        handler: OperationHandler,
        mode: Literal["detached", "probe"],
        launch_deadline_epoch: float | None,
        tool_identity: ToolIdentity | None,
        caller_fd: int | None = None,
        ledger_store: Store | None = None,
        target_checks: Any = None,
    ) -> None:

        self.spec = spec
        self.handler = handler
        self.inv_dir = inv_dir
        self.mode = mode
        self.launch_deadline_epoch = launch_deadline_epoch
        self.tool_identity = tool_identity
        self.caller_fd = caller_fd
        self.ledger_store = ledger_store
        self.target_checks = target_checks
        self.inv_store = Store(inv_dir)
        self.events = EventLog(inv_dir, "events.jsonl")
        self.heartbeat = Heartbeat(self.events)
        self.me = os.getpid()
        self.token = str(json.loads(_native.proc_info(self.me) or b"{}").get("start_token", "0"))
        self.gpu_locks: locks.GpuLocks | None = None
        self.caller_gone = False

    # ---- hooks for the call runner ---------------------------------------------------------------------

    def cancelled(self) -> bool:
        if self.caller_fd is not None and not self.caller_gone:
            import select

            readable, _, _ = select.select([self.caller_fd], [], [], 0)
            if readable and not os.read(self.caller_fd, 1):
                self.caller_gone = True
        return self.caller_gone or (self.inv_dir / "cancel").exists()

    def _record_child(self, call_index: int, pid: int, token: str, tag: str) -> None:

        child = ActiveChild(
            call_index=call_index,
            pid=pid,
            start_token=token,
            pgid=pid,
            cgroup=None,
            gpus=self.spec.gpus,
            env_tag=tag,
        )
        # Visibility is what matters here: a killed supervisor loses nothing, and a power cut kills the child.
        self.inv_store.replace_bytes("active-child.json", jsonio.record_bytes(child), durable=False)
        if self.gpu_locks is not None:
            self.gpu_locks.occupy(
                ProcessRef(pid=self.me, start_token=self.token),
                ProcessRef(pid=pid, start_token=token),
                pid,
                tag,
            )

    def _child_gone(self) -> None:
        self.inv_store.remove("active-child.json", durable=False)
        if self.gpu_locks is not None:
            self.gpu_locks.clear()

    def run_call(self, spec: LaunchSpec, deadlines: Deadlines) -> CallOutcome:

        self.heartbeat.set_phase("in_call")
        hooks = Hooks(
            record_child=lambda pid, token, tag: self._record_child(spec.call_index, pid, token, tag),
            child_gone=self._child_gone,
            event=self.events,
            cancelled=self.cancelled,
            caller_fd=None if self.caller_gone else self.caller_fd,
        )
        try:
            return run_call(spec, deadlines, hooks)
        finally:
            self.heartbeat.set_phase("between_calls")

    # ---- the run ---------------------------------------------------------------------------------------

    def _deadlines(self, started_mono: float, started_epoch: float) -> Deadlines:

        limits = self.spec.limits
        absolute = None
        if limits.absolute_deadline_epoch is not None:
            absolute = started_mono + (limits.absolute_deadline_epoch - started_epoch)
        return Deadlines(operation_mono=started_mono + limits.operation_timeout_s, absolute_mono=absolute)

    def _write_result(self, result: InvocationResult) -> tuple[InvocationResult, Any]:
        """Writes ``result.json``; a result bound to the Champion is published under the Champion lock only
        if the pointer still has the bound hash, else it is re-labelled ``stale_reference``."""

        binding = self.spec.binding
        if binding is None or self.ledger_store is None:
            return result, self.inv_store.write_record("result.json", result)
        rel = f"invocations/{self.spec.invocation_id}/result.json"
        data = jsonio.record_bytes(result)
        try:
            _native.store_cas(
                str(self.ledger_store.root),
                "champion/current.json",
                "locks/champion.lock",
                binding.pointer_sha256,
                None,
                [(rel, data)],
            )
        except InputError as exc:
            if exc.code != "stale_reference":
                raise
            result = mark_stale(result, observed=exc.observed)
            return result, self.inv_store.write_record("result.json", result)
        mtime_ns = os.stat(self.inv_dir / "result.json", follow_symlinks=False).st_mtime_ns
        return result, Published("result.json", jsonio.sha256_hex(data), True, mtime_ns)

    def _publish(self, result: InvocationResult) -> None:

        result, published = self._write_result(result)
        if self.ledger_store is not None:
            rel = f"invocations/{self.spec.invocation_id}/result.json"
            self.ledger_store.ledger_append(
                "result",
                self.spec.invocation_id,
                Published(rel, published.sha256, published.created, published.mtime_ns),
                ledger_keys(result.model_dump(mode="json")),
            )
        self.events("result_published", sha256=published.sha256)

    def run(self) -> int:

        started_epoch, started_mono = time.time(), time.monotonic()
        record = SupervisorRecord(
            pid=self.me,
            start_token=self.token,
            started_at_epoch=started_epoch,
            lock_dir=str(locks.lock_dir()),
            mode=self.mode,
        )
        if not self.inv_store.write_record("supervisor.json", record).created:
            return 0  # another supervisor owns this invocation
        if self.launch_deadline_epoch is not None and started_epoch > self.launch_deadline_epoch:
            self.events("launch_rejected", detail="the launch deadline passed before the supervisor started")
            self._publish(
                refused_result(
                    self.handler,
                    self.spec,
                    "launch_deadline_exceeded",
                    "invalid",
                    started_at=started_epoch,
                    message="the supervisor started after the launch deadline",
                )
            )
            self.events("supervisor_finished")
            return 0
        _native.set_child_subreaper()
        self.events("supervisor_started", pid=self.me)
        self.heartbeat.start()
        try:
            result = self._supervise(started_epoch, started_mono)
            if self.tool_identity is not None and current_tool_identity() != self.tool_identity:
                result = result.model_copy(
                    update={
                        "execution_status": "invalid",
                        "measurement_validity": "invalid",
                        "verdict": "not_evaluated",
                        "stop_reason": "tool_identity_changed",
                    }
                )
            self.heartbeat.set_phase("finishing")
            self._publish(result)
        finally:
            self.heartbeat.stopped.set()
            if self.gpu_locks is not None:
                self.gpu_locks.release()
            self.events("supervisor_finished")
        return 0

    def _supervise(self, started_epoch: float, started_mono: float) -> InvocationResult:

        spec = self.spec
        try:
            if self.tool_identity is not None and current_tool_identity() != self.tool_identity:
                raise InputError(
                    "tool_identity_changed", "gpuopt's modules changed since the request was frozen"
                )
            if self.target_checks is not None:
                self.target_checks()
        except GpuoptError as exc:
            return refused_result(
                self.handler, spec, exc.code, "invalid", started_at=started_epoch, message=exc.message
            )
        deadlines = self._deadlines(started_mono, started_epoch)
        sampling = None
        if sampling_.declared(spec):
            sampling = sampling_.Sampling(spec, self.inv_dir, self.events)
            failure = sampling.start()
            if failure is not None:
                return refused_result(
                    self.handler,
                    spec,
                    "sampler_failed",
                    "succeeded",
                    started_at=started_epoch,
                    message=f"the declared sampler did not start: {failure}",
                    sampling=sampling.outcome,
                )
        try:
            return self._supervise_sampled(started_epoch, started_mono, deadlines, sampling)
        finally:
            if sampling is not None:
                sampling.stop()

    def _supervise_sampled(
        self,
        started_epoch: float,
        started_mono: float,
        deadlines: Deadlines,
        sampling: sampling_.Sampling | None,
    ) -> InvocationResult:

        spec = self.spec
        if spec.gpus:
            host_id = _host_id()
            self.gpu_locks = locks.GpuLocks(locks.lock_dir(), host_id, spec.gpus, spec.invocation_id)
            self.heartbeat.set_phase("resource_wait")
            self.events("resource_wait_started")
            wait_until = min(started_mono + spec.limits.resource_wait_timeout_s, deadlines.operation_mono)
            if not self.gpu_locks.acquire(wait_until, self.cancelled):
                message = "the GPU locks were not acquired"
                if self.cancelled():
                    return refused_result(
                        self.handler,
                        spec,
                        "cancelled",
                        "cancelled",
                        started_at=started_epoch,
                        message=message,
                    )
                return refused_result(
                    self.handler,
                    spec,
                    "resource_wait_timeout",
                    "timed_out",
                    started_at=started_epoch,
                    message=message,
                )
            try:
                for recovered in self.gpu_locks.recover_orphans(
                    spec.limits.termination_grace_s, spec.limits.cleanup_timeout_s
                ):
                    self.events("orphan_recovered", detail=recovered)
            except GpuoptError as exc:
                return refused_result(
                    self.handler, spec, exc.code, "failed", started_at=started_epoch, message=exc.message
                )
            self.events("resources_acquired")
            self.heartbeat.set_phase("between_calls")
        if sampling is not None:
            idle = sampling.pre_idle(self.cancelled)
            if idle is not None and idle.status == "busy" and not sampling.allow_busy:
                return refused_result(
                    self.handler,
                    spec,
                    "gpu_busy",
                    "invalid",
                    started_at=started_epoch,
                    message=f"the idle check found the GPUs busy: {idle.detail}"[:4000],
                    sampling=sampling.outcome,
                )
        # An operation whose calls launch differently (a capture) hands its own Worker subclass.
        worker_class: type[Worker] = getattr(self.handler, "worker_class", Worker)
        worker = worker_class(spec, self.inv_dir, self, deadlines)
        try:
            ex = worker.execute()
            if sampling is not None:
                sampling.finish(ex)
            tables = worker.tables(ex)
            if sampling is not None:
                tables = tables.model_copy(update={"resources": sampling.table()})
        except Exception as exc:  # a defect in the worker: recorded, never a silent success
            ex = Execution()
            ex.sampling = None if sampling is None else sampling.outcome
            ex.stop("failed", "worker_error")
            ex.warnings.append(Warning(code="worker_error", message=f"{type(exc).__name__}: {exc}"[:4000]))
            traceback.print_exc()
            tables = Tables(samples=None, resources=None)
        cleanup = "not_required"
        if ex.receipts:
            cleanup = (
                "confirmed" if all(r.cleanup.status == "confirmed" for r in ex.receipts) else "unconfirmed"
            )
        held = 0.0 if self.gpu_locks is None else self.gpu_locks.held_s() * len(spec.gpus)
        worker.remove_workspace()
        return build_result(
            self.handler,
            spec,
            ex,
            started_at=started_epoch,
            gpu_seconds_held=held,
            cleanup_status=cleanup,
            tables=tables,
        )


def _host_id() -> str:
    """This host's id, as the doctor identity defines it."""
    return host_identity().host_id
