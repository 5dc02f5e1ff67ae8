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

    id: Key
    title: Text
    publisher: Literal["NVIDIA", "PyTorch", "Triton", "NCCL"]
    url: Annotated[str, StringConstraints(pattern=r"^https://[^\s]+$")]
    version: Text = Field(description="The document's version as it states it, e.g. 'CUDA 13.0'")
    last_reviewed: dt.date


class SourceRef(Model):
    """A place in a source: the section that supports a card or a threshold."""

    source: Key
    locator: Text = Field(description="The exact section title (and number where the document has one)")
    summary: Text = Field(description="What the section says that the card relies on, in gpuopt's words")


class VersionRange(Model):
    min: Version | None = Field(default=None, description="Inclusive")
    max: Version | None = Field(default=None, description="Inclusive; 13.0 covers 13.0.x")


class IdentityConstraints(Model):
    architectures: list[str] = Field(
        default_factory=list, description="Exact architectures (sm_90a is not sm_90); empty: any"
    )
    min_compute_capability: Annotated[str, StringConstraints(pattern=r"^\d+\.\d$")] | None = None
    cuda: VersionRange | None = None
    frameworks: dict[Key, VersionRange] = Field(default_factory=dict)


class Condition(Model):
    """One comparison of an engine fact with the card's advisory value."""

    fact: Annotated[str, StringConstraints(pattern=r"^[a-z_]+\.[a-z_]+:[a-z0-9_.]+$")] = Field(
        description="SCOPE:FIELD, e.g. ncu.launch:local_load_bytes (see facts.json)"
    )
    rows: str | None = Field(
        default=None, description="For row tables (nsys.api): sum the fact over rows whose name starts so"
    )
    per: str | None = Field(default=None, description="Divide by this fact of the same scope first")
    op: Comparison
    value: float = Field(description="The threshold, or with ``other`` the factor applied to that fact")
    other: str | None = Field(default=None, description="Compare with value x this fact (same scope)")
    threshold: SourceRef | None = Field(
        default=None, description="Where the advisory value comes from; null only for presence (> 0, == 0)"
    )


class ObservationRules(Model):
    """All ``signals`` hold and no ``counter`` holds: the card's signals hold for that subject."""

    scope: Literal["kernel", "function", "device", "op"]
    signals: list[Condition] = Field(min_length=1)
    counter: list[Condition] = Field(default_factory=list)


class Card(Model):
    id: Key
    kind: CardKind
    mechanism: Text
    title: Text
    aliases: list[Text] = Field(description="Phrases a person or tool uses for this phenomenon")
    distinguishing_question: Text
    required_evidence: list[Text] = Field(min_length=1)
    counter_signals: list[Text]
    invalidators: list[Text]
    identity: IdentityConstraints
    trace_shape: dict[TraceShape, bool] = Field(
        default_factory=dict, description="The card applies only where the trace has (true) / lacks these"
    )
    sass_signatures: list[Key] = Field(default_factory=list, description="Keys of sass_signatures.json")
    rules: list[ObservationRules] = Field(default_factory=list)
    sources: list[SourceRef] = Field(min_length=1)


class SourcesFile(Model):
    """``sources.json``: the primary documents cards cite."""

    format: Literal["gpuopt.knowledge.sources"]
    version: int = Field(ge=1)
    as_of: dt.date
    sources: list[Source]


class CardsFile(Model):
    """``cards.json``: the cards, citing ``sources.json`` by id."""

    format: Literal["gpuopt.knowledge.cards"]
    version: int = Field(ge=1)
    as_of: dt.date
    cards: list[Card]


class FactScope(Model):
    scope: str
    engine: str = Field(description="The engine table or document the facts are read from")
    facts: list[str]
    row_names: list[str] = Field(default_factory=list, description="Row names seen on the fixtures")


class FactCatalog(Model):
    """The fact names gpuopt's engines emit, regenerated from the real fixtures by a test."""

    format: Literal["gpuopt.knowledge.facts"]
    scopes: list[FactScope]
    ncu_metrics: dict[str, str] = Field(description="ncu launch fact -> the ncu metric it is read from")


# --- query ---------------------------------------------------------------------------------------


class Identity(Model):
    arch: str | None = None
    cuda: str | None = None
    frameworks: dict[str, str] = Field(default_factory=dict)
    source: str = Field(description="options, or target:<id> when read from a frozen Target")


class Reason(Model):
    field: str
    kind: Literal["mismatch", "limitation"]
    expected: str
    actual: str | None


class Applicability(Model):
    relation: Relation
    reasons: list[Reason]


class PhenomenonMatch(Model):
    query: str
    normalised: str
    matched: str = Field(description="The card term that matched")
    via: Literal["key", "alias", "fact", "ncu_metric", "tokens"]


class SourceCitation(Model):
    source: str
    title: str
    url: str
    version: str
    last_reviewed: dt.date
    locator: str
    summary: str


class CardView(Model):
    id: str
    kind: CardKind
    title: str
    mechanism: str
    distinguishing_question: str
    required_evidence: list[str]
    counter_signals: list[str]
    invalidators: list[str]
    identity: IdentityConstraints
    trace_shape: dict[str, bool]
    sources: list[SourceCitation]


class QueryHit(Model):
    card: CardView
    applicability: Applicability
    matches: list[PhenomenonMatch]


class KnowledgeQueryData(Model):
    """``gpuopt knowledge query``: candidate cards, each with applicability and why it matched."""

    registry_version: int
    registry_sha256: str
    identity: Identity
    normalisation: str
    hits: list[QueryHit] = Field(description="The cards found, compatible first (at most --limit)")
    total_hits: int = Field(description="Cards found before --limit kept the first of them")


# --- match ---------------------------------------------------------------------------------------


class EvidenceFile(Model):
    path: str
    kind: Literal["ncu", "nsys", "torch", "sass", "ptxas", "res_usage"]
    subjects: int
    trace_shape: dict[str, bool]


class FactValue(Model):
    fact: str
    rows: str | None
    per: str | None
    other: str | None
    value: float
    op: Comparison
    threshold: float
    holds: bool
    threshold_source: SourceCitation | None
    text: str = Field(
        description="The comparison as a sentence for people: the fact in words, its value and unit, the "
        "comparison, the threshold and where it came from (a source, another fact, the presence test)"
    )


class CardSignal(Model):
    card: str
    title: str
    signals: list[FactValue]
    counter_signals: list[FactValue] = Field(description="Counter conditions evaluated (none held)")
    sources: list[SourceCitation]


class Subject(Model):
    evidence: str
    kind: Literal["kernel", "function", "device", "op"]
    name: str
    rows: int = Field(
        description="Engine rows folded into this subject (ncu: launches, mean taken; op: calls)"
    )
    cards: list[CardSignal]


class KnowledgeMatchData(Model):
    """``gpuopt knowledge match``: per kernel, function or device, the cards whose signals hold."""

    registry_version: int
    registry_sha256: str
    evidence: list[EvidenceFile]
    subjects: list[Subject]


# --- audit ---------------------------------------------------------------------------------------


class ComponentChange(Model):
    component: str
    a: str | None
    b: str | None


class VersionAuditData(Model):
    """``gpuopt audit versions A B``: is this a single-variable stack comparison?"""

    a: str
    b: str
    a_kind: Literal["doctor", "target"]
    b_kind: Literal["doctor", "target"]
    keys_compared: Literal["all", "common"] = Field(
        description="all: same kinds, every key; common: a doctor record and a Target, shared keys only"
    )
    single_variable: bool
    frozen_checked: list[str]
    frozen_differences: list[ComponentChange]
    stack_checked: list[str]
    stack_changes: list[ComponentChange]
    reasons: list[str]
    requirements: list[str] = Field(description="What a single-variable comparison still needs (by policy)")
