"""Documents printed by ``gpuopt schema``."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpuopt.models._base import Model


class SchemaShown(Model):
    name: str = Field(description="The schema or table asked for")
    json_schema: dict[str, Any] = Field(
        description="Its JSON Schema; for a table (AREA.TABLE), a row object whose properties carry "
        "each column's definition"
    )


class SchemaDocument(Model):
    """Every schema name, and the one asked for (if any)."""

    names: list[str] = Field(description="Envelope schema names (what a command's --json prints)")
    shown: SchemaShown | None = Field(description="The schema asked for; null when listing")
    documents: list[str] = Field(
        default_factory=list, description="Record, request and driver document schemas (not envelopes)"
    )
    tables: list[str] = Field(
        default_factory=list, description="Tables whose column definitions `gpuopt schema AREA.TABLE` prints"
    )
