"""The base every gpuopt model derives from: frozen, strict about unknown fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A frozen document; unknown fields are an error, so a producer and its model cannot drift apart."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
