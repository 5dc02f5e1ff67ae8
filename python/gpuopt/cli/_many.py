"""Several files in one table command: ``FILE...`` or a glob, ``--workers N``, ``--dask-scheduler``.

One FILE keeps the command's own output. Several FILEs (or a glob pattern) give one table keyed by
``file`` (envelope ``gpuopt.many.table/v1``), read by :mod:`gpuopt.many` (the area's ``table_document``
decides); a file that fails is a row with its typed error, and the command exits 2 only when every file
failed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt.cli._params import FiniteFloatRange, count
from gpuopt.cli._tables import render_frame
from gpuopt.many import DASK_TIMEOUT_S

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.many import Readers
    from gpuopt.models.many import ManyTableData

F = TypeVar("F", bound=Callable[..., Any])

MANY_SCHEMA = "gpuopt.many.table/v1"

_DASK_TIMEOUT: ContextVar[float] = ContextVar("gpuopt_dask_timeout", default=DASK_TIMEOUT_S)

#: The sentence every many-file command's help carries.
MANY_HELP = (
    "Several FILEs or a glob ('runs/*.sqlite', quoted) give one table with a `file` key column; a file "
    "that fails is a row with its error (error_code, error), and the exit status is 2 only when every "
    "file failed."
)


def files_argument(one: str) -> Callable[[F], F]:
    """``FILE...``, described by what ``one`` file is."""
    return click.argument(
        "files",
        nargs=-1,
        required=True,
        type=click.Path(path_type=Path),
        metavar="FILE...",
        help=f"{one.rstrip('.')}; several, or a quoted glob, give one table keyed by file.",
    )


def many_options(command: F) -> F:
    """Adds ``--workers``, ``--dask-scheduler`` and ``--dask-timeout``; the timeout reaches
    :func:`readers` through a context variable, so command bodies do not change."""

    @functools.wraps(command)
    def wrapper(*args: Any, dask_timeout: float, **kwargs: Any) -> Any:
        token = _DASK_TIMEOUT.set(dask_timeout)
        try:
            return command(*args, **kwargs)
        finally:
            _DASK_TIMEOUT.reset(token)

    fn: F = wrapper  # type: ignore[assignment]
    fn = click.option(
        "--dask-timeout",
        type=FiniteFloatRange(min=0, min_open=True),
        default=DASK_TIMEOUT_S,
        show_default=True,
        metavar="SECONDS",
        help="With --dask-scheduler: how long the scheduler has to answer before the command exits 3.",
    )(fn)
    fn = click.option(
        "--dask-scheduler",
        metavar="ADDRESS",
        help=(
            "Read the files on this Dask cluster (tcp://host:8786; needs the `dask` extra). One file is "
            "read here; the scheduler is still checked."
        ),
    )(fn)
    fn = click.option(
        "--workers",
        type=count(1),
        default=1,
        show_default=True,
        help="Files read at once in this process (each worker holds one report at a time).",
    )(fn)
    return fn


def readers(workers: int, dask_scheduler: str | None) -> Readers:
    """Who reads the files: ``--workers``, ``--dask-scheduler`` and ``--dask-timeout``."""
    from gpuopt.many import Readers

    return Readers(workers, dask_scheduler, _DASK_TIMEOUT.get())


def render_many(answer: Answer[ManyTableData], limit: int) -> str:
    d = answer.data
    return f"{d.report} — {d.files} files ({d.failed} failed)\n" + render_frame(answer.table, limit)
