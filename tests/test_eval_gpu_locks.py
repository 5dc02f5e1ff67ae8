"""Per-GPU locks with real processes: they serialize and bound the wait, and the next holder kills an orphaned
driver or, where it cannot tell, refuses with ``resource_cleanup_unknown``. No GPU needed: locks are files
keyed by host and UUID."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import locks
from gpuopt.models.evaluation.status import Occupancy, ProcessRef

HOLDER = """
import sys, time
from gpuopt.evaluation import locks
held = locks.GpuLocks(locks.lock_dir(), "host", [sys.argv[1]], "inv-holder")
assert held.acquire(time.monotonic() + 10, lambda: False)
print("held", flush=True)
time.sleep(60)
"""


def test_gpu_locks_serialize_and_bound_the_wait(tmp_path: Path) -> None:
    env = {**os.environ, "GPUOPT_LOCK_DIR": str(tmp_path)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, "GPU-a"], env=env, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        waiting = locks.GpuLocks(tmp_path, "host", ["GPU-b", "GPU-a"], "inv-waiter")
        assert not waiting.acquire(time.monotonic() + 0.3, lambda: False)
        other_host = locks.GpuLocks(tmp_path, "other-host", ["GPU-a"], "inv-elsewhere")
        assert other_host.acquire(time.monotonic() + 0.3, lambda: False)
        other_host.release()
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    waiting = locks.GpuLocks(tmp_path, "host", ["GPU-b", "GPU-a"], "inv-waiter")
    assert waiting.acquire(time.monotonic() + 5, lambda: False)  # the kernel released the dead holder's lock
    waiting.release()


def _occupy(tmp_path: Path, pid: int, token: str) -> locks.GpuLocks:
    held = locks.GpuLocks(tmp_path, "host", ["GPU-a"], "inv-orphan")
    held.occupy(
        ProcessRef(pid=1, start_token="1"),
        ProcessRef(pid=pid, start_token=token),
        pid,
        "GPUOPT_REQUEST=/nowhere",
    )
    return held


def test_next_lock_holder_kills_an_orphaned_driver(tmp_path: Path) -> None:
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    token = json.loads(_native.proc_info(orphan.pid) or b"{}")["start_token"]
    _occupy(tmp_path, orphan.pid, str(token))
    nxt = locks.GpuLocks(tmp_path, "host", ["GPU-a"], "inv-next")
    assert nxt.acquire(time.monotonic() + 5, lambda: False)
    try:
        assert nxt.recover_orphans(0.2, 5) == [f"inv-orphan group {orphan.pid}"]
    finally:
        nxt.release()
    assert orphan.wait(timeout=5) == -signal.SIGTERM
    assert not any(tmp_path.glob("*.occupancy.json"))


def test_unverifiable_occupancy_is_resource_cleanup_unknown(tmp_path: Path) -> None:
    bystander = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        _occupy(tmp_path, bystander.pid, "12345")  # a live pid with another start token: maybe reused
        nxt = locks.GpuLocks(tmp_path, "host", ["GPU-a"], "inv-next")
        assert nxt.acquire(time.monotonic() + 5, lambda: False)
        with pytest.raises(InputError) as err:
            nxt.recover_orphans(0.2, 5)
        assert err.value.code == "resource_cleanup_unknown"
        name = locks.lock_name("host", "GPU-a")
        (tmp_path / f"{name}.occupancy.json").write_text("{not json")
        with pytest.raises(InputError) as err:
            nxt.recover_orphans(0.2, 5)
        assert err.value.code == "resource_cleanup_unknown"
        nxt.release()
        assert bystander.poll() is None  # an unverifiable process is never killed
    finally:
        bystander.kill()
        bystander.wait()
    assert Occupancy.model_json_schema()["title"] == "Occupancy"
