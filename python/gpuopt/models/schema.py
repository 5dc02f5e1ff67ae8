"""Documents printed by ``gpuopt schema``."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpuopt.models._base import Model


class SchemaShown(Model):
    name: str
    json_schema: dict[str, Any]


class SchemaDocument(Model):
    """Every schema name, and the one asked for (if any)."""

    names: list[str]
    shown: SchemaShown | None
    documents: list[str] = Field(
        default_factory=list, description="Record, request and driver document schemas (not envelopes)"
    )
