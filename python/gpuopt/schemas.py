"""The table of every document gpuopt emits: schema name -> pydantic model (the single source of truth)."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from gpuopt.evaluation import registry
from gpuopt.models.envelope import Envelope


def envelope_for(name: str, data_model: type[BaseModel] | None) -> type[Envelope[Any]]:
    """The envelope model of one command: ``schema`` fixed to ``name``, ``data`` typed."""
    base: Any = Envelope[data_model] if data_model is not None else Envelope[None]  # type: ignore[valid-type]
    model_name = "Envelope_" + re.sub(r"[^A-Za-z0-9]", "_", name.removeprefix("gpuopt."))
    const: Any = Literal[name]
    described = Envelope.model_fields["schema_"].description
    model = create_model(
        model_name, __base__=base, schema_=(const, Field(alias="schema", description=described))
    )
    return cast("type[Envelope[Any]]", model)


# Name -> data model. Bump the version suffix when a model changes incompatibly. The evaluation verbs'
# envelopes are their entries' in the operations registry (:func:`_paths` adds them).
_DATA_MODEL_PATHS: dict[str, str | None] = {
    "gpuopt.doctor/v1": "gpuopt.models.doctor:DoctorReport",
    "gpuopt.schema/v1": "gpuopt.models.schema:SchemaDocument",
    "gpuopt.error/v1": None,
    "gpuopt.torch.summary/v1": "gpuopt.models.torch_trace:TorchSummary",
    "gpuopt.torch.kernels/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.ops/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.api/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.timeline/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.gaps/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.steps/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.launches/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.graphs/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.transfers/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.collectives/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.comm/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.stats.compare/v1": "gpuopt.models.stats:CompareData",
    "gpuopt.stats.noise/v1": "gpuopt.models.stats:NoiseData",
    "gpuopt.sass.scan/v1": "gpuopt.models.sass:SassScanReport",
    "gpuopt.sass.functions/v2": "gpuopt.models.sass:SassTableData",
    "gpuopt.sass.opcodes/v2": "gpuopt.models.sass:SassTableData",
    "gpuopt.sass.signatures/v2": "gpuopt.models.sass:SassTableData",
    "gpuopt.compiler.ptxas/v1": "gpuopt.models.compiler:PtxasReport",
    "gpuopt.compiler.res_usage/v1": "gpuopt.models.compiler:ResUsageReport",
    "gpuopt.compiler.triton/v1": "gpuopt.models.compiler:TritonReport",
    "gpuopt.compiler.inductor/v1": "gpuopt.models.compiler:InductorReport",
    "gpuopt.ncu.summary/v1": "gpuopt.models.ncu:NcuSummary",
    "gpuopt.ncu.launches/v2": "gpuopt.models.table:TableResult",
    "gpuopt.ncu.table/v2": "gpuopt.models.table:TableResult",
    "gpuopt.ncu.roofline/v2": "gpuopt.models.table:TableResult",
    "gpuopt.ncu.compare/v2": "gpuopt.models.table:TableResult",
    "gpuopt.ncu.collect/v1": "gpuopt.models.ncu:NcuCollection",
    "gpuopt.readiness-plan/v1": "gpuopt.models.evaluation.readiness:ReadinessPlan",
    "gpuopt.driver-init/v1": "gpuopt.models.evaluation.cli:DriverInit",
    "gpuopt.status/v1": "gpuopt.models.evaluation.cli:StatusReport",
    "gpuopt.cancel/v1": "gpuopt.models.evaluation.status:InvocationStatus",
    "gpuopt.idle-check/v1": "gpuopt.models.evaluation.resources:IdleReport",
    "gpuopt.store-verify/v2": "gpuopt.models.evaluation.store:StoreVerification",
    "gpuopt.store-reindex/v1": "gpuopt.models.evaluation.store:StoreReindex",
    "gpuopt.experiment-init/v1": "gpuopt.models.evaluation.skeleton:RequestSkeleton",
    "gpuopt.champion-show/v1": "gpuopt.models.evaluation.champion:ChampionState",
    "gpuopt.champion-history/v1": "gpuopt.models.evaluation.champion:ChampionHistory",
    "gpuopt.ls/v2": "gpuopt.models.table:TableResult",
    "gpuopt.show/v1": "gpuopt.models.evaluation.views:ShowData",
    "gpuopt.report/v1": "gpuopt.models.evaluation.views:ReportData",
    "gpuopt.handoff/v1": "gpuopt.models.evaluation.views:HandoffData",
    "gpuopt.example-run/v1": "gpuopt.models.example:ExampleRun",
    "gpuopt.nsys.summary/v1": "gpuopt.models.nsys:NsysSummaryData",
    "gpuopt.nsys.table/v1": "gpuopt.models.nsys:NsysTableData",
    "gpuopt.nsys.ranks/v1": "gpuopt.models.ranks:RanksData",
    "gpuopt.torch.ranks/v1": "gpuopt.models.ranks:RanksData",
    "gpuopt.many.table/v1": "gpuopt.models.many:ManyTableData",
    "gpuopt.nsys.timeline/v1": "gpuopt.models.nsys:NsysTimelineData",
    "gpuopt.map.account/v1": "gpuopt.models.map:MapAccountData",
    "gpuopt.nsys.graphs/v1": "gpuopt.models.nsys:NsysGraphsData",
    "gpuopt.html-report/v1": "gpuopt.models.html:HtmlReportData",
    "gpuopt.profile.diff/v2": "gpuopt.models.profile:ProfileDiffData",
    "gpuopt.gate.save/v1": "gpuopt.models.gate:GateSaveData",
    "gpuopt.gate.list/v1": "gpuopt.models.gate:GateListData",
    "gpuopt.gate.show/v1": "gpuopt.models.gate:GateShowData",
    "gpuopt.gate.delete/v1": "gpuopt.models.gate:GateDeleteData",
    "gpuopt.gate.export/v1": "gpuopt.models.gate:GateTransferData",
    "gpuopt.gate.import/v1": "gpuopt.models.gate:GateTransferData",
    "gpuopt.profile.overview/v1": "gpuopt.models.overview:OverviewData",
    "gpuopt.torch.paths/v1": "gpuopt.models.torch_trace:TorchTable",
    "gpuopt.torch.flops/v1": "gpuopt.models.flops:TorchFlopsData",
    "gpuopt.torch.export/v1": "gpuopt.models.flops:PerfettoExport",
    "gpuopt.nsys.export/v1": "gpuopt.models.flops:PerfettoExport",
    "gpuopt.ncu.flops/v1": "gpuopt.models.table:TableResult",
    "gpuopt.nsys.iterations/v1": "gpuopt.models.analyses:IterationsData",
    "gpuopt.nsys.critical-path/v1": "gpuopt.models.analyses:CriticalPathData",
    "gpuopt.nsys.queue/v1": "gpuopt.models.analyses:QueueData",
    "gpuopt.nsys.sequences/v1": "gpuopt.models.analyses:SequencesData",
    "gpuopt.torch.iterations/v1": "gpuopt.models.analyses:IterationsData",
    "gpuopt.torch.critical-path/v1": "gpuopt.models.analyses:CriticalPathData",
    "gpuopt.torch.queue/v1": "gpuopt.models.analyses:QueueData",
    "gpuopt.torch.sequences/v1": "gpuopt.models.analyses:SequencesData",
    "gpuopt.skill.show/v1": "gpuopt.models.agent:SkillShown",
    "gpuopt.skill.install/v1": "gpuopt.models.agent:SkillInstalled",
    "gpuopt.knowledge.query/v1": "gpuopt.models.knowledge:KnowledgeQueryData",
    "gpuopt.knowledge.match/v1": "gpuopt.models.knowledge:KnowledgeMatchData",
    "gpuopt.audit.versions/v1": "gpuopt.models.knowledge:VersionAuditData",
}


def _paths() -> dict[str, str | None]:
    """The table above and each verb's envelope from the operations registry."""
    return {**_DATA_MODEL_PATHS, **{v.envelope: v.data for v in registry.verbs()}}


def _data_model(name: str) -> type[BaseModel] | None:
    path = _paths()[name]
    if path is None:
        return None
    module, _, attribute = path.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    return cast("type[BaseModel]", found)


@cache
def _envelope(name: str) -> type[Envelope[Any]]:
    return envelope_for(name, _data_model(name))


class _Lazy(Mapping[str, Any]):
    """Every schema name, each model imported and built on first look-up: printing one envelope
    imports one area's models, not every model gpuopt has (start-up, issue 16)."""

    def __init__(self, build: Any) -> None:
        self._build = build

    def __getitem__(self, name: str) -> Any:
        if name not in _paths():
            raise KeyError(name)
        return self._build(name)

    def __iter__(self) -> Iterator[str]:
        return iter(_paths())

    def __len__(self) -> int:
        return len(_paths())


DATA_MODELS: Mapping[str, type[BaseModel] | None] = _Lazy(_data_model)
ENVELOPES: Mapping[str, type[Envelope[Any]]] = _Lazy(_envelope)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one envelope (serialization mode: what gpuopt prints)."""
    return ENVELOPES[name].model_json_schema(by_alias=True, mode="serialization")


RESULT_VERSIONS = (1, 2, 3)
"""``gpuopt.invocation-result.<verb>/vN``: every name gives the schema that reads every result format."""


def _verb_documents(verbs: tuple[registry.Verb, ...]) -> dict[str, Any]:
    """Each verb's request and, for a supervised verb, its frozen request and result."""
    out: dict[str, Any] = {}
    for verb in verbs:
        if verb.request_schema is not None:
            out[verb.request_schema] = verb.request_model()
        if verb.supervised is not None:
            out[f"gpuopt.invocation-request.{verb.document}/v1"] = registry.load(verb.supervised.frozen)
            result = registry.load(verb.supervised.result)
            out.update({f"gpuopt.invocation-result.{verb.document}/v{n}": result for n in RESULT_VERSIONS})
    return out


def _document_models() -> dict[str, Any]:
    from gpuopt.models.evaluation import (
        champion,
        driver,
        experiment,
        gate,
        invocation,
        readiness,
        status,
        store,
        target,
    )
    from gpuopt.models.gate import GateBundle
    from gpuopt.models.knowledge import CardsFile, FactCatalog, SourcesFile
    from gpuopt.models.map import ExecutionMap

    return {
        "gpuopt.target/v1": target.Target | target.DiagnosticTarget,
        "gpuopt.target/v2": target.Target | target.DiagnosticTarget,
        "gpuopt.readiness-failure/v1": readiness.ReadinessFailure,
        "gpuopt.tree/v1": store.TreeManifest,
        "gpuopt.ledger-line/v1": store.LedgerLine,
        "gpuopt.driver/v1": driver.DriverDeclaration,
        "gpuopt.driver-request/v1": driver.DriverRequest,
        "gpuopt.driver-result/v1": driver.DriverResult,
        "gpuopt.invocation-request/v1": invocation.FrozenRequest,
        "gpuopt.invocation-result/v1": invocation.InvocationResult,
        "gpuopt.invocation-result/v2": invocation.InvocationResult,
        "gpuopt.invocation-result/v3": invocation.InvocationResult,
        "gpuopt.invocation-event/v1": status.Event,
        "gpuopt.invocation-supervisor/v1": status.SupervisorRecord,
        "gpuopt.invocation-active-child/v1": status.ActiveChild,
        "gpuopt.gpu-occupancy/v1": status.Occupancy,
        "gpuopt.experiment/v1": experiment.Experiment,
        "gpuopt.champion-pointer/v1": champion.ChampionPointer,
        "gpuopt.selection/v1": champion.Selection,
        "gpuopt.gate-baseline/v1": gate.GateBaseline,
        "gpuopt.gate-name/v1": gate.GateName,
        "gpuopt.gate-bundle/v1": GateBundle,
        "gpuopt.execution-map/v1": ExecutionMap,
        "gpuopt.knowledge.cards/v1": CardsFile,
        "gpuopt.knowledge.sources/v1": SourcesFile,
        "gpuopt.knowledge.facts/v1": FactCatalog,
    }


def __getattr__(name: str) -> Any:
    """``DOCUMENTS``: records, requests and driver files that are not command envelopes: name -> model
    (or union), built on first use."""
    if name == "DOCUMENTS":
        return _documents()
    raise AttributeError(f"module 'gpuopt.schemas' has no attribute {name!r}")


def _documents() -> dict[str, Any]:
    return _cached_documents(registry.verbs())


@lru_cache(maxsize=4)
def _cached_documents(verbs: tuple[registry.Verb, ...]) -> dict[str, Any]:
    return {**_document_models(), **_verb_documents(verbs)}


def document_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of a stored record, request or driver document."""
    from pydantic import TypeAdapter

    return TypeAdapter(_documents()[name]).json_schema(by_alias=True, mode="validation")
