"""The table of every document gpuopt emits: schema name -> pydantic model (the single source of truth)."""

from __future__ import annotations

import re
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from gpuopt.models.compiler import InductorReport, PtxasReport, ResUsageReport, TritonReport
from gpuopt.models.doctor import DoctorReport
from gpuopt.models.envelope import Envelope
from gpuopt.models.evaluation.champion import ChampionHistory, ChampionState, SelectOutcome
from gpuopt.models.evaluation.cli import DriverInit, StatusReport
from gpuopt.models.evaluation.experiment import ExperimentOutcome
from gpuopt.models.evaluation.invocation import InvocationStatus, SubmitOutcome
from gpuopt.models.evaluation.operations import (
    BaselineData,
    FinalAuditData,
    NoiseEvaluationData,
    ScreenData,
    TargetData,
)
from gpuopt.models.evaluation.resources import IdleReport
from gpuopt.models.evaluation.store import StoreReindex, StoreVerification
from gpuopt.models.evaluation.target import ReadinessResult
from gpuopt.models.evaluation.views import HandoffData, ReportData, ShowData
from gpuopt.models.example import ExampleRun
from gpuopt.models.map import MapAccountData
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
    "gpuopt.torch.comm/v1": TorchTable,
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
    "gpuopt.idle-check/v1": IdleReport,
    "gpuopt.store-verify/v1": StoreVerification,
    "gpuopt.store-reindex/v1": StoreReindex,
    "gpuopt.baseline/v1": BaselineData,
    "gpuopt.noise/v1": NoiseEvaluationData,
    "gpuopt.experiment-create/v1": ExperimentOutcome,
    "gpuopt.screen/v1": ScreenData,
    "gpuopt.target-evaluation/v1": TargetData,
    "gpuopt.final-audit/v1": FinalAuditData,
    "gpuopt.champion-show/v1": ChampionState,
    "gpuopt.champion-select/v1": SelectOutcome,
    "gpuopt.champion-restore/v1": SelectOutcome,
    "gpuopt.champion-history/v1": ChampionHistory,
    "gpuopt.ls/v1": TableData,
    "gpuopt.show/v1": ShowData,
    "gpuopt.report/v1": ReportData,
    "gpuopt.handoff/v1": HandoffData,
    "gpuopt.example-run/v1": ExampleRun,
    "gpuopt.nsys.summary/v1": NsysSummaryData,
    "gpuopt.nsys.table/v1": NsysTableData,
    "gpuopt.nsys.timeline/v1": NsysTimelineData,
    "gpuopt.map.account/v1": MapAccountData,
}

ENVELOPES: dict[str, type[Envelope[Any]]] = {name: envelope_for(name, m) for name, m in DATA_MODELS.items()}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one envelope (serialization mode: what gpuopt prints)."""
    return ENVELOPES[name].model_json_schema(by_alias=True, mode="serialization")


def _document_models() -> dict[str, Any]:
    from gpuopt.models.evaluation import champion, driver, experiment, invocation, operations, store, target
    from gpuopt.models.map import ExecutionMap

    return {
        "gpuopt.target/v1": target.Target | target.DiagnosticTarget,
        "gpuopt.target/v2": target.Target | target.DiagnosticTarget,
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
        "gpuopt.experiment/v1": experiment.Experiment,
        "gpuopt.request.experiment/v1": experiment.ExperimentRequest,
        "gpuopt.request.baseline/v1": operations.BaselineRequest,
        "gpuopt.request.noise/v1": operations.NoiseRequest,
        "gpuopt.request.screen/v1": operations.ScreenRequest,
        "gpuopt.request.target/v1": operations.TargetRequest,
        "gpuopt.request.final-audit/v1": operations.FinalAuditRequest,
        "gpuopt.request.champion-select/v1": champion.SelectRequest,
        "gpuopt.request.champion-restore/v1": champion.RestoreRequest,
        "gpuopt.champion-pointer/v1": champion.ChampionPointer,
        "gpuopt.selection/v1": champion.Selection,
        "gpuopt.invocation-request.baseline/v1": operations.BaselineFrozen,
        "gpuopt.invocation-request.noise/v1": operations.NoiseFrozen,
        "gpuopt.invocation-request.screen/v1": operations.ScreenFrozen,
        "gpuopt.invocation-request.target/v1": operations.TargetFrozen,
        "gpuopt.invocation-request.final-audit/v1": operations.FinalAuditFrozen,
        "gpuopt.invocation-result.baseline/v1": operations.BaselineResult,
        "gpuopt.invocation-result.noise/v1": operations.NoiseResult,
        "gpuopt.invocation-result.screen/v1": operations.ScreenResult,
        "gpuopt.invocation-result.target/v1": operations.TargetResult,
        "gpuopt.invocation-result.final-audit/v1": operations.FinalAuditResult,
        "gpuopt.execution-map/v1": ExecutionMap,
    }


DOCUMENTS: dict[str, Any] = _document_models()
"""Records, requests and driver files that are not command envelopes: name -> model (or union)."""


def document_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of a stored record, request or driver document."""
    from pydantic import TypeAdapter

    return TypeAdapter(DOCUMENTS[name]).json_schema(by_alias=True, mode="validation")
