"""Progress for people: a transient spinner with the elapsed time on stderr while a command works.

Shown only to a person at a terminal (stdout and stderr both TTYs, no ``--json``); agents, pipes and
files get nothing, so envelopes and redirected output stay byte-identical. The engines do not report
fractions done, so this says "working, for how long", not an ETA.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click


def wanted(as_json: bool) -> bool:
    """Whether a person is watching: not ``--json``, stdout and stderr are terminals."""
    return not as_json and sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def working(as_json: bool) -> Iterator[None]:
    """Shows ``gpuopt <command> … 0:00:03`` on stderr while the block runs, erased when it ends."""
    if not wanted(as_json):
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    ctx = click.get_current_context(silent=True)
    label = ctx.command_path if ctx is not None else "gpuopt"
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        progress.add_task(label, total=None)
        yield
