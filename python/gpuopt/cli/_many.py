"""Several files in one table command: ``FILE...`` or a glob, ``--workers N``, ``--dask-scheduler``.

One FILE keeps the command's own output. Several FILEs (or a glob pattern) give one table keyed by
``file`` (envelope ``gpuopt.many.table/v1``), read by :mod:`gpuopt.many`; a file that fails is a row
with its typed error, and the command exits 2 only when every file failed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt.cli._output import Outcome
from gpuopt.cli._params import FiniteFloatRange
from gpuopt.cli._tables import render_frame, table_data, write_table
from gpuopt.errors import InputError
from gpuopt.many import DASK_TIMEOUT_S

if TYPE_CHECKING:
    import polars as pl

F = TypeVar("F", bound=Callable[..., Any])

MANY_SCHEMA = "gpuopt.many.table/v1"

_DASK_TIMEOUT: ContextVar[float] = ContextVar("gpuopt_dask_timeout", default=DASK_TIMEOUT_S)

#: The sentence every many-file command's help carries.
MANY_HELP = (
    "Several FILEs or a glob ('runs/*.sqlite', quoted) give one table with a `file` key column; a file "
    "that fails is a row with its error (error_code, error), and the exit status is 2 only when every "
    "file failed."
)


def files_argument(fn: F) -> F:
    return click.argument(
        "files", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="FILE..."
    )(fn)


def many_options(command: F) -> F:
    """Adds ``--workers``, ``--dask-scheduler`` and ``--dask-timeout``; the timeout reaches
    :func:`many_outcome` through a context variable, so command bodies do not change."""

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
        help="Read the files on this Dask cluster (tcp://host:8786; needs the `dask` extra).",
    )(fn)
    fn = click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Files read at once in this process (each worker holds one report at a time).",
    )(fn)
    return fn


def is_many(files: Sequence[Path]) -> bool:
    from gpuopt.many import is_pattern

    return len(files) > 1 or any(is_pattern(f) for f in files)


def many_outcome(
    name: str,
    files: Sequence[Path],
    fn: Callable[[Path], pl.DataFrame],
    *,
    workers: int,
    dask_scheduler: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Reads every file with ``fn`` and returns the one keyed table (failed only if every file failed)."""
    from gpuopt import many
    from gpuopt.models.many import ManyTableData
    from gpuopt.provenance import file_identity

    paths = many.expand(files)
    results = many.map_files(
        fn, paths, workers=workers, scheduler=dask_scheduler, dask_timeout_s=_DASK_TIMEOUT.get()
    )
    frame = many.combine(results)
    if out is not None:
        write_table(frame, out)
    failed = sum(1 for r in results if r.error is not None)
    data = ManyTableData(
        report=name,
        files=len(results),
        failed=failed,
        workers=workers,
        dask_scheduler=dask_scheduler,
        table=table_data(name, frame, limit),
    )
    failure = None
    if results and failed == len(results):
        failure = InputError(
            "files_all_failed",
            f"every one of the {failed} files failed (each row carries its error)",
            observed=", ".join(sorted({str(r.error["code"]) for r in results if r.error})),
        )
    inputs = [file_identity(Path(r.file)) for r in results if r.error is None and Path(r.file).is_file()]

    def render() -> str:
        head = f"{name} — {len(results)} files ({failed} failed)"
        return head + "\n" + render_frame(frame, limit)

    return Outcome(data=data, render=render, inputs=inputs, failure=failure, schema=MANY_SCHEMA)
