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
from typing import Any, Literal

from gpuopt import _native
from gpuopt.models.evaluation.invocation import CallWindow, CleanupReceipt, StreamReceipt

HEAD_BYTES = 256 << 10
TAIL_BYTES = 256 << 10
SETTLE_S = 1.0
POLL_S = 0.05
CANCEL_POLL_S = 0.1
PIPE_BYTES = 1 << 20

# The gate: reads the launch payload (NUL-separated: path, cwd, argc, argv..., KEY=VALUE...) from fd 3 until
# EOF, then execs the driver; no payload, no driver. It imports nothing but os, to start fast.
GATE_CODE = r"""
import os
chunks = []
while True:
    b = os.read(3, 65536)
    if not b:
        break
    chunks.append(b)
os.close(3)
if not chunks:
    os._exit(125)
p = b"".join(chunks).split(b"\0")
n = int(p[2])
env = dict(e.split(b"=", 1) for e in p[3 + n :])
try:
    os.chdir(p[1])
    os.execve(p[0], p[3 : 3 + n], env)
except OSError as e:
    os.write(2, b"gpuopt: cannot execute " + p[0] + b": " + str(e).encode() + b"\n")
    os._exit(127)
"""


def gate_payload(path: str, cwd: str, argv: list[str], env: dict[str, str]) -> bytes:
    """What the gate reads: NUL-separated fields (no NUL can occur in a path, argument or variable)."""
    fields = [path, cwd, str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items())]
    return b"\0".join(os.fsencode(f) for f in fields)


class CappedLog:
    """A log that keeps the first and last bytes of a stream around ``[… N bytes omitted …]``."""

    def __init__(self, path: Path, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.path = path
        self.head_limit = head
        self.tail_limit = tail
        self.head_len = 0
        self.tail = bytearray()
        self.total = 0
        # 0600: a driver's output may hold anything its environment holds (a token it printed).
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

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
    """Monotonic deadlines: the call's own, the operation's and the absolute one (epochs converted once)."""

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
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


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


class _Call:
    """The state of one running call: its pipes, logs, deadlines and what ended it."""

    def __init__(self, spec: LaunchSpec, deadlines: Deadlines, hooks: Hooks) -> None:
        self.spec = spec
        self.hooks = hooks
        self.me = os.getpid()
        (spec.call_dir / "output").mkdir(parents=True, exist_ok=True)
        (spec.call_dir / "tmp").mkdir(exist_ok=True)
        self.stdout = CappedLog(spec.call_dir / "stdout.log")
        self.stderr = CappedLog(spec.call_dir / "stderr.log")
        self.tag = f"GPUOPT_REQUEST={spec.env.get('GPUOPT_REQUEST', '')}"
        self.deadlines = deadlines
        self.returncode: int | None = None
        self.end_ns: int | None = None
        self.stop: StopCause | None = None
        self.sel = selectors.DefaultSelector()
        self.streams: dict[int, CappedLog] = {}
        self.open_fds: set[int] = set()
        self.exit_fd: int | None = None  # a pidfd: readable once the driver exits (Linux >= 5.3)

    def launch(self) -> None:
        """Spawns the gate, records the child, then releases the driver."""
        pid, out_r, err_r, gate_w = _spawn_gate()
        self.pid = pid
        info = _native.proc_info(pid)
        token = json.loads(info)["start_token"] if info else "0"
        try:
            self.hooks.record_child(pid, str(token), self.tag)
        except BaseException:
            os.close(gate_w)  # the gate exits without running the driver
            raise
        self.hooks.event("call_started", call_index=self.spec.call_index, pid=pid, pgid=pid)
        payload = memoryview(
            gate_payload(self.spec.argv[0], str(self.spec.call_dir), self.spec.argv, self.spec.env)
        )
        self.start_mono = time.monotonic()
        self.start_ns = time.monotonic_ns()
        with contextlib.suppress(OSError):  # a dead gate shows in its exit status below
            while payload:
                payload = payload[os.write(gate_w, payload) :]
        os.close(gate_w)
        self.streams = {out_r: self.stdout, err_r: self.stderr}
        for fd in self.streams:
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
        if self.hooks.caller_fd is not None:
            self.sel.register(self.hooks.caller_fd, selectors.EVENT_READ)
        self.open_fds = set(self.streams)
        # Without it, an exit after the pipes' EOF is seen only at the next poll (up to POLL_S later).
        with contextlib.suppress(AttributeError, OSError):
            self.exit_fd = os.pidfd_open(self.pid)
            self.sel.register(self.exit_fd, selectors.EVENT_READ)

    def drain(self, timeout: float) -> None:
        for key, _ in self.sel.select(timeout):
            fd = int(key.fd)
            if fd == self.exit_fd:
                continue  # the driver exited: the caller reaps it next
            if fd == self.hooks.caller_fd:
                with contextlib.suppress(BlockingIOError):
                    if not os.read(fd, 1):
                        self.stop = self.stop or "cancelled"
                        self.sel.unregister(fd)
                continue
            try:
                data = os.read(fd, PIPE_BYTES)
            except BlockingIOError:
                continue
            if data:
                self.streams[fd].feed(data)
            else:
                self.sel.unregister(fd)
                self.open_fds.discard(fd)

    def watch(self) -> None:
        """Pumps output until the driver exits or a deadline, a cancel or a lost caller stops it."""
        call_deadline, cause = self.deadlines.for_call(self.start_mono, self.spec.command_timeout_s)
        next_cancel_check = 0.0
        while self.stop is None:
            # Never sleep past the deadline, and check it before reaping: an exit first seen after the
            # deadline cannot be shown to have come before it, so it counts as the timeout.
            self.drain(min(POLL_S, max(0.0, call_deadline - time.monotonic())))
            now = time.monotonic()
            if now >= call_deadline:
                self.stop = cause
                return
            done_pid, status = os.waitpid(self.pid, os.WNOHANG)
            if done_pid == self.pid:
                self.returncode = _returncode(status)
                self.end_ns = time.monotonic_ns()
                return
            if now >= next_cancel_check:
                next_cancel_check = now + CANCEL_POLL_S
                if self.hooks.cancelled():
                    self.stop = "cancelled"

    def cleanup(self) -> tuple[dict[str, Any], int]:
        """Terminates a stopped call, or settles an exited one; returns the report and leftover count."""
        spec = self.spec
        if self.stop is not None:
            self.hooks.event("termination", call_index=spec.call_index, signal="SIGTERM", detail=self.stop)
            report = json.loads(
                _native.terminate(
                    self.pid, self.me, [], self.tag, spec.termination_grace_s, spec.cleanup_timeout_s
                )
            )
            if "SIGKILL" in report["signals"]:
                self.hooks.event(
                    "termination", call_index=spec.call_index, signal="SIGKILL", detail=self.stop
                )
            for child, code in report["reaped"]:
                if child == self.pid and self.returncode is None:
                    self.returncode = code
            return report, 0
        left = json.loads(_native.settle(self.pid, self.me, [], self.tag, SETTLE_S))["left"]
        if not left:
            return {"signals": [], "escaped": [], "survivors": [], "elapsed_s": 0.0, "confirmed": True}, 0
        report = json.loads(
            _native.terminate(
                self.pid, self.me, [], self.tag, spec.termination_grace_s, spec.cleanup_timeout_s
            )
        )
        return report, len(left)

    def close_pipes(self, confirmed: bool) -> None:
        """Reads what is left in the pipes (everything holding them is gone, or unconfirmed), then closes."""
        if self.exit_fd is not None:
            self.sel.unregister(self.exit_fd)  # it stays readable: it would turn the drain into a spin
        drain_until = time.monotonic() + (1.0 if confirmed else 0.1)
        while self.open_fds and time.monotonic() < drain_until:
            self.drain(0.02)
        self.sel.close()
        for fd in self.streams:
            os.close(fd)
        if self.exit_fd is not None:
            os.close(self.exit_fd)

    def classify(self, cleanup: CleanupReceipt, leftover: int) -> tuple[CallStatus, str | None]:
        if self.stop == "cancelled":
            return "cancelled", "cancelled"
        if self.stop is not None:
            return "timed_out", self.stop
        if cleanup.status != "confirmed":
            return "failed", "cleanup_unconfirmed"
        if self.returncode != 0:
            return "failed", "command_failed"
        if leftover:
            return "failed", "driver_left_processes"
        return "completed", None


CallStatus = Literal["completed", "failed", "timed_out", "cancelled"]


def run_call(spec: LaunchSpec, deadlines: Deadlines, hooks: Hooks) -> CallOutcome:
    """Launches one driver call and supervises it to the end (see the module documentation)."""
    call = _Call(spec, deadlines, hooks)
    call.launch()
    call.watch()
    report, leftover = call.cleanup()
    call.close_pipes(bool(report["confirmed"]))
    end_ns = call.end_ns or time.monotonic_ns()
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
        hooks.event(
            "cleanup_unconfirmed", call_index=spec.call_index, detail=f"survivors {cleanup.survivors}"
        )
    status, stop_reason = call.classify(cleanup, leftover)
    outcome = CallOutcome(
        status=status,
        stop_reason=stop_reason,
        returncode=call.returncode,
        elapsed_s=max((end_ns - call.start_ns) / 1e9, 0.0),
        window=CallWindow(start_mono_ns=call.start_ns, end_mono_ns=end_ns),
        stdout=call.stdout.close(),
        stderr=call.stderr.close(),
        leftover_processes=leftover,
        cleanup=cleanup,
        pid=call.pid,
    )
    hooks.event(
        "call_finished",
        call_index=spec.call_index,
        status=status,
        returncode=call.returncode,
        elapsed_s=outcome.elapsed_s,
    )
    return outcome
