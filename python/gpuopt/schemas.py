"""The table of every document gpuopt emits: schema name -> pydantic model (the single source of truth)."""

from __future__ import annotations

import re
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from gpuopt.models.compiler import InductorReport, PtxasReport, ResUsageReport, TritonReport
from gpuopt.models.doctor import DoctorReport
from gpuopt.models.envelope import Envelope
from gpuopt.models.ncu import NcuCollection, NcuSummary
from gpuopt.models.sass import SassScanReport, SassTableData
from gpuopt.models.schema import SchemaDocument
from gpuopt.models.stats import CompareData, NoiseData
from gpuopt.models.table import TableData
from gpuopt.models.torch_trace import TorchSummary, TorchTable


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
    "gpuopt.torch.summary/v1": TorchSummary,
    "gpuopt.torch.kernels/v1": TorchTable,
    "gpuopt.torch.ops/v1": TorchTable,
    "gpuopt.torch.timeline/v1": TorchTable,
    "gpuopt.torch.gaps/v1": TorchTable,
    "gpuopt.torch.steps/v1": TorchTable,
    "gpuopt.torch.launches/v1": TorchTable,
    "gpuopt.torch.transfers/v1": TorchTable,
    "gpuopt.torch.collectives/v1": TorchTable,
    "gpuopt.stats.compare/v1": CompareData,
    "gpuopt.stats.noise/v1": NoiseData,
    "gpuopt.sass.scan/v1": SassScanReport,
    "gpuopt.sass.functions/v1": SassTableData,
    "gpuopt.sass.opcodes/v1": SassTableData,
    "gpuopt.sass.signatures/v1": SassTableData,
    "gpuopt.compiler.ptxas/v1": PtxasReport,
    "gpuopt.compiler.res_usage/v1": ResUsageReport,
    "gpuopt.compiler.triton/v1": TritonReport,
    "gpuopt.compiler.inductor/v1": InductorReport,
    "gpuopt.ncu.summary/v1": NcuSummary,
    "gpuopt.ncu.launches/v1": TableData,
    "gpuopt.ncu.table/v1": TableData,
    "gpuopt.ncu.roofline/v1": TableData,
    "gpuopt.ncu.compare/v1": TableData,
    "gpuopt.ncu.collect/v1": NcuCollection,
}

ENVELOPES: dict[str, type[Envelope[Any]]] = {name: envelope_for(name, m) for name, m in DATA_MODELS.items()}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one envelope (serialization mode: what gpuopt prints)."""
    return ENVELOPES[name].model_json_schema(by_alias=True, mode="serialization")
