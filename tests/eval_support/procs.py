"""Process facts for the tests: which processes still run a given command line."""

from __future__ import annotations

import os
import time
from pathlib import Path


def running(marker: str) -> list[int]:
    """Pids (not zombies) whose command line contains ``marker``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            out.append(int(entry.name))
    return out


def wait_gone(marker: str, timeout_s: float = 5.0) -> list[int]:
    """Polls until no process matches (orphans re-parented to init take a moment to be reaped)."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = running(marker)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)
