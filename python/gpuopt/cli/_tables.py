"""Table output for commands: ``--limit`` rows in the envelope or on screen, ``--out`` for the whole table."""

from __future__ import annotations

from collections.abc import Callable
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


def table_options(fn: F) -> F:
    """Adds ``--limit`` and ``--out`` to a table command."""
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


def write_table(frame: pl.DataFrame, out: Path) -> None:
    suffix = out.suffix.lower()
    if suffix not in _WRITERS:
        raise InputError(
            "output_format_unknown",
            f"cannot write a table to {out}",
            path=str(out),
            expected=", ".join(_WRITERS),
            observed=suffix or "(no suffix)",
        )
    if suffix == ".parquet":
        frame.write_parquet(out)
    elif suffix == ".csv":
        frame.write_csv(out)
    elif suffix == ".json":
        frame.write_json(out)
    else:
        frame.write_ndjson(out)


def render_frame(frame: pl.DataFrame, limit: int) -> str:
    import polars as pl

    rows = frame.height if limit == 0 else min(limit, frame.height)
    with pl.Config(
        tbl_rows=rows,
        tbl_cols=-1,
        fmt_str_lengths=100,
        tbl_width_chars=220,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        text = str(frame.head(rows))
    if rows < frame.height:
        text += f"\n({rows} of {frame.height} rows; --limit 0 shows all, --out FILE writes all)"
    return text


def table_data(name: str, frame: pl.DataFrame, limit: int) -> TableData:
    from gpuopt.models.table import Column, TableData

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
    data = table_data(name, frame, limit)

    def render() -> str:
        body = render_frame(frame, limit)
        return f"{header}\n{body}" if header else body

    return Outcome(data=data, render=render, inputs=inputs, unmodeled=unmodeled or [])
