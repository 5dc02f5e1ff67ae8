"""A table inside an envelope: typed columns, rows (possibly limited), and the full row count."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpuopt.models._base import Model


class Column(Model):
    name: str
    dtype: str = Field(description="polars dtype, e.g. Int64, Float64, String")


class TableData(Model):
    name: str = Field(description="Which table this is, e.g. cuda_gpu_kern_sum")
    columns: list[Column]
    rows: list[dict[str, Any]]
    total_rows: int
    truncated: bool = Field(description="True when rows holds fewer than total_rows (see --limit)")


class TableResult(Model):
    """The data of a command whose result is one table: always under ``data.table``."""

    table: TableData
