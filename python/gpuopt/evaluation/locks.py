"""Per-GPU locks shared across artifact roots: one ``flock``ed file per (host, GPU UUID) in the lock folder,
taken in sorted UUID order with bounded waiting, and an occupancy file naming the live driver call so the
next holder can recover an orphan left by a dead supervisor (spec §5.4).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.models.evaluation.status import Occupancy, ProcessRef

RETRY_S = 0.05


def lock_dir() -> Path:
    """``GPUOPT_LOCK_DIR``, else ``${XDG_STATE_HOME:-~/.local/state}/gpuopt/locks`` (created)."""
    explicit = os.environ.get("GPUOPT_LOCK_DIR")
    if explicit:
        path = Path(explicit)
    else:
        state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
        path = Path(state) / "gpuopt" / "locks"
    path.mkdir(parents=True, exist_ok=True)
    return path


def lock_name(host_id: str, uuid: str) -> str:
    return "gpu-" + hashlib.sha256(f"{host_id}\0{uuid}".encode()).hexdigest()[:32]


class GpuLocks:
    """The locks of one invocation's GPUs, held until :meth:`release` (or the process dies)."""

    def __init__(self, directory: Path, host_id: str, uuids: list[str], invocation_id: str) -> None:
        self.directory = directory
        self.names = [lock_name(host_id, u) for u in sorted(uuids)]
        self.invocation_id = invocation_id
        self.fds: list[int] = []
        self.acquired_mono: float | None = None

    def acquire(self, deadline_mono: float, cancelled: Callable[[], bool]) -> bool:
        """Takes every lock in order; ``False`` when the deadline passed or a cancel came first."""
        for name in self.names:
            fd = _native.store_lock_fd(str(self.directory), f"{name}.lock")
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline_mono or cancelled():
                        os.close(fd)
                        return False
                    time.sleep(RETRY_S)
            self.fds.append(fd)
        self.acquired_mono = time.monotonic()
        return True

    def release(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def held_s(self) -> float:
        return 0.0 if self.acquired_mono is None else time.monotonic() - self.acquired_mono

    def recover_orphans(self, grace_s: float, timeout_s: float) -> list[str]:
        """Checks leftover occupancy files: a recorded child still alive is terminated and confirmed gone.
        Unverifiable occupancy is ``resource_cleanup_unknown``. Returns what was recovered."""
        recovered = []
        for name in self.names:
            rel = f"{name}.occupancy.json"
            if not _native.store_exists(str(self.directory), rel):
                continue
            try:
                occ = jsonio.load(
                    Occupancy, _native.store_read(str(self.directory), rel, 1 << 20), what="occupancy"
                )
            except InputError as exc:
                raise InputError(
                    "resource_cleanup_unknown",
                    f"the GPU occupancy file {rel} is unreadable: {exc.message}",
                    path=rel,
                ) from None
            info = _native.proc_info(occ.child.pid)
            live_token = None if info is None else str(json.loads(info)["start_token"])
            state = None if info is None else json.loads(info)["state"]
            if live_token is not None and state != "Z" and live_token != occ.child.start_token:
                raise InputError(
                    "resource_cleanup_unknown",
                    f"pid {occ.child.pid} of {occ.invocation_id} is alive with another start token",
                    path=rel,
                    expected=occ.child.start_token,
                    observed=live_token,
                )
            tagged = json.loads(_native.call_processes(occ.pgid, None, [], occ.env_tag))
            if (
                tagged
                or _native.group_exists(occ.pgid)
                or (live_token == occ.child.start_token and state != "Z")
            ):
                report = json.loads(_native.terminate(occ.pgid, None, [], occ.env_tag, grace_s, timeout_s))
                if not report["confirmed"]:
                    raise InputError(
                        "resource_cleanup_unknown",
                        f"the orphaned call of {occ.invocation_id} (group {occ.pgid}) is not confirmed gone",
                        path=rel,
                        observed=str(report["survivors"]),
                    )
                recovered.append(f"{occ.invocation_id} group {occ.pgid}")
            _native.store_remove(str(self.directory), rel)
        return recovered

    def occupy(self, supervisor: ProcessRef, child: ProcessRef, pgid: int, env_tag: str) -> None:
        occ = Occupancy(
            invocation_id=self.invocation_id,
            supervisor=supervisor,
            child=child,
            pgid=pgid,
            env_tag=env_tag,
            since_epoch=time.time(),
        )
        for name in self.names:
            # Read after a supervisor crash, not a power cut (which ends every driver): no fsync.
            _native.store_replace(
                str(self.directory), f"{name}.occupancy.json", jsonio.record_bytes(occ), 0o644, False
            )

    def clear(self) -> None:
        for name in self.names:
            _native.store_remove(str(self.directory), f"{name}.occupancy.json", False)
