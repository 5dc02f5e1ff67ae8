"""Shared test setup: where the real fixtures live, and a CLI runner that goes through ``main``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fixture_data import unpacked

ROOT = Path(__file__).resolve().parent.parent

# Tests (and the CLI processes they start) never touch the user's identity cache.
os.environ["GPUOPT_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuopt-test-cache-")


@pytest.fixture(scope="session")
def shared() -> Path:
    """The real fixtures (a copy of ``../shared/fixtures`` kept in ``tests/data``; see its README)."""
    return unpacked()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def gpuopt(*args: str, cwd: Path | None = None) -> Run:
    """Runs the installed ``gpuopt`` console entry in a child process, as a user or agent would."""
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", *args], capture_output=True, text=True, cwd=cwd, check=False
    )
    return Run(done.returncode, done.stdout, done.stderr)
