"""Data models of evaluation commands that have no record of their own."""

from __future__ import annotations

from gpuopt.models.evaluation.common import Record
from gpuopt.models.evaluation.invocation import InvocationStatus, RootStatus


class DriverInit(Record):
    """``gpuopt driver init``: the files written."""

    directory: str
    files: list[str]


class StatusReport(Record):
    """``gpuopt status``: one invocation, or the root's Target, Champion and pending invocations."""

    invocation: InvocationStatus | None
    root: RootStatus | None
