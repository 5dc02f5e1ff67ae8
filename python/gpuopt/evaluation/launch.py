"""One supervised driver call: gated launch, output pumping with caps, deadlines, cancel and cleanup.

The driver starts as a tiny gate process in a new session (its own process group) that blocks on a pipe;
only after ``active-child.json`` is durable does the supervisor send the gate the driver's argv, cwd and
environment, and the gate ``execve``s the driver. So no driver process ever exists unrecorded, and if the
supervisor dies first the gate exits without running anything. stdout and stderr are drained continuously
into logs that keep the first and last 256 KiB. On a deadline, a cancel or a lost caller the call's group
and every descendant that escaped it get SIGTERM, a grace period, SIGKILL, and cleanup is confirmed only
when nothing is left (see ``gpuopt._native.terminate``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import selectors
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gpuopt import _native
from gpuopt.models.evaluation.invocation import CallWindow, CleanupReceipt, StreamReceipt

HEAD_BYTES = 256 << 10
TAIL_BYTES = 256 << 10
SETTLE_S = 1.0
POLL_S = 0.05
CANCEL_POLL_S = 0.1
PIPE_BYTES = 1 << 20

# The gate: reads the launch payload from fd 3 until EOF, then execs the driver; no payload, no driver.
GATE_CODE = r"""
import json, os, sys
chunks = []
while True:
    b = os.read(3, 65536)
    if not b:
        break
    chunks.append(b)
os.close(3)
if not chunks:
    os._exit(125)
p = json.loads(b"".join(chunks))
try:
    os.chdir(p["cwd"])
    os.execve(p["path"], p["argv"], p["env"])
except OSError as e:
    os.write(2, ("gpuopt: cannot execute %s: %s\n" % (p["path"], e)).encode())
    os._exit(127)
"""


class CappedLog:
    """A log that keeps the first and last bytes of a stream around ``[… N bytes omitted …]``."""

    def __init__(self, path: Path, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.path = path
        self.head_limit = head
        self.tail_limit = tail
        self.head_len = 0
        self.tail = bytearray()
        self.total = 0
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if self.head_len < self.head_limit:
            take = data[: self.head_limit - self.head_len]
            os.write(self.fd, take)
            self.head_len += len(take)
            data = data[len(take) :]
        if data:
            self.tail += data
            if len(self.tail) > 4 * self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def close(self) -> StreamReceipt:
        kept_tail = bytes(self.tail[-self.tail_limit :]) if self.tail else b""
        omitted = self.total - self.head_len - len(kept_tail)
        if omitted > 0:
            os.write(self.fd, f"\n[… {omitted} bytes omitted …]\n".encode())
        if kept_tail:
            os.write(self.fd, kept_tail)
        os.fsync(self.fd)
        os.close(self.fd)
        data = self.path.read_bytes()
        return StreamReceipt(
            sha256=hashlib.sha256(data).hexdigest(),
            total_bytes=self.total,
            kept_bytes=self.head_len + len(kept_tail),
            truncated=omitted > 0,
        )


StopCause = Literal["command_timeout", "operation_timeout", "absolute_deadline", "cancelled"]


@dataclass
class Deadlines:
    """Monotonic deadlines of a call: its own, the operation's and the absolute one (epochs converted once)."""

    operation_mono: float
    absolute_mono: float | None

    def for_call(self, start: float, command_timeout_s: float) -> tuple[float, StopCause]:
        candidates: list[tuple[float, StopCause]] = [
            (start + command_timeout_s, "command_timeout"),
            (self.operation_mono, "operation_timeout"),
        ]
        if self.absolute_mono is not None:
            candidates.append((self.absolute_mono, "absolute_deadline"))
        return min(candidates, key=lambda c: c[0])


@dataclass
class LaunchSpec:
    call_index: int
    call_dir: Path
    argv: list[str]
    env: dict[str, str]
    command_timeout_s: float
    termination_grace_s: float
    cleanup_timeout_s: float


@dataclass
class CallOutcome:
    status: Literal["completed", "failed", "timed_out", "cancelled"]
    stop_reason: str | None
    returncode: int | None
    elapsed_s: float
    window: CallWindow
    stdout: StreamReceipt
    stderr: StreamReceipt
    leftover_processes: int
    cleanup: CleanupReceipt
    pid: int
    events: list[tuple[str, dict[str, object]]] = field(default_factory=list)


@dataclass
class Hooks:
    """What the supervisor does around a call: record the child before it runs, note events, check cancel."""

    record_child: Callable[[int, str, str], None]
    child_gone: Callable[[], None]
    event: Callable[..., None]
    cancelled: Callable[[], bool]
    caller_fd: int | None = None


def _set_pipe_size(fd: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[attr-defined]


def _spawn_gate() -> tuple[int, int, int, int]:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    gate_r, gate_w = os.pipe()
    for fd in (out_r, err_r):
        _set_pipe_size(fd)
    # dup2 onto itself would keep O_CLOEXEC; make sure every source fd is above 3.
    sources = []
    for fd in (out_w, err_w, gate_r):
        if fd <= 3:
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            fd = moved
        sources.append(fd)
    out_w, err_w, gate_r = sources
    pid = os.posix_spawn(
        sys.executable,
        [sys.executable, "-I", "-S", "-c", GATE_CODE],
        {},
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_w, 1),
            (os.POSIX_SPAWN_DUP2, err_w, 2),
            (os.POSIX_SPAWN_DUP2, gate_r, 3),
        ],
        setsid=True,
    )
    for fd in (out_w, err_w, gate_r):
        os.close(fd)
    return pid, out_r, err_r, gate_w


def _returncode(status: int) -> int:
    return os.waitstatus_to_exitcode(status)


def run_call(spec: LaunchSpec, deadlines: Deadlines, hooks: Hooks) -> CallOutcome:
    """Launches one driver call and supervises it to the end (see the module documentation)."""
    me = os.getpid()
    (spec.call_dir / "output").mkdir(parents=True, exist_ok=True)
    (spec.call_dir / "tmp").mkdir(exist_ok=True)
    stdout = CappedLog(spec.call_dir / "stdout.log")
    stderr = CappedLog(spec.call_dir / "stderr.log")
    pid, out_r, err_r, gate_w = _spawn_gate()
    info = _native.proc_info(pid)
    token = json.loads(info)["start_token"] if info else "0"
    tag = f"GPUOPT_REQUEST={spec.env.get('GPUOPT_REQUEST', '')}"
    try:
        hooks.record_child(pid, str(token), tag)
    except BaseException:
        os.close(gate_w)  # the gate exits without running the driver
        raise
    hooks.event("call_started", call_index=spec.call_index, pid=pid, pgid=pid)
    payload = json.dumps(
        {"path": spec.argv[0], "argv": spec.argv, "env": spec.env, "cwd": str(spec.call_dir)}
    ).encode()
    start_mono = time.monotonic()
    start_ns = time.monotonic_ns()
    try:
        os.write(gate_w, payload)
    except OSError:
        pass  # the gate died; the call fails below with its exit status
    os.close(gate_w)

    call_deadline, cause = deadlines.for_call(start_mono, spec.command_timeout_s)
    sel = selectors.DefaultSelector()
    streams = {out_r: stdout, err_r: stderr}
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    if hooks.caller_fd is not None:
        sel.register(hooks.caller_fd, selectors.EVENT_READ)
    open_fds = set(streams)
    returncode: int | None = None
    end_ns: int | None = None
    stop: StopCause | None = None
    next_cancel_check = 0.0

    def drain(timeout: float) -> None:
        for key, _ in sel.select(timeout):
            fd = int(key.fd)
            if fd == hooks.caller_fd:
                nonlocal stop
                try:
                    if not os.read(fd, 1):
                        stop = stop or "cancelled"
                        sel.unregister(fd)
                except BlockingIOError:
                    pass
                continue
            try:
                data = os.read(fd, PIPE_BYTES)
            except BlockingIOError:
                continue
            if data:
                streams[fd].feed(data)
            else:
                sel.unregister(fd)
                open_fds.discard(fd)

    while True:
        drain(POLL_S)
        if returncode is None:
            done_pid, status = os.waitpid(pid, os.WNOHANG)
            if done_pid == pid:
                returncode = _returncode(status)
                end_ns = time.monotonic_ns()
        if returncode is not None:
            break
        now = time.monotonic()
        if now >= call_deadline:
            stop = cause
        if now >= next_cancel_check:
            next_cancel_check = now + CANCEL_POLL_S
            if hooks.cancelled():
                stop = "cancelled"
        if stop is not None:
            break

    if stop is not None:
        hooks.event("termination", call_index=spec.call_index, signal="SIGTERM", detail=stop)
        report = json.loads(
            _native.terminate(pid, me, [], tag, spec.termination_grace_s, spec.cleanup_timeout_s)
        )
        if "SIGKILL" in report["signals"]:
            hooks.event("termination", call_index=spec.call_index, signal="SIGKILL", detail=stop)
        for child, code in report["reaped"]:
            if child == pid and returncode is None:
                returncode = code
        end_ns = end_ns or time.monotonic_ns()
        leftover = 0
    else:
        settled = json.loads(_native.settle(pid, me, [], tag, SETTLE_S))
        left = settled["left"]
        leftover = len(left)
        report = {"signals": [], "escaped": [], "survivors": [], "elapsed_s": 0.0, "confirmed": True}
        if left:
            report = json.loads(
                _native.terminate(pid, me, [], tag, spec.termination_grace_s, spec.cleanup_timeout_s)
            )
    # Everything that could hold the pipes is gone (or unconfirmed): read what is left, without blocking long.
    drain_until = time.monotonic() + (1.0 if report["confirmed"] else 0.1)
    while open_fds and time.monotonic() < drain_until:
        drain(0.02)
    sel.close()
    for fd in (out_r, err_r):
        os.close(fd)
    end_ns = end_ns or time.monotonic_ns()
    cleanup = CleanupReceipt(
        status="confirmed" if report["confirmed"] else "unconfirmed",
        signals=list(report["signals"]),
        escaped=len(report["escaped"]),
        survivors=list(report["survivors"]),
        elapsed_s=float(report["elapsed_s"]),
    )
    if cleanup.status == "confirmed":
        hooks.child_gone()
        hooks.event("cleanup_confirmed", call_index=spec.call_index)
    else:
        hooks.event("cleanup_unconfirmed", call_index=spec.call_index, detail=f"survivors {cleanup.survivors}")

    status: Literal["completed", "failed", "timed_out", "cancelled"]
    stop_reason: str | None
    if stop == "cancelled":
        status, stop_reason = "cancelled", "cancelled"
    elif stop is not None:
        status, stop_reason = "timed_out", stop
    elif cleanup.status != "confirmed":
        status, stop_reason = "failed", "cleanup_unconfirmed"
    elif returncode != 0:
        status, stop_reason = "failed", "command_failed"
    elif leftover:
        status, stop_reason = "failed", "driver_left_processes"
    else:
        status, stop_reason = "completed", None
    elapsed = (end_ns - start_ns) / 1e9
    outcome = CallOutcome(
        status=status,
        stop_reason=stop_reason,
        returncode=returncode,
        elapsed_s=max(elapsed, 0.0),
        window=CallWindow(start_mono_ns=start_ns, end_mono_ns=end_ns),
        stdout=stdout.close(),
        stderr=stderr.close(),
        leftover_processes=leftover,
        cleanup=cleanup,
        pid=pid,
    )
    hooks.event(
        "call_finished", call_index=spec.call_index, status=status, returncode=returncode, elapsed_s=outcome.elapsed_s
    )
    return outcome
