"""Data models of evaluation commands that have no record of their own."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models.evaluation.common import Record
from gpuopt.models.evaluation.status import InvocationStatus, RootStatus


class DriverInit(Record):
    """``gpuopt driver init``: the files written."""

    directory: str = Field(description="The folder written into (absolute path)")
    files: list[str] = Field(
        description="The files written, relative to directory and sorted: driver.py (the template to edit) "
        "and the JSON Schemas of the driver request and result"
    )


class StatusReport(Record):
    """``gpuopt status``: one invocation, or the root's Target, Champion and pending invocations."""

    invocation: InvocationStatus | None = Field(
        description="Status of the invocation asked for; null when no invocation id was given"
    )
    root: RootStatus | None = Field(
        description="Without an invocation id: the root's Target, current Champion and every invocation "
        "not yet finished; null when an id was given"
    )
