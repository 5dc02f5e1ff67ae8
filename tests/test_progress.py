"""The working spinner: shown to a person at a terminal, never to pipes or with --json."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from conftest import gpuopt


def _in_terminal(*args: str) -> tuple[int, str]:
    """Runs gpuopt with stdin, stdout and stderr on a pseudo-terminal, as a person would."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuopt", *args], stdin=follower, stdout=follower, stderr=follower
    )
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    return proc.wait(), out.decode("utf-8", errors="replace")


def test_a_person_at_a_terminal_sees_the_spinner_then_the_table(shared: Path) -> None:
    code, out = _in_terminal("nsys", "kernels", str(shared / "h200" / "nsys" / "eager.sqlite"))
    assert code == 0
    spinner, _, table = out.rpartition("\x1b[?25h")  # rich hides the cursor while it spins
    assert "gpuopt nsys kernels" in spinner and "0:00:0" in spinner
    assert "cuda_gpu_kern_sum" in table and "4.42 ms" in table


def test_json_and_pipes_get_no_spinner(shared: Path) -> None:
    file = str(shared / "h200" / "nsys" / "eager.sqlite")
    code, out = _in_terminal("nsys", "kernels", file, "--json")
    assert code == 0 and "\x1b[" not in out and '"ok": true' in out
    piped = gpuopt("nsys", "kernels", file)
    assert piped.code == 0 and piped.stderr == "" and "\x1b[" not in piped.stdout
