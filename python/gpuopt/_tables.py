"""The one place a native Arrow table becomes a polars DataFrame (zero-copy, via the PyCapsule stream)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from gpuopt._native import ArrowTable


def to_polars(table: ArrowTable) -> pl.DataFrame:
    """``pl.DataFrame(table)``; not ``pl.from_arrow``, which would return a struct Series."""
    import polars as pl

    return pl.DataFrame(table)
