"""Runs ``gpuopt`` in this process, through the same ``main`` the console entry calls.

The corpus test runs hundreds of commands; a child process each would spend most of its time starting
Python. ``main`` is what ``python -m gpuopt`` runs, so the exit code (``SystemExit``), stdout and stderr
are those of the real CLI; ``test_inproc_matches_the_real_cli`` checks that on a few commands.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from conftest import Run
from gpuopt.cli import main


def run_main(*args: str) -> Run:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return Run(code, out.getvalue(), err.getvalue())
