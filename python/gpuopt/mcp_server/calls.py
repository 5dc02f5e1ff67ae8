"""One tool call = one ``python -m gpuopt ... --json`` child process, and how it is stopped.

The child runs in a process group of its own (a new session), so that a call that ends early can end
everything the command started in it (``nsys export``, ``ncu``, a readiness probe supervisor) without
touching the server. Stopping, when the call is cancelled or the client went away:

1. SIGINT to the command: Python raises KeyboardInterrupt, ``finally`` blocks run and ``subprocess.run``
   kills the program it waits for;
2. up to ``SETTLE_S`` for its group to empty: a readiness probe supervisor, which sees its caller's pipe
   close, stops its driver (in a session of its own) and exits;
3. then SIGTERM, ``TERM_GRACE_S``, SIGKILL to whatever is left of the group.

Submitted invocations (``baseline`` ... ``final-audit``) are not the call's: their supervisor is detached
on purpose, belongs to the artifact root, outlives the submitting command (as it does a Ctrl-C'd
``--wait``) and is stopped with the ``cancel`` tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from gpuopt import _native

SETTLE_S = 10.0
TERM_GRACE_S = 1.0
TERM_TIMEOUT_S = 5.0
PROGRESS_PERIOD_S = 1.0


@dataclass(frozen=True)
class Finished:
    """What the command printed on stdout (its JSON envelope) and its exit status."""

    stdout: bytes
    returncode: int


async def run_cli(words: list[str], tick: Callable[[float], Awaitable[None]]) -> Finished:
    """Runs ``gpuopt WORDS``; ``tick(elapsed_s)`` every ``PROGRESS_PERIOD_S`` while it runs.

    Raises ``OSError`` when the process cannot be started. Cancelled, it stops the command's processes
    (the module docstring says how) before the cancellation goes on."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gpuopt",
        *words,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,  # never forwarded: it may quote input files
        start_new_session=True,
    )
    started = time.monotonic()
    output = asyncio.ensure_future(proc.communicate())
    try:
        while True:
            done, _ = await asyncio.wait({output}, timeout=PROGRESS_PERIOD_S)
            if done:
                stdout, _ = output.result()
                return Finished(stdout, proc.returncode or 0)
            await tick(time.monotonic() - started)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await _stop(proc)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(output, TERM_TIMEOUT_S)
        raise


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGINT)
    # The group's id is the command's pid (a new session); settle/terminate only count living members.
    settled = await anyio.to_thread.run_sync(_native.settle, proc.pid, None, [], None, SETTLE_S)
    if json.loads(settled)["left"]:
        await anyio.to_thread.run_sync(
            _native.terminate, proc.pid, None, [], None, TERM_GRACE_S, TERM_TIMEOUT_S
        )
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), TERM_TIMEOUT_S)
