"""Table output for commands: ``--limit`` rows in the envelope or on screen, ``--out`` for the whole table,
``--sort COLUMN`` (largest first; ``COLUMN:asc`` smallest first) and ``--columns`` for the screen.

One decorator (:func:`table_options`) gives every table command the same options; it hands ``--sort``
and ``--columns`` to the three places a table leaves a command (:func:`table_data` for the envelope,
:func:`write_table` for ``--out``, :func:`render_frame` for people) through context variables, so command
bodies do not change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt.cli._output import Outcome
from gpuopt.errors import InputError

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.envelope import FileIdentity, UnmodeledItem
    from gpuopt.models.table import TableData

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
        type=click.Path(path_type=Path, dir_okay=False),
        help="Also write the whole table to a .parquet, .csv, .json or .ndjson file.",
    )(fn)
    fn = click.option(
        "--limit",
        type=click.IntRange(min=0),
        default=50,
        show_default=True,
        help="Rows to show or put in the JSON envelope (0 = all).",
    )(fn)
    return fn


def current_sort() -> str | None:
    """The running command's ``--sort`` as given (None without it)."""
    return _SORT.get()


def current_columns() -> list[str] | None:
    """The running command's ``--columns`` (None without it)."""
    return _COLUMNS.get()


def column_named(frame: pl.DataFrame, name: str) -> str | None:
    """The column ``name`` means: itself, or the one column whose header on screen it is (the name without
    its unit suffix: ``total_time`` for ``total_time_ns``)."""
    if name in frame.columns:
        return name
    from gpuopt.cli._people import label

    matches = [c for c in frame.columns if label(c) == name]
    return matches[0] if len(matches) == 1 else None


def _unknown_column(frame: pl.DataFrame, option: str, name: str) -> InputError:
    return InputError(
        "column_unknown",
        f"{option}: this table has no column {name!r}",
        expected=", ".join(frame.columns),
        observed=name,
    )


def ordered(frame: pl.DataFrame, *, strict: bool = True) -> pl.DataFrame:
    """``frame`` in the ``--sort`` order of the running command (unchanged without ``--sort``).

    Not ``strict``: a frame without the column (a compact view of the table) stays as it is.
    """
    sort = _SORT.get()
    if not sort:
        return frame
    column, _, direction = sort.partition(":")
    if direction not in ("", "asc", "desc"):
        raise InputError("sort_invalid", f"--sort {sort}: the direction is asc or desc", observed=direction)
    named = column_named(frame, column)
    if named is None:
        if strict:
            raise _unknown_column(frame, "--sort", column)
        return frame
    return frame.sort(named, descending=direction != "asc", nulls_last=True, maintain_order=True)


def write_table(frame: pl.DataFrame, out: Path) -> None:
    frame = ordered(frame)
    suffix = out.suffix.lower()
    if suffix not in _WRITERS:
        raise InputError(
            "output_format_unknown",
            f"cannot write a table to {out}",
            path=str(out),
            expected=", ".join(_WRITERS),
            observed=suffix or "(no suffix)",
        )
    if not out.parent.is_dir():
        raise InputError(
            "output_folder_missing",
            f"cannot write {out}: its folder does not exist",
            path=str(out),
            expected="an existing folder",
            observed=str(out.parent),
        )
    try:
        if suffix == ".parquet":
            frame.write_parquet(out)
        elif suffix == ".csv":
            frame.write_csv(out)
        elif suffix == ".json":
            frame.write_json(out)
        else:
            frame.write_ndjson(out)
    except OSError as exc:  # a folder the OS refuses (/proc, read-only, full): the user's input, not a defect
        raise InputError(
            "output_unwritable",
            f"cannot write {out}: {exc.strerror or exc}",
            path=str(out),
            expected="a writable file path",
        ) from None


def render_frame(frame: pl.DataFrame, limit: int, *, totals: bool = True) -> str:
    """The table for people (see ``cli/_people.py``): sorted, ``--limit`` rows, ``--columns`` chosen;
    ``totals=False`` where rows overlap, so no sum over them means anything."""
    from gpuopt.cli import _people

    frame = ordered(frame, strict=False)
    rows = frame.height if limit == 0 else min(limit, frame.height)
    # --columns was checked against the whole table by table_data; a view without one says so.
    named = {c: column_named(frame, c) for c in _COLUMNS.get() or []}
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


def table_data(name: str, frame: pl.DataFrame, limit: int) -> TableData:
    from gpuopt.models.table import Column, TableData

    for c in _COLUMNS.get() or []:
        if column_named(frame, c) is None:
            raise _unknown_column(frame, "--columns", c)
    frame = ordered(frame)
    shown = frame if limit == 0 else frame.head(limit)
    return TableData(
        name=name,
        columns=[Column(name=c, dtype=str(t)) for c, t in frame.schema.items()],
        rows=shown.to_dicts(),
        total_rows=frame.height,
        truncated=shown.height < frame.height,
    )


def table_outcome(
    name: str,
    frame: pl.DataFrame,
    *,
    limit: int,
    out: Path | None,
    inputs: list[FileIdentity],
    unmodeled: list[UnmodeledItem] | None = None,
    header: str | None = None,
) -> Outcome:
    """The Outcome of a command whose result is one table."""
    if out is not None:
        write_table(frame, out)
    from gpuopt.models.table import TableResult

    data = TableResult(table=table_data(name, frame, limit))

    def render() -> str:
        body = render_frame(frame, limit)
        return f"{header}\n{body}" if header else body

    return Outcome(data=data, render=render, inputs=inputs, unmodeled=unmodeled or [])
