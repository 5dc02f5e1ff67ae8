"""Documents of the knowledge area: the card and source registry, query and match results, version audits.

A card is advisory material about one mechanism or phenomenon. Its observation rules name facts that
gpuopt's engines emit (``ncu.launch:local_load_bytes``, ``sass.function:tensor_core_count``, ...); a rule
holding says only that the facts meet the card's advisory thresholds, never what to do next.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuopt.models._base import Model

Key = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_]*(\.[a-z0-9_]+)*$", max_length=128)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
Version = Annotated[str, StringConstraints(pattern=r"^\d+(\.\d+){0,2}$")]

CardKind = Literal["mechanism", "diagnostic", "contract"]
Relation = Literal["compatible", "related", "incompatible"]
Comparison = Literal[">", ">=", "<", "<=", "==", "!="]
TraceShape = Literal["has_cuda_graphs", "multi_device", "has_nccl", "has_nvtx"]


class Source(Model):
    """One primary document, reviewed on a date at a version."""

    id: Key = Field(description="The source's key, cited by cards")
    title: Text = Field(description="The document's title")
    publisher: Literal["NVIDIA", "PyTorch", "Triton", "NCCL"] = Field(
        description="Who publishes it: NVIDIA, PyTorch, Triton or NCCL"
    )
    url: Annotated[str, StringConstraints(pattern=r"^https://[^\s]+$")] = Field(
        description="Where it is (https, a primary documentation host)"
    )
    version: Text = Field(description="The document's version as it states it, e.g. 'CUDA 13.0'")
    last_reviewed: dt.date = Field(
        description="When gpuopt last checked the cited sections against it (ISO date)"
    )


class SourceRef(Model):
    """A place in a source: the section that supports a card or a threshold."""

    source: Key = Field(description="The cited source's id (sources.json)")
    locator: Text = Field(description="The exact section title (and number where the document has one)")
    summary: Text = Field(description="What the section says that the card relies on, in gpuopt's words")


class VersionRange(Model):
    min: Version | None = Field(default=None, description="Inclusive")
    max: Version | None = Field(default=None, description="Inclusive; 13.0 covers 13.0.x")


class IdentityConstraints(Model):
    architectures: list[str] = Field(
        default_factory=list, description="Exact architectures (sm_90a is not sm_90); empty: any"
    )
    min_compute_capability: Annotated[str, StringConstraints(pattern=r"^\d+\.\d$")] | None = Field(
        default=None, description="Lowest compute capability covered (major.minor); null: any"
    )
    cuda: VersionRange | None = Field(
        default=None, description="CUDA versions covered (min and max inclusive); null: any"
    )
    frameworks: dict[Key, VersionRange] = Field(
        default_factory=dict, description="Framework name -> versions covered (torch, triton, ...)"
    )


class Condition(Model):
    """One comparison of an engine fact with the card's advisory value."""

    fact: Annotated[str, StringConstraints(pattern=r"^[a-z_]+\.[a-z_]+:[a-z0-9_.]+$")] = Field(
        description="SCOPE:FIELD, e.g. ncu.launch:local_load_bytes (see facts.json)"
    )
    rows: str | None = Field(
        default=None, description="For row tables (nsys.api): sum the fact over rows whose name starts so"
    )
    per: str | None = Field(default=None, description="Divide by this fact of the same scope first")
    op: Comparison = Field(description="How the fact compares with the threshold: >, >=, <, <=, == or !=")
    value: float = Field(description="The threshold, or with ``other`` the factor applied to that fact")
    other: str | None = Field(default=None, description="Compare with value x this fact (same scope)")
    threshold: SourceRef | None = Field(
        default=None, description="Where the advisory value comes from; null only for presence (> 0, == 0)"
    )


class ObservationRules(Model):
    """All ``signals`` hold and no ``counter`` holds: the card's signals hold for that subject."""

    scope: Literal["kernel", "function", "device", "op"] = Field(
        description="The subject the facts describe: kernel (ncu), function (sass, ptxas, res-usage), "
        "device (nsys, torch) or op (torch ops)"
    )
    signals: list[Condition] = Field(min_length=1, description="Conditions that must all hold")
    counter: list[Condition] = Field(default_factory=list, description="Conditions of which none may hold")


class Card(Model):
    id: Key = Field(description="The card's key (mechanism.*, diagnostic.*, contract.*)")
    kind: CardKind = Field(
        description="mechanism (a GPU performance mechanism), diagnostic (a phenomenon seen in evidence) "
        "or contract (a property evidence must have)"
    )
    mechanism: Text = Field(description="The mechanism or phenomenon the card is about, in one sentence")
    title: Text = Field(description="The card's title")
    aliases: list[Text] = Field(description="Phrases a person or tool uses for this phenomenon")
    distinguishing_question: Text = Field(
        description="The question that tells this mechanism apart from its alternatives"
    )
    required_evidence: list[Text] = Field(
        min_length=1, description="The evidence that decides whether the mechanism is at work"
    )
    counter_signals: list[Text] = Field(description="Observations that speak against it")
    invalidators: list[Text] = Field(description="Conditions under which the card's material does not hold")
    identity: IdentityConstraints = Field(
        description="The architectures, compute capability, CUDA and framework versions the material covers"
    )
    trace_shape: dict[TraceShape, bool] = Field(
        default_factory=dict, description="The card applies only where the trace has (true) / lacks these"
    )
    sass_signatures: list[Key] = Field(default_factory=list, description="Keys of sass_signatures.json")
    rules: list[ObservationRules] = Field(
        default_factory=list,
        description="Observation rules over engine facts; the card's signals hold for a subject when one "
        "rule's signals all hold and no counter does",
    )
    sources: list[SourceRef] = Field(
        min_length=1, description="The source sections the card relies on (at least one)"
    )


class SourcesFile(Model):
    """``sources.json``: the primary documents cards cite."""

    format: Literal["gpuopt.knowledge.sources"] = Field(description="Always gpuopt.knowledge.sources")
    version: int = Field(ge=1, description="Registry version (equal to cards.json's)")
    as_of: dt.date = Field(description="Date the registry was last reviewed (ISO date)")
    sources: list[Source] = Field(description="The primary documents cards cite")


class CardsFile(Model):
    """``cards.json``: the cards, citing ``sources.json`` by id."""

    format: Literal["gpuopt.knowledge.cards"] = Field(description="Always gpuopt.knowledge.cards")
    version: int = Field(ge=1, description="Registry version (equal to sources.json's)")
    as_of: dt.date = Field(description="Date the registry was last reviewed (ISO date)")
    cards: list[Card] = Field(description="Every card of the registry")


class FactScope(Model):
    scope: str = Field(
        description="The fact scope (ncu.launch, sass.function, nsys.device, torch.op, ...), written "
        "before the : of a fact name"
    )
    engine: str = Field(description="The engine table or document the facts are read from")
    facts: list[str] = Field(description="The fact names the scope's engine emits on the fixtures")
    row_names: list[str] = Field(default_factory=list, description="Row names seen on the fixtures")


class FactCatalog(Model):
    """The fact names gpuopt's engines emit, regenerated from the real fixtures by a test."""

    format: Literal["gpuopt.knowledge.facts"] = Field(description="Always gpuopt.knowledge.facts")
    scopes: list[FactScope] = Field(description="Every scope with the facts its engine emits")
    ncu_metrics: dict[str, str] = Field(description="ncu launch fact -> the ncu metric it is read from")


# --- query ---------------------------------------------------------------------------------------


class Identity(Model):
    arch: str | None = Field(
        default=None,
        description="The architecture (sm_90, sm_90a, sm_100f, ...) applicability is judged for; null when "
        "not stated",
    )
    cuda: str | None = Field(default=None, description="The CUDA version judged for; null when not stated")
    frameworks: dict[str, str] = Field(
        default_factory=dict, description="Framework name -> version judged for"
    )
    source: str = Field(description="options, or target:<id> when read from a frozen Target")


class Reason(Model):
    field: str = Field(
        description="The identity field at issue: arch, compute_capability, cuda or frameworks.<name>"
    )
    kind: Literal["mismatch", "limitation"] = Field(
        description="mismatch (outside what the card covers: incompatible) or limitation (not stated, or "
        "newer than the material covers: related)"
    )
    expected: str = Field(description="What the card covers, e.g. >= 9.0 or 12.0..13.0")
    actual: str | None = Field(description="What the identity says; null when it does not state the field")


class Applicability(Model):
    relation: Relation = Field(description="compatible, related (a limitation) or incompatible (a mismatch)")
    reasons: list[Reason] = Field(
        description="One reason per field that is not compatible; empty when compatible"
    )


class PhenomenonMatch(Model):
    query: str = Field(description="The --phenomenon text as given")
    normalised: str = Field(
        description="The text normalised (NFKC, case-folded, non-alphanumerics to spaces)"
    )
    matched: str = Field(description="The card term that matched")
    via: Literal["key", "alias", "fact", "ncu_metric", "tokens"] = Field(
        description="How it matched: key (the card id), alias, fact (a rule's fact name), ncu_metric (the "
        "metric behind a fact) or tokens (every word among one term's words)"
    )


class SourceCitation(Model):
    source: str = Field(description="Id of the cited document in sources.json")
    title: str = Field(description="The document's title")
    url: str = Field(description="Where it is")
    version: str = Field(description="The document's version as it states it")
    last_reviewed: dt.date = Field(description="When gpuopt last checked the section (ISO date)")
    locator: str = Field(description="The exact section")
    summary: str = Field(description="What the section says that the card relies on, in gpuopt's words")


class CardView(Model):
    id: str = Field(description="The card's key (mechanism.*, diagnostic.*, contract.*)")
    kind: CardKind = Field(
        description="mechanism (a GPU performance mechanism), diagnostic (a phenomenon seen in evidence) "
        "or contract (a property evidence must have)"
    )
    title: str = Field(description="The card's title")
    mechanism: str = Field(description="The mechanism or phenomenon the card is about, in one sentence")
    distinguishing_question: str = Field(
        description="The question that tells this mechanism apart from its alternatives"
    )
    required_evidence: list[str] = Field(
        description="The evidence that decides whether the mechanism is at work"
    )
    counter_signals: list[str] = Field(description="Observations that speak against it")
    invalidators: list[str] = Field(description="Conditions under which the card's material does not hold")
    identity: IdentityConstraints = Field(
        description="The architectures, compute capability, CUDA and framework versions the material covers"
    )
    trace_shape: dict[str, bool] = Field(
        description="Trace shapes the card needs (true) or excludes (false): has_cuda_graphs, "
        "multi_device, has_nccl, has_nvtx"
    )
    sources: list[SourceCitation] = Field(description="The source sections the card relies on, resolved")


class QueryHit(Model):
    card: CardView = Field(description="The card found: what it says and the sections it relies on")
    applicability: Applicability = Field(
        description="Whether the card's material covers the identity asked about"
    )
    matches: list[PhenomenonMatch] = Field(
        description="How each --phenomenon matched it (empty for --mechanism)"
    )


class KnowledgeQueryData(Model):
    """``gpuopt knowledge query``: candidate cards, each with applicability and why it matched."""

    registry_version: int = Field(
        description="Version of the card registry (cards.json and sources.json agree on it)"
    )
    registry_sha256: str = Field(
        description="SHA-256 over cards.json, sources.json and facts.json as read: which registry answered"
    )
    identity: Identity = Field(
        description="The identity applicability was judged for, and where it came from"
    )
    normalisation: str = Field(description="How phenomenon text was normalised and matched, in words")
    hits: list[QueryHit] = Field(description="The cards found, compatible first (at most --limit)")
    total_hits: int = Field(description="Cards found before --limit kept the first of them")


# --- match ---------------------------------------------------------------------------------------


class EvidenceFile(Model):
    path: str = Field(description="The evidence file as given")
    kind: Literal["ncu", "nsys", "torch", "sass", "ptxas", "res_usage"] = Field(
        description="What it was read as: ncu, nsys, torch, sass, ptxas or res_usage"
    )
    subjects: int = Field(description="Subjects (kernels, functions, devices, ops) read from it")
    trace_shape: dict[str, bool] = Field(
        description="The trace's shape: has_cuda_graphs, multi_device, has_nccl, has_nvtx (only those it "
        "can tell)"
    )


class FactValue(Model):
    fact: str = Field(description="The fact compared (SCOPE:FIELD)")
    rows: str | None = Field(
        description="For a row table: the row name the fact was summed over; null otherwise"
    )
    per: str | None = Field(description="The fact it was divided by first; null otherwise")
    other: str | None = Field(description="The fact the threshold was multiplied by; null otherwise")
    value: float = Field(
        description="The fact's value for the subject (after rows and per), in the fact's unit"
    )
    op: Comparison = Field(description="How it compares with the threshold: >, >=, <, <=, == or !=")
    threshold: float = Field(
        description="The threshold compared with (the card's value, times other when given)"
    )
    holds: bool = Field(description="True when the comparison holds")
    threshold_source: SourceCitation | None = Field(
        description="The source section the threshold comes from; null for presence tests and fact-to-fact "
        "comparisons"
    )
    text: str = Field(
        description="The comparison as a sentence for people: the fact in words, its value and unit, the "
        "comparison, the threshold and where it came from (a source, another fact, the presence test)"
    )


class CardSignal(Model):
    card: str = Field(description="Id of the card whose signals hold")
    title: str = Field(description="The card's title")
    signals: list[FactValue] = Field(description="The rule's conditions, all holding")
    counter_signals: list[FactValue] = Field(description="Counter conditions evaluated (none held)")
    sources: list[SourceCitation] = Field(description="The source sections the card relies on")


class Subject(Model):
    evidence: str = Field(description="The evidence file the subject was read from")
    kind: Literal["kernel", "function", "device", "op"] = Field(description="kernel, function, device or op")
    name: str = Field(description="The subject's name (kernel function, SASS function, device, op)")
    rows: int = Field(
        description="Engine rows folded into this subject (ncu: launches, mean taken; op: calls)"
    )
    cards: list[CardSignal] = Field(
        description="The cards whose signals hold for this subject (empty when none)"
    )


class KnowledgeMatchData(Model):
    """``gpuopt knowledge match``: per kernel, function or device, the cards whose signals hold."""

    registry_version: int = Field(
        description="Version of the card registry (cards.json and sources.json agree on it)"
    )
    registry_sha256: str = Field(
        description="SHA-256 over cards.json, sources.json and facts.json as read: which registry answered"
    )
    evidence: list[EvidenceFile] = Field(description="Each evidence file read")
    subjects: list[Subject] = Field(
        description="Every subject of every file, with the cards whose signals hold"
    )


# --- audit ---------------------------------------------------------------------------------------


class ComponentChange(Model):
    component: str = Field(
        description="The flat key compared (host.host_id, gpu.0.name, nvidia.driver_version, tool.nvcc, "
        "package.torch, ...)"
    )
    a: str | None = Field(description="Its value in record A; null when A lacks it")
    b: str | None = Field(description="Its value in record B; null when B lacks it")


class VersionAuditData(Model):
    """``gpuopt audit versions A B``: is this a single-variable stack comparison?"""

    a: str = Field(description="Record A as given (a doctor output, a target.json or a root)")
    b: str = Field(description="Record B as given")
    a_kind: Literal["doctor", "target"] = Field(description="What A is: doctor or target")
    b_kind: Literal["doctor", "target"] = Field(description="What B is: doctor or target")
    keys_compared: Literal["all", "common"] = Field(
        description="all: same kinds, every key; common: a doctor record and a Target, shared keys only"
    )
    single_variable: bool = Field(
        description="True when no frozen field differs and exactly one stack component changed"
    )
    frozen_checked: list[str] = Field(
        description="Frozen keys compared (host, GPUs, gpuopt build; for Targets the workload definition)"
    )
    frozen_differences: list[ComponentChange] = Field(
        description="Frozen keys whose values differ (each makes the comparison not single-variable)"
    )
    stack_checked: list[str] = Field(
        description="Stack keys compared (driver, CUDA runtime, Python, kernel, tools, packages)"
    )
    stack_changes: list[ComponentChange] = Field(description="Stack components that differ")
    reasons: list[str] = Field(
        description="Why it is not single-variable: frozen_mismatch:KEY, software_stack_did_not_change, "
        "more_than_one_component_changed:N; empty when it is"
    )
    requirements: list[str] = Field(description="What a single-variable comparison still needs (by policy)")
