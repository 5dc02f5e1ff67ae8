"""Table output for commands: ``--limit`` rows in the envelope or on screen, ``--out`` for the whole table,
``--sort COLUMN`` (largest first; ``COLUMN:asc`` smallest first) and ``--columns`` for the screen.

One decorator (:func:`table_options`) gives every table command the same options; it hands ``--sort``
and ``--columns`` on through context variables (:func:`current_sort`, :func:`current_columns`). The
library puts a table in ``--sort`` order and makes the document (``gpuopt._tables``); here the answer
becomes the command's :class:`Outcome` (:func:`answered`: ``--out`` written, ``--columns`` checked), and
:func:`render_frame` draws the table for people.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt._tables import column_named, sorted_by, unknown_column
from gpuopt.cli._output import Outcome, check_text_arguments
from gpuopt.cli._params import count, output_path
from gpuopt.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterable

    import polars as pl

    from gpuopt.answer import Answer

F = TypeVar("F", bound=Callable[..., Any])

_WRITERS = (".parquet", ".csv", ".json", ".ndjson")

_SORT: ContextVar[str | None] = ContextVar("gpuopt_table_sort", default=None)
_COLUMNS: ContextVar[list[str] | None] = ContextVar("gpuopt_table_columns", default=None)


def table_options(command: F) -> F:
    """Adds ``--limit``, ``--out``, ``--sort`` and ``--columns`` to a table command."""

    @functools.wraps(command)
    def wrapper(*args: Any, sort: str | None, columns: str | None, **kwargs: Any) -> Any:
        chosen = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
        sort_token, columns_token = _SORT.set(sort), _COLUMNS.set(chosen)
        try:
            return command(*args, **kwargs)
        finally:
            _SORT.reset(sort_token)
            _COLUMNS.reset(columns_token)

    fn: F = wrapper  # type: ignore[assignment]
    fn = click.option(
        "--columns",
        metavar="A,B,...",
        help="Columns to show on screen, in this order (--json and --out always carry every column).",
    )(fn)
    fn = click.option(
        "--sort",
        metavar="COLUMN[:asc]",
        help="Order rows by COLUMN, largest first (COLUMN:asc for smallest first), before --limit.",
    )(fn)
    fn = click.option(
        "--out",
        type=output_path(),
        help="Also write the whole table to a .parquet, .csv, .json or .ndjson file.",
    )(fn)
    fn = click.option(
        "--limit",
        type=count(0),
        default=50,
        show_default=True,
        help="Rows to show or put in the JSON envelope (0 = all).",
    )(fn)
    return fn


def current_sort() -> str | None:
    """The running command's ``--sort`` as given (None without it); ``argument_not_utf8`` (exit 2) for
    bytes that are not UTF-8, as every other text option (read here, inside the command's handling)."""
    sort = _SORT.get()
    check_text_arguments({"sort": sort})
    return sort


def current_columns() -> list[str] | None:
    """The running command's ``--columns`` (None without it); UTF-8 text, as ``--sort``."""
    columns = _COLUMNS.get()
    check_text_arguments({"columns": columns})
    return columns


def check_out(out: Path) -> None:
    """``--out``'s suffix names a format, and the path can be written (not a FIFO, a device or a path in
    a missing folder): checked before a command's work where its work leaves a record."""
    from gpuopt._files import check_output

    suffix = out.suffix.lower()
    if suffix not in _WRITERS:
        raise InputError(
            "output_format_unknown",
            f"cannot write a table to {out}",
            path=str(out),
            expected=", ".join(_WRITERS),
            observed=suffix or "(no suffix)",
        )
    check_output(out)


def write_table(frame: pl.DataFrame, out: Path) -> None:
    """``--out``: the whole table, as it is (the library put it in ``--sort`` order)."""
    import io

    from gpuopt._files import write_output

    check_out(out)  # before the work of encoding: a FIFO, a device or a missing folder
    suffix = out.suffix.lower()
    buffer = io.BytesIO()
    if suffix == ".parquet":
        frame.write_parquet(buffer)
    elif suffix == ".csv":
        frame.write_csv(buffer)
    elif suffix == ".json":
        frame.write_json(buffer)
    else:
        frame.write_ndjson(buffer)
    write_output(out, buffer.getvalue())


def render_frame(frame: pl.DataFrame, limit: int, *, totals: bool = True) -> str:
    """The table for people (see ``cli/_people.py``): sorted, ``--limit`` rows, ``--columns`` chosen;
    ``totals=False`` where rows overlap, so no sum over them means anything."""
    from gpuopt.cli import _people

    frame = sorted_by(frame, _SORT.get(), strict=False)  # a view made from the sorted table keeps its order
    rows = frame.height if limit == 0 else min(limit, frame.height)
    # --columns was checked against the whole table (answered); a view without one says so.
    named = {c: column_named(frame, c) for c in current_columns() or []}
    columns = [n for n in named.values() if n is not None] or None
    text = _people.render(frame, rows, columns, totals=totals)
    if rows < frame.height:
        text += f"\n({rows} of {frame.height} rows; --limit 0 shows all, --out FILE writes all)"
    absent = [c for c, n in named.items() if n is None]
    if absent:
        text += f"\n(not in this view: {', '.join(absent)}; --json or --out FILE have them)"
    return text


def for_people(full: pl.DataFrame, compact: pl.DataFrame) -> pl.DataFrame:
    """What people see of a table: its ``compact`` view, unless ``--columns`` chose columns, which are
    then taken from the ``full`` table (a column chosen by name is never dropped for being off the view)."""
    return full if _COLUMNS.get() else compact


def check_columns(frames: Iterable[pl.DataFrame]) -> None:
    """``--columns`` names columns of every table the command shows (``column_unknown`` else)."""
    for frame in frames:
        for c in current_columns() or []:
            if column_named(frame, c) is None:
                raise unknown_column(frame, "--columns", c)


def answered(
    answer: Answer[Any], render: Callable[[], str], *, out: Path | None = None, schema: str | None = None
) -> Outcome:
    """The Outcome of a library answer: ``--columns`` checked against its tables, ``--out`` written with
    its main table, its document, inputs and unmodeled content as the envelope's."""
    check_columns(answer.tables.values())
    if out is not None and answer.tables:
        write_table(answer.table, out)
    return Outcome(
        data=answer.data,
        render=render,
        inputs=answer.inputs,
        unmodeled=answer.unmodeled,
        failure=answer.failure,
        schema=schema,
    )


def render_table(answer: Answer[Any], limit: int) -> str:
    """An answer's main table for people, as it is (no header): the plain table commands."""
    return render_frame(answer.table, limit)
