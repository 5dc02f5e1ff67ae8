"""A table inside an envelope: typed columns, rows (possibly limited), and the full row count."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpuopt.models._base import Model


class Column(Model):
    name: str = Field(description="Column name; its definition: gpuopt schema AREA.TABLE")
    dtype: str = Field(description="polars dtype, e.g. Int64, Float64, String")


class TableData(Model):
    name: str = Field(description="Which table this is, e.g. cuda_gpu_kern_sum")
    columns: list[Column] = Field(description="Every column of the table, in order, with its dtype")
    rows: list[dict[str, Any]] = Field(
        description="The rows (at most --limit; in --sort order), one object per row keyed by column name"
    )
    total_rows: int = Field(description="Rows in the whole table (--out FILE writes them all)")
    truncated: bool = Field(description="True when rows holds fewer than total_rows (see --limit)")


class TableResult(Model):
    """The data of a command whose result is one table: always under ``data.table``."""

    table: TableData = Field(description="The table (column definitions: gpuopt schema AREA.TABLE)")
