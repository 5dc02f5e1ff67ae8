"""The data of a table command given several files (``gpuopt.many.table/v1``)."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData


class ManyTableData(Model):
    """One table over many files: ``file`` is the key column; a failed file is a row with its error."""

    report: str = Field(description="The table's name, as for one file")
    files: int = Field(description="Files given (after glob expansion)")
    failed: int = Field(description="Files whose row carries an error (error_code, error)")
    workers: int = Field(description="Threads that read the files in this process (1: one after another)")
    dask_scheduler: str | None = Field(description="The Dask scheduler the files were read on, if any")
    table: TableData = Field(
        description="The rows of every file together, the file key column first; a file that failed is one "
        "row carrying error_code and error"
    )
