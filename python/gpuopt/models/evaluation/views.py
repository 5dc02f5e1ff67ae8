"""Data of the read-only views: ``show``, ``report`` and ``handoff``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import Record, Sha256
from gpuopt.models.evaluation.invocation import InvocationStatus
from gpuopt.models.table import TableData


class ShowData(Record):
    """``gpuopt show``: one record, verified against its ledger hash, or one table of an invocation."""

    kind: str
    id: str
    path: str
    sha256: Sha256
    verified: bool = Field(description="The file's bytes hash to the ledger's sha256")
    status: InvocationStatus | None = Field(description="Derived status (invocations)")
    record: dict[str, Any] | None = Field(description="The record itself (without --pairs/--calls/...)")
    table: TableData | None = Field(description="The part asked for (--pairs, --samples, --calls, --events)")


class ReportData(Record):
    """``gpuopt report``: a view, never evidence."""

    format: Literal["md", "html", "json"]
    scope: str = Field(description="The root, or the one record reported")
    out: str | None
    text: str | None = Field(description="The Markdown or HTML (when not written to --out)")
    report: dict[str, Any] | None = Field(description="The structured report (format json)")


class HandoffData(Record):
    """``gpuopt handoff``: where the draft went and what it holds."""

    path: str
    draft: bool
    facts: int = Field(description="Facts written, each citing its record")
    placeholders: list[str] = Field(description="Sections left TO COMPLETE for the author")
