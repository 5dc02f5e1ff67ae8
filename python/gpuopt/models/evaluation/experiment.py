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

    lifecycle: Lifecycle = Field(
        description="isolated: each subject in a fresh process per call; same_process: both subjects in "
        "one call (needs shared_state and the driver's same_process capability)"
    )
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

    kind: Literal["proxy", "conservative_bound"] = Field(
        description="proxy (tests only the declared local mechanism) or conservative_bound (a bound the "
        "full effect cannot exceed)"
    )
    minimum_pairs: Annotated[int, Field(ge=2)] = Field(
        description="Valid pairs below which the screen never rejects on statistics"
    )
    reject_if: list[Literal["primary_regressed", "upper_bound_below_minimum"]] = Field(
        description="The statistical rejections the screen applies: primary_regressed, "
        "upper_bound_below_minimum (the CI high below the minimum effect; conservative_bound "
        "only)"
    )
    claim: Text = Field(description="What the screen measures and why it bears on the candidate, in words")


class Boundary(Record):
    region: Text = Field(description="The code region the change affects")
    entry: Text = Field(description="Where the region begins (a function, op or marker)")
    exit: Text = Field(description="Where the region ends")
    phase: Text = Field(
        description="When in the workload the region runs (e.g. steady state after the warmups, decode)"
    )
    shapes: list[Text] = Field(description="The input shapes the claim covers")


class ExecutionForm(Record):
    """The region as actually executed."""

    form: Text = Field(
        description="How the region executes today (e.g. a per-row Python loop, one fused kernel)"
    )
    lowering: Text = Field(
        description="What the region lowers to (numpy ufuncs, torch eager CUDA kernels, a Triton kernel, ...)"
    )
    dispatch: Text = Field(description="What dispatches it (the Python interpreter, a CUDA graph, ...)")
    fallback: Text = Field(description="Its fallback path, or none")
    overlap: Text = Field(description="What it overlaps with (other streams, host work), or none")


class GroupSelect(Record):
    category: Text = Field(description="The map group's category")
    name: Text = Field(description="The map group's name")


class MapSelect(Record):
    group: GroupSelect = Field(
        description="The group of the execution map (grouped by category,name) whose quantity is cited"
    )
    quantity: Literal["share_of_window"] = Field(
        description="The quantity cited: share_of_window (the group's union time / the window)"
    )


class InputSource(Record):
    """Where an opportunity input comes from: an execution map, an invocation result or an object of this
    root (``ref``), or an external statement (``text``)."""

    kind: Literal["execution_map", "invocation", "object", "external"] = Field(
        description="execution_map (a map record of this root), invocation (a result of this root), object "
        "(a frozen tree of this root) or external (a statement in text)"
    )
    ref: dict[str, str] | None = Field(
        default=None,
        description="The cited record: {id, sha256} of a map, {invocation_id, sha256} of a result, "
        "{digest} of an object; null for external",
    )
    select: MapSelect | None = Field(
        default=None,
        description="For an execution_map source: the group and quantity whose value the input states; "
        "null otherwise",
    )
    text: Text | None = Field(
        default=None,
        description="For an external source: where the value comes from, in words; null otherwise",
    )


class OpportunityInput(Record):
    name: Name = Field(description="The input's name, referred to by coverage and local_saving")
    value: Finite = Field(description="The stated value, in unit")
    unit: Unit = Field(
        description="The value's unit: fraction or percent (coverage, saving, gain), x or ratio (speedup), "
        "or another unit for a diagnostic input"
    )
    input_class: Literal["same_boundary", "conservative_bound", "diagnostic"] = Field(
        alias="class",
        description="same_boundary (measured at the claim's boundary), conservative_bound or diagnostic "
        "(context only: may not feed f or r)",
    )
    source: InputSource = Field(
        description="Where the value comes from; a value differing from its source is "
        "opportunity_source_mismatch"
    )


class CoverageRef(Record):
    input: Name = Field(
        description="The input giving f, the share of the primary metric the region covers (fraction (0, "
        "1] or percent)"
    )


class SavingRef(Record):
    input: Name = Field(description="The input giving the region's local improvement")
    form: Literal["saving", "gain", "speedup"] = Field(
        description="How that input states it: saving r in [0, 1), gain g >= 0 (r = g/(1+g)) or speedup k "
        ">= 1 (r = (k-1)/k)"
    )


class EffectRange(Record):
    low: Finite = Field(description="Low end of the expected effect on the primary (%, > 0 = better)")
    high: Finite = Field(
        description="High end of the expected effect (%); above the Amdahl ceiling is "
        "opportunity_contradiction"
    )


class Declared(Record):
    ceiling_pct: Finite = Field(
        description="The ceiling the author computed (%); must match gpuopt's to 1e-6 relative"
    )
    required_saving: Finite = Field(
        description="The local saving the author computed as needed for the minimum effect; must match "
        "gpuopt's to 1e-6 relative"
    )


class OpportunityClaim(Record):
    """A structured opportunity claim; gpuopt checks its arithmetic and explicit contradictions only."""

    quantified: bool = Field(
        description="True when the claim states coverage and saving (checked arithmetic); false needs reason"
    )
    reason: Text | None = Field(default=None, description="Required when quantified is false")
    boundary: Boundary = Field(description="Where the affected region begins and ends, its phase and shapes")
    execution_form: ExecutionForm = Field(description="The region as actually executed")
    inputs: list[OpportunityInput] = Field(
        default_factory=list, description="The numbers the claim uses, each with its unit, class and source"
    )
    coverage: CoverageRef | None = Field(default=None, description="f: unit fraction (0,1] or percent")
    local_saving: SavingRef | None = Field(
        default=None,
        description="Which input is the region's local improvement, and in which form; null when not "
        "quantified",
    )
    expected_effect_pct: EffectRange | None = Field(
        default=None, description="The effect on the primary the author expects (%); null when not stated"
    )
    declared: Declared | None = Field(
        default=None,
        description="The author's own ceiling and required saving, checked against gpuopt's; null when not "
        "stated",
    )


class OpportunityComputed(Record):
    """The arithmetic gpuopt computed: f, r, the Amdahl ceiling on the primary's effect and the saving the
    region would need to reach the minimum effect."""

    f: float | None = Field(
        description="Coverage: the share of the primary the region covers (fraction); null when not "
        "quantified"
    )
    r: float | None = Field(
        description="Local saving as a fraction of the region's time removed, from saving, gain or "
        "speedup; null when not quantified"
    )
    ceiling_pct: float | None = Field(
        description="The Amdahl ceiling on the primary's effect: 100 x (1/(1 - f r) - 1) (%); null when "
        "not quantified"
    )
    required_saving: float | None = Field(
        description="The saving r the region would need for the Target's minimum effect: m'/((1+m') f) "
        "with m' = m/100 (>= 1: unreachable); null when not quantified"
    )
    ceiling_vs_minimum: Literal["above", "below", "not_applicable"] = Field(
        description="above or below the Target's minimum effect; not_applicable when not quantified"
    )


class OpportunityRecord(OpportunityClaim):
    computed: OpportunityComputed = Field(description="The arithmetic gpuopt computed from the claim")


class Premise(Record):
    statement: Text = Field(description="The fact assumed, in one sentence")
    component: Text = Field(description="The component it is about (library, driver, hardware, framework)")
    version: Text = Field(description="The component's version the statement holds for")
    status: Literal["cited", "inferred", "measured_here", "assumed"] = Field(
        description="cited (from a document), inferred, measured_here (a record of this root) or assumed"
    )
    source: Text | None = Field(
        default=None,
        description="cited: a document, URL or commit; measured_here: a record id of this root",
    )
    decision_effect: Text = Field(
        description="What the Experiment's design would change if the premise were false"
    )


class CandidateSpec(Record):
    kind: VariantKind = Field(
        default="source",
        description="source (a tree the driver builds or imports) or artifact (a built product); must "
        "equal the original's kind",
    )
    path: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The candidate's file or folder, relative to the current directory; frozen with the "
        "Target's source rules"
    )


class ExperimentRequest(Record):
    """``gpuopt experiment`` (``gpuopt.request.experiment/v1``): a candidate and how it will be compared."""

    root: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The artifact root (path relative to the current directory)"
    )
    target: RecordRef | None = Field(default=None, description="If given, must be the root's Target")
    baseline: ResultRef = Field(
        description="The passed baseline of this Target (succeeded/valid/passed, cleanup confirmed) the "
        "Experiment builds on"
    )
    source_base: Literal["original", "champion"] = Field(
        description="The tree the candidate derives from: original, or champion (the current Champion); "
        "changed paths are computed against it"
    )
    source_base_digest: Sha256 | None = Field(
        default=None, description="If given, must equal the resolved source base"
    )
    candidate: CandidateSpec = Field(description="The candidate's kind and path")
    change_scope: Annotated[list[SafePath], Field(min_length=1)] = Field(
        description="Relative paths the change may touch: every changed path must equal or lie under one "
        "(change_scope_exceeded)"
    )
    claim_layer: ClaimLayer = Field(
        description="The layer the claim is about: kernel, workload or serving; at most the Target's layer"
    )
    hypothesis: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="One falsifiable statement of what the candidate changes and why it should be better"
    )
    mechanism: Slug = Field(
        description="A slug naming the optimization mechanism (lowercase, digits, . _ -): groups attempts "
        "in ls, report and handoff"
    )
    rejection_scope: RejectionScope = Field(
        description="What a rejection of this candidate closes: implementation, integration, proxy or the "
        "whole mechanism"
    )
    supersedes: RecordRef | None = Field(
        default=None, description="The earlier Experiment this attempt replaces; null when none"
    )
    contract: Contract = Field(
        description="How the comparison acquires its subjects and which extra candidate-only gates it applies"
    )
    screen: ScreenDesign = Field(
        description="The short comparison run before the formal target: it can reject, never pass"
    )
    opportunity_claim: OpportunityClaim = Field(
        description="The structured opportunity claim; gpuopt checks its arithmetic and explicit "
        "contradictions only"
    )
    premises: list[Premise] = Field(
        default_factory=list, description="The facts the hypothesis rests on, each with its status and source"
    )
    scan_limits: ScanLimits = Field(
        default_factory=ScanLimits, description="Limits of the candidate's freeze (files, bytes, time)"
    )


class ReferenceAtCreation(Record):
    """The Champion when the Experiment was created."""

    variant: Variant = Field(
        description="The Champion's variant (role reference) the candidate is compared with"
    )
    selection: RecordRef | None = Field(
        description="The selection that made it Champion; null when the Champion is the original"
    )
    pointer_sha256: Sha256 | None = Field(
        description="SHA-256 of champion/current.json at creation; null when absent (the original)"
    )


class SourceBase(Record):
    of: Literal["original", "champion"] = Field(
        description="original or champion: which variant the candidate derives from"
    )
    digest: ObjectDigest = Field(description="That variant's frozen tree")


class Experiment(Record):
    """``experiments/exp-<64hex>.json`` (create-once; id = hash of everything but ``id``)."""

    format: Literal["gpuopt.experiment/v1"] = Field(
        description="Document format: always gpuopt.experiment/v1"
    )
    id: Annotated[str, StringConstraints(pattern=r"^exp-[0-9a-f]{64}$")] = Field(
        description="exp- and the SHA-256 of the canonical record without id: creating the same Experiment "
        "twice returns the existing one"
    )
    target: RecordRef = Field(description="The root's Target")
    baseline: ResultRef = Field(
        description="The passed baseline of this Target (succeeded/valid/passed, cleanup confirmed) the "
        "Experiment builds on"
    )
    reference: ReferenceAtCreation = Field(
        description="The Champion when the Experiment was created; once it moves, the Experiment is stale "
        "for screen and target"
    )
    source_base: SourceBase = Field(description="The tree the candidate derives from")
    candidate: Variant = Field(description="The candidate frozen from the request's path (role candidate)")
    changed_paths: list[str] = Field(
        description="Sorted paths whose entry (kind, mode, size, SHA-256) differs between source base and "
        "candidate: added, removed or modified"
    )
    change_scope: list[str] = Field(description="The request's change scope, sorted and deduplicated")
    claim_layer: ClaimLayer = Field(
        description="The layer the claim is about: kernel, workload or serving; at most the Target's layer"
    )
    hypothesis: Text = Field(
        description="One falsifiable statement of what the candidate changes and why it should be better"
    )
    mechanism: Slug = Field(
        description="A slug naming the optimization mechanism (lowercase, digits, . _ -): groups attempts "
        "in ls, report and handoff"
    )
    rejection_scope: RejectionScope = Field(
        description="What a rejection of this candidate closes: implementation, integration, proxy or the "
        "whole mechanism"
    )
    supersedes: RecordRef | None = Field(
        description="The earlier Experiment this attempt replaces; null when none"
    )
    contract: Contract = Field(
        description="How the comparison acquires its subjects and which extra candidate-only gates it applies"
    )
    screen: ScreenDesign = Field(
        description="The short comparison run before the formal target: it can reject, never pass"
    )
    opportunity_claim: OpportunityRecord = Field(
        description="The opportunity claim with the arithmetic gpuopt computed"
    )
    premises: list[Premise] = Field(
        description="The facts the hypothesis rests on, each with its status and source"
    )


class ExperimentOutcome(Record):
    """What ``gpuopt experiment`` returns."""

    dry_run: bool = Field(
        default=False, description="True for --dry-run: nothing was written, created says what would be"
    )
    created: bool = Field(
        description="True when the record was written now; false when an identical Experiment existed "
        "(with --dry-run: whether a run would write it)"
    )
    experiment: RecordRef = Field(
        description="The Experiment (id and file SHA-256) to cite in screen and target requests"
    )
    candidate: Variant = Field(description="The frozen candidate")
    changed_paths: list[str] = Field(description="Paths changed between source base and candidate")
    reference: ReferenceAtCreation = Field(description="The Champion the Experiment is bound to")
    mechanism: Slug = Field(description="The Experiment's mechanism slug")
    opportunity: OpportunityComputed = Field(description="The opportunity arithmetic gpuopt computed")
    blobs_new: Annotated[int, Field(ge=0)] = Field(
        description="Blobs the candidate's freeze added to the store (0 with --dry-run)"
    )
