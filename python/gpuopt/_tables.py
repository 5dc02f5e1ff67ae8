"""Tables between the engines and the documents: the one place a native Arrow table becomes a polars
DataFrame (zero-copy, via the PyCapsule stream), and the one place a DataFrame becomes a document's
:class:`~gpuopt.models.table.TableData` (``--sort`` order, ``--limit`` rows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuopt.errors import InputError

if TYPE_CHECKING:
    import polars as pl

    from gpuopt._native import ArrowTable
    from gpuopt.models.table import TableData


def to_polars(table: ArrowTable) -> pl.DataFrame:
    """``pl.DataFrame(table)``; not ``pl.from_arrow``, which would return a struct Series."""
    import polars as pl

    return pl.DataFrame(table)


_AGGREGATES = ("_sum", "_mean", "_min", "_max", "_median")

# Unit suffixes and what stays of them in a header (the cells carry the unit).
_LABELS = (
    ("_ns", ""),
    ("_gbps", ""),
    ("_bytes_per_s", ""),
    ("_flop_per_s", "_flops"),
    ("_flop_per_byte", ""),
    ("_pct_of_peak", "_of_peak"),
    ("_pct", ""),
)


def split_aggregate(column: str) -> tuple[str, str]:
    """``duration_ns_mean`` -> (``duration_ns``, ``_mean``): an aggregate keeps its column's unit."""
    for suffix in _AGGREGATES:
        if column.endswith(suffix) and len(column) > len(suffix):
            return column[: -len(suffix)], suffix
    return column, ""


def label(column: str) -> str:
    """The header people see: the name without its unit suffix (``total_time`` for ``total_time_ns``)."""
    base, aggregate = split_aggregate(column)
    for suffix, shown in _LABELS:
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)] + shown + aggregate
    return column


def column_named(frame: pl.DataFrame, name: str) -> str | None:
    """The column ``name`` means: itself, or the one column whose :func:`label` it is."""
    if name in frame.columns:
        return name
    matches = [c for c in frame.columns if label(c) == name]
    return matches[0] if len(matches) == 1 else None


def unknown_column(frame: pl.DataFrame, option: str, name: str) -> InputError:
    return InputError(
        "column_unknown",
        f"{option}: this table has no column {name!r}",
        expected=", ".join(frame.columns),
        observed=name,
    )


def sorted_by(frame: pl.DataFrame, sort: str | None, *, strict: bool = True) -> pl.DataFrame:
    """``frame`` in ``sort`` order (``COLUMN``: largest first, ``COLUMN:asc``: smallest first, nulls last,
    ties in table order; the column by name or by :func:`label`); unchanged when ``sort`` is None.

    Not ``strict``: a frame without the column (a compact view of the table) stays as it is.
    """
    if not sort:
        return frame
    column, _, direction = sort.partition(":")
    if direction not in ("", "asc", "desc"):
        raise InputError("sort_invalid", f"--sort {sort}: the direction is asc or desc", observed=direction)
    named = column_named(frame, column)
    if named is None:
        if strict:
            raise unknown_column(frame, "--sort", column)
        return frame
    return frame.sort(named, descending=direction != "asc", nulls_last=True, maintain_order=True)


def table_data(name: str, frame: pl.DataFrame, limit: int, *, total_rows: int | None = None) -> TableData:
    """``frame`` (already in its order) as a document's table: every column, the first ``limit`` rows
    (0: all), the whole table's row count (``total_rows`` when ``frame`` is already its first rows)."""
    from gpuopt.models.table import Column, TableData

    shown = frame if limit == 0 else frame.head(limit)
    total = frame.height if total_rows is None else total_rows
    return TableData(
        name=name,
        columns=[Column(name=c, dtype=str(t)) for c, t in frame.schema.items()],
        rows=shown.to_dicts(),
        total_rows=total,
        truncated=shown.height < total,
    )
