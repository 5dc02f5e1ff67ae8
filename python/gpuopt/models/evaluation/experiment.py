"""The Experiment (``experiments/exp-<64hex>.json``): one candidate frozen against one reference with its
comparison contract, screen design, opportunity claim and premises (spec §2.4)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuopt.models.evaluation.common import (
    Finite,
    Name,
    ObjectDigest,
    Record,
    RecordRef,
    ResultRef,
    Sha256,
    Text,
    Unit,
    VariantKind,
)
from gpuopt.models.evaluation.store import ScanLimits
from gpuopt.models.evaluation.target import AccuracyRule, Variant

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+([._-][a-z0-9]+)*$", max_length=128)]
"""A mechanism name that groups attempts in ``ls``, ``report`` and ``handoff``."""
SafePath = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
Lifecycle = Literal["isolated", "same_process"]
ClaimLayer = Literal["kernel", "workload", "serving"]
RejectionScope = Literal["implementation", "integration", "proxy", "mechanism"]


class Contract(Record):
    """How a comparison acquires its subjects and which extra candidate-only gates it applies."""

    lifecycle: Lifecycle
    shared_state: list[Name] = Field(
        default_factory=list, description="State created once per same-process call (declared, not verified)"
    )
    rebuilt_state: list[Name] = Field(default_factory=list, description="State rebuilt per subject")
    gates: list[AccuracyRule] = Field(
        default_factory=list, description="Extra correctness rules applied to the candidate only"
    )
    diagnostics: list[Name] = Field(
        default_factory=list, description="Correctness metrics copied into the candidate's receipts"
    )


class ScreenDesign(Record):
    """The Experiment's short comparison: it can reject, it never passes."""

    kind: Literal["proxy", "conservative_bound"]
    minimum_pairs: Annotated[int, Field(ge=2)]
    reject_if: list[Literal["primary_regressed", "upper_bound_below_minimum"]]
    claim: Text


class Boundary(Record):
    region: Text
    entry: Text
    exit: Text
    phase: Text
    shapes: list[Text]


class ExecutionForm(Record):
    """The region as actually executed."""

    form: Text
    lowering: Text
    dispatch: Text
    fallback: Text
    overlap: Text


class GroupSelect(Record):
    category: Text
    name: Text


class MapSelect(Record):
    group: GroupSelect
    quantity: Literal["share_of_window"]


class InputSource(Record):
    """Where an opportunity input comes from: an execution map, an invocation result or an object of this
    root (``ref``), or an external statement (``text``)."""

    kind: Literal["execution_map", "invocation", "object", "external"]
    ref: dict[str, str] | None = None
    select: MapSelect | None = None
    text: Text | None = None


class OpportunityInput(Record):
    name: Name
    value: Finite
    unit: Unit
    input_class: Literal["same_boundary", "conservative_bound", "diagnostic"] = Field(alias="class")
    source: InputSource


class CoverageRef(Record):
    input: Name


class SavingRef(Record):
    input: Name
    form: Literal["saving", "gain", "speedup"]


class EffectRange(Record):
    low: Finite
    high: Finite


class Declared(Record):
    ceiling_pct: Finite
    required_saving: Finite


class OpportunityClaim(Record):
    """A structured opportunity claim; gpuopt checks its arithmetic and explicit contradictions only."""

    quantified: bool
    reason: Text | None = Field(default=None, description="Required when quantified is false")
    boundary: Boundary
    execution_form: ExecutionForm
    inputs: list[OpportunityInput] = Field(default_factory=list)
    coverage: CoverageRef | None = Field(default=None, description="f: unit fraction (0,1] or percent")
    local_saving: SavingRef | None = None
    expected_effect_pct: EffectRange | None = None
    declared: Declared | None = None


class OpportunityComputed(Record):
    """The arithmetic gpuopt computed: f, r, the Amdahl ceiling on the primary's effect and the saving the
    region would need to reach the minimum effect."""

    f: float | None
    r: float | None
    ceiling_pct: float | None
    required_saving: float | None
    ceiling_vs_minimum: Literal["above", "below", "not_applicable"]


class OpportunityRecord(OpportunityClaim):
    computed: OpportunityComputed


class Premise(Record):
    statement: Text
    component: Text
    version: Text
    status: Literal["cited", "inferred", "measured_here", "assumed"]
    source: Text | None = Field(
        default=None,
        description="cited: a document, URL or commit; measured_here: a record id of this root",
    )
    decision_effect: Text


class CandidateSpec(Record):
    kind: VariantKind = "source"
    path: Annotated[str, Field(min_length=1, max_length=4096)]


class ExperimentRequest(Record):
    """``gpuopt experiment`` (``gpuopt.request.experiment/v1``): a candidate and how it will be compared."""

    root: Annotated[str, Field(min_length=1, max_length=4096)]
    target: RecordRef | None = Field(default=None, description="If given, must be the root's Target")
    baseline: ResultRef
    source_base: Literal["original", "champion"]
    source_base_digest: Sha256 | None = Field(
        default=None, description="If given, must equal the resolved source base"
    )
    candidate: CandidateSpec
    change_scope: Annotated[list[SafePath], Field(min_length=1)]
    claim_layer: ClaimLayer
    hypothesis: Annotated[str, Field(min_length=1, max_length=4096)]
    mechanism: Slug
    rejection_scope: RejectionScope
    supersedes: RecordRef | None = None
    contract: Contract
    screen: ScreenDesign
    opportunity_claim: OpportunityClaim
    premises: list[Premise] = Field(default_factory=list)
    scan_limits: ScanLimits = Field(default_factory=ScanLimits)


class ReferenceAtCreation(Record):
    """The Champion when the Experiment was created."""

    variant: Variant
    selection: RecordRef | None
    pointer_sha256: Sha256 | None


class SourceBase(Record):
    of: Literal["original", "champion"]
    digest: ObjectDigest


class Experiment(Record):
    """``experiments/exp-<64hex>.json`` (create-once; id = hash of everything but ``id``)."""

    format: Literal["gpuopt.experiment/v1"]
    id: Annotated[str, StringConstraints(pattern=r"^exp-[0-9a-f]{64}$")]
    target: RecordRef
    baseline: ResultRef
    reference: ReferenceAtCreation
    source_base: SourceBase
    candidate: Variant
    changed_paths: list[str]
    change_scope: list[str]
    claim_layer: ClaimLayer
    hypothesis: Text
    mechanism: Slug
    rejection_scope: RejectionScope
    supersedes: RecordRef | None
    contract: Contract
    screen: ScreenDesign
    opportunity_claim: OpportunityRecord
    premises: list[Premise]


class ExperimentOutcome(Record):
    """What ``gpuopt experiment`` returns."""

    dry_run: bool = Field(
        default=False, description="True for --dry-run: nothing was written, created says what would be"
    )
    created: bool
    experiment: RecordRef
    candidate: Variant
    changed_paths: list[str]
    reference: ReferenceAtCreation
    mechanism: Slug
    opportunity: OpportunityComputed
    blobs_new: Annotated[int, Field(ge=0)]
