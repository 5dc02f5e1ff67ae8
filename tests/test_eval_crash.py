"""Crash safety and races with real processes: kill -9 during record writes, racing compare-and-swaps."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eval_support.writers import record_for
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.store import Store, reindex
from gpuopt.evaluation.verify import verify

TESTS = Path(__file__).resolve().parent
RECORDS = 1000


def _worker(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-m", "eval_support.writers", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder on tmpfs when there is one: kill -9 safety is a process-level property (renameat2 and
    O_APPEND behave the same), and skipping the disk's fsync latency keeps 1 000 publications quick."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="gpuopt-crash-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_kill_9_during_1000_record_writes_leaves_no_partial_record(fast_dir: Path) -> None:
    root = fast_dir / "root"
    root.mkdir()
    rng = random.Random(9)
    kills = 0
    while True:
        proc = _worker("records", str(root), str(RECORDS))
        assert proc.stdout is not None
        if kills < 12:
            # Let a random number of records through, then kill -9 wherever the writer happens to be.
            for _ in range(rng.randint(1, 100)):
                if not proc.stdout.readline():
                    break
            proc.send_signal(signal.SIGKILL)
            kills += 1
        _, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            break
        assert proc.returncode == -signal.SIGKILL, err.decode()
    assert kills >= 3
    folder = root / "experiments"
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith(".tmp-"))
    assert names == sorted(f"exp-{i:064x}.json" for i in range(RECORDS))
    for i in range(RECORDS):
        data = (folder / f"exp-{i:064x}.json").read_bytes()
        assert data == jsonio.record_bytes(record_for(i)), i
    store = Store(root)
    report = verify(store, deep=True)
    # A kill between publish and append leaves a record unlisted; the records are not Experiments.
    assert {d.code for d in report.defects} <= {"record_unlisted", "record_invalid"}
    assert all(
        d.expected == "a valid experiment record" for d in report.defects if d.code == "record_invalid"
    )
    assert all(line.path.startswith("experiments/") for line in store.ledger())
    assert reindex(store).lines == RECORDS
    assert [line.path for line in store.ledger()] == [
        f"experiments/exp-{i:064x}.json" for i in range(RECORDS)
    ]
    leftovers = sorted(f"experiments/{p.name}" for p in folder.iterdir() if p.name.startswith(".tmp-"))
    repaired = verify(store, repair=True).repair  # a kill mid-write leaves only temp files
    assert repaired is not None and [a.path for a in repaired.removed] == leftovers
    assert [p.name for p in folder.iterdir() if p.name.startswith(".tmp-")] == []


def test_eight_processes_racing_the_cas_lose_no_update(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    writers, updates = 8, 12
    procs = [_worker("cas", str(root), str(w), str(updates)) for w in range(writers)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    pointer = json.loads((root / "champion" / "current.json").read_bytes())
    assert pointer["count"] == writers * updates
    selections = root / "champion" / "selections"
    by_count = {int(p.stem): p.read_bytes() for p in selections.iterdir()}
    assert sorted(by_count) == list(range(1, writers * updates + 1))
    for count in range(2, writers * updates + 1):
        assert json.loads(by_count[count])["prev"] == jsonio.sha256_hex(by_count[count - 1])
    per_writer = [json.loads(b)["writer"] for b in by_count.values()]
    assert sorted(per_writer.count(w) for w in range(writers)) == [updates] * writers


def test_eight_processes_on_one_expected_pointer_one_wins(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    start = tmp_path / "go"
    procs = [_worker("cas-once", str(root), str(w), str(start)) for w in range(8)]
    time.sleep(0.5)
    start.write_text("")
    outcomes = sorted(p.communicate(timeout=60)[0].decode().strip() for p in procs)
    assert outcomes == ["stale_reference"] * 7 + ["won"]
    assert len(list((root / "champion" / "selections").iterdir())) == 1
