"""The table of every document gpuopt emits: schema name -> pydantic model (the single source of truth)."""

from __future__ import annotations

import re
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from gpuopt.models.compiler import InductorReport, PtxasReport, ResUsageReport, TritonReport
from gpuopt.models.doctor import DoctorReport
from gpuopt.models.envelope import Envelope
from gpuopt.models.evaluation.cli import DriverInit, StatusReport
from gpuopt.models.evaluation.invocation import InvocationStatus, SubmitOutcome
from gpuopt.models.evaluation.store import StoreReindex, StoreVerification
from gpuopt.models.evaluation.target import ReadinessResult
from gpuopt.models.ncu import NcuCollection, NcuSummary
from gpuopt.models.nsys import NsysSummaryData, NsysTableData, NsysTimelineData
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
    "gpuopt.target-result/v1": ReadinessResult,
    "gpuopt.submit/v1": SubmitOutcome,
    "gpuopt.driver-init/v1": DriverInit,
    "gpuopt.status/v1": StatusReport,
    "gpuopt.cancel/v1": InvocationStatus,
    "gpuopt.store-verify/v1": StoreVerification,
    "gpuopt.store-reindex/v1": StoreReindex,
    "gpuopt.nsys.summary/v1": NsysSummaryData,
    "gpuopt.nsys.table/v1": NsysTableData,
    "gpuopt.nsys.timeline/v1": NsysTimelineData,
}

ENVELOPES: dict[str, type[Envelope[Any]]] = {name: envelope_for(name, m) for name, m in DATA_MODELS.items()}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one envelope (serialization mode: what gpuopt prints)."""
    return ENVELOPES[name].model_json_schema(by_alias=True, mode="serialization")


def _document_models() -> dict[str, Any]:
    from gpuopt.models.evaluation import driver, invocation, store, target

    return {
        "gpuopt.target/v1": target.Target | target.DiagnosticTarget,
        "gpuopt.request.readiness-check/v1": target.ReadinessRequest | target.DiagnosticRequest,
        "gpuopt.readiness-failure/v1": target.ReadinessFailure,
        "gpuopt.tree/v1": store.TreeManifest,
        "gpuopt.ledger-line/v1": store.LedgerLine,
        "gpuopt.driver/v1": driver.DriverDeclaration,
        "gpuopt.driver-request/v1": driver.DriverRequest,
        "gpuopt.driver-result/v1": driver.DriverResult,
        "gpuopt.invocation-request/v1": invocation.FrozenRequest,
        "gpuopt.invocation-result/v1": invocation.InvocationResult,
        "gpuopt.invocation-event/v1": invocation.Event,
        "gpuopt.invocation-supervisor/v1": invocation.SupervisorRecord,
        "gpuopt.invocation-active-child/v1": invocation.ActiveChild,
        "gpuopt.gpu-occupancy/v1": invocation.Occupancy,
    }


DOCUMENTS: dict[str, Any] = _document_models()
"""Records, requests and driver files that are not command envelopes: name -> model (or union)."""


def document_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of a stored record, request or driver document."""
    from pydantic import TypeAdapter

    return TypeAdapter(DOCUMENTS[name]).json_schema(by_alias=True, mode="validation")
