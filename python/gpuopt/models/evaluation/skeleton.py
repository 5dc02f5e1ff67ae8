"""``gpuopt experiment init``: a request skeleton filled from a root's Target."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpuopt.models.evaluation.common import Record, Text


class RequestSkeleton(Record):
    """A request with what the root knows filled in and ``<FILL: ...>`` where only you can answer."""

    kind: str = Field(description="The request schema the skeleton is for")
    request: dict[str, Any] = Field(description="The request; every <FILL: ...> string must be replaced")
    placeholders: list[str] = Field(description="JSON paths of the <FILL: ...> values, with what each wants")
    filled: list[Text] = Field(description="What was taken from the root, one line each")
    out: str | None = Field(description="The file written (--out), or null when printed")
