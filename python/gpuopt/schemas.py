"""The table of every document gpuopt emits: schema name -> pydantic model (the single source of truth)."""

from __future__ import annotations

import re
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from gpuopt.models.doctor import DoctorReport
from gpuopt.models.envelope import Envelope
from gpuopt.models.nsys import NsysSummaryData, NsysTableData, NsysTimelineData
from gpuopt.models.schema import SchemaDocument


def envelope_for(name: str, data_model: type[BaseModel] | None) -> type[Envelope[Any]]:
    """The envelope model of one command: ``schema`` fixed to ``name``, ``data`` typed."""
    base: Any = Envelope[data_model] if data_model is not None else Envelope[None]  # type: ignore[valid-type]
    model_name = "Envelope_" + re.sub(r"[^A-Za-z0-9]", "_", name.removeprefix("gpuopt."))
    const: Any = Literal[name]
    model = create_model(model_name, __base__=base, schema_=(const, Field(alias="schema")))
    return cast("type[Envelope[Any]]", model)


# Name -> data model. Bump the version suffix when a model changes incompatibly.
DATA_MODELS: dict[str, type[BaseModel] | None] = {
    "gpuopt.doctor/v1": DoctorReport,
    "gpuopt.schema/v1": SchemaDocument,
    "gpuopt.error/v1": None,
    "gpuopt.nsys.summary/v1": NsysSummaryData,
    "gpuopt.nsys.table/v1": NsysTableData,
    "gpuopt.nsys.timeline/v1": NsysTimelineData,
}

ENVELOPES: dict[str, type[Envelope[Any]]] = {name: envelope_for(name, m) for name, m in DATA_MODELS.items()}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one envelope (serialization mode: what gpuopt prints)."""
    return ENVELOPES[name].model_json_schema(by_alias=True, mode="serialization")
