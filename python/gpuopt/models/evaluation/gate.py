"""The regression gate's records (``gpuopt gate``): saved baselines, their names, and the ``gate`` invocation
that measures the current code against a baseline or the Champion.

A **gate baseline** (``gates/baselines/gb-<64hex>.json``, create-once, content-addressed) holds what a
later check compares with: the within-call values of one variant's calls taken from evaluation results
(``samples``), and/or a set of profiler captures frozen into the store (``captures``), bound to the Target
and to the runtime facts they were measured under. A **name** (``gates/names/<name>.json``) points at one
baseline and is the one mutable gate file (atomic replace).

A **gate invocation** (operation ``gate``; its core and frozen request are ``GateCore``/``GateFrozen`` in
:mod:`gpuopt.models.evaluation.frozen`) is a supervised invocation like the evaluations: ``paired``
runs the baseline's variant and the current code interleaved (AB/BA) under the baseline's plan;
``unpaired`` runs the current code alone and compares its calls with the saved ones per case. Its result
carries the statistics and the gate's judgment (``judgment.outcome``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from gpuopt.models.evaluation.common import (
    Count,
    Epoch,
    Finite,
    InvocationId,
    Name,
    ObjectDigest,
    Record,
    RecordRef,
    ResultRef,
    Role,
    Sha256,
    Text,
)
from gpuopt.models.evaluation.experiment import Lifecycle
from gpuopt.models.evaluation.invocation import FrozenVariant
from gpuopt.models.evaluation.operations import PairedResult, Resolution
from gpuopt.models.evaluation.statistics import GuardrailOutcome, Statistic, Statistics
from gpuopt.models.profile import ProfileKind

GateBaselineId = Annotated[str, StringConstraints(pattern=r"^gb-[0-9a-f]{64}$")]
GateMode = Literal["paired", "unpaired"]
GateOutcome = Literal[
    "pass", "improvement", "regression", "inconclusive", "invalid", "correctness_failed", "identity_mismatch"
]
"""What a gate decided. ``pass``: a regression as large as the minimum effect is excluded; ``improvement``:
an improvement at least that large is shown; ``regression``: a regression at least that large is shown (or
a constraint, guardrail or per-key gate failed); ``inconclusive``: none of these; ``invalid``: the
measurement could not be judged (contamination beyond the retry budget, a failed or timed-out call);
``correctness_failed``: the current code failed the Target's correctness rules; ``identity_mismatch``: the
runtime differs from the baseline's (never judged)."""

# ---- saved baselines ---------------------------------------------------------------------------------------


class BaselinePlan(Record):
    """How the baseline's calls were measured: a check measures the current code the same way."""

    case_ids: Annotated[list[Name], Field(min_length=1)] = Field(
        description="The cases measured, in plan order"
    )
    pairs: Annotated[int, Field(ge=1)] = Field(
        description="Pairs per case a paired check runs by default (the source comparison's pairs, or "
        "the calls per case of a single-variant source)"
    )
    samples_per_call: Annotated[int, Field(ge=1)] = Field(description="Samples each call reported per metric")
    warmup_per_call: Count = Field(description="Unmeasured runs before the samples of each call")
    lifecycle: Lifecycle = Field(
        description="isolated (one subject per process) or same_process (both subjects of a pair in one call)"
    )
    shared_state: list[Name] = Field(
        description="State created once per same-process call (declared, not verified)"
    )
    rebuilt_state: list[Name] = Field(description="State rebuilt for each subject within a call")


class BaselineCall(Record):
    """One call of the baseline variant: its within-call value of each metric."""

    session: InvocationId = Field(description="The invocation the call ran in (a block when unpaired)")
    call_index: Count = Field(description="The call's index in its session's plan")
    case_id: Name = Field(description="The case the call measured")
    values: dict[Name, Finite] = Field(description="Within-call summary per metric (the Target's rule)")


class BaselineSamples(Record):
    """Calls of one variant taken from completed evaluation results (invalid calls left out)."""

    variant: FrozenVariant = Field(description="The variant the calls measured (its tree is in the store)")
    role: Role = Field(description="The role it had in its source results")
    plan: BaselinePlan = Field(
        description="How the calls were measured; a check measures the current code the same way"
    )
    sources: Annotated[list[ResultRef], Field(min_length=1)] = Field(
        description="The results the calls come from (records of the root the baseline was saved in)"
    )
    calls: Annotated[list[BaselineCall], Field(min_length=1)] = Field(
        description="Every valid call of the variant (completed, correct, same runtime identity, "
        "uncontaminated), with its within-call values"
    )


class BaselineCapture(Record):
    """One capture file frozen into the store as a one-file object."""

    name: Text = Field(description="What it was given as: a file name or a cap: reference")
    kind: ProfileKind = Field(description="The capture's profiler: nsys, torch or ncu")
    object: ObjectDigest = Field(description="The frozen one-file object")
    file: Text = Field(description="The file's name inside the object")
    sha256: Sha256 = Field(description="SHA-256 of the file's bytes")
    size_bytes: Count = Field(description="The file's size (bytes)")


class BaselineCaptures(Record):
    kind: ProfileKind = Field(description="The profiler of every capture: nsys, torch or ncu")
    files: Annotated[list[BaselineCapture], Field(min_length=1)] = Field(
        description="Each capture frozen as a one-file object, in the order given"
    )


class GateBaseline(Record):
    """``gates/baselines/gb-<64hex>.json``: id = ``gb-`` + SHA-256 of the canonical record without ``id``."""

    format: Literal["gpuopt.gate-baseline/v1"] = Field(
        description="Document format: always gpuopt.gate-baseline/v1"
    )
    id: GateBaselineId = Field(description="gb- and the SHA-256 of the canonical record without id")
    target: RecordRef = Field(description="The Target it was measured under")
    samples: BaselineSamples | None = Field(
        description="Within-call values of one variant's calls from evaluation results (saved with "
        "--from); null when the baseline holds only captures"
    )
    captures: BaselineCaptures | None = Field(
        description="Profiler captures frozen into the store (saved with --capture); null when the "
        "baseline holds only samples"
    )
    runtime: dict[str, str | None] = Field(
        description="Runtime facts when saved, by name (observed host, driver, GPUs, required tools; what "
        "the driver reported: GPU names, driver, CUDA runtime, framework versions; capture facts)"
    )

    @model_validator(mode="after")
    def _something(self) -> GateBaseline:
        if self.samples is None and self.captures is None:
            raise ValueError("a gate baseline holds samples, captures or both")
        return self


class GateName(Record):
    """``gates/names/<name>.json``: the baseline a name points at (replaced atomically)."""

    format: Literal["gpuopt.gate-name/v1"] = Field(description="Document format: always gpuopt.gate-name/v1")
    name: Name = Field(description="The baseline's name (gates/names/<name>.json)")
    baseline: RecordRef = Field(description="The gate baseline the name points at (id and file SHA-256)")
    saved_at_epoch: Epoch = Field(description="When the name was last pointed (epoch s)")
    previous: RecordRef | None = Field(description="The baseline the name pointed at before")


# ---- the gate invocation -----------------------------------------------------------------------------------


class GateSpec(Record):
    """What a gate invocation compares the current code (role ``candidate``) with."""

    against: Literal["baseline", "champion"] = Field(
        description="baseline: a saved gate baseline; champion: the root's current Champion"
    )
    baseline: RecordRef | None = Field(description="The gate baseline (against baseline)")
    selection: RecordRef | None = Field(
        description="Against the Champion: its selection (null when the Champion is the original)"
    )
    mode: GateMode = Field(
        description="paired: the baseline's variant and the current code interleaved AB/BA; unpaired: the "
        "current code alone, compared per case with the saved calls"
    )


class GateReason(Record):
    """Why the judgment is what it is: one fact per line."""

    code: str = Field(
        description="primary_regressed, primary_improved, non_inferior, ci_reaches_minimum, too_few_pairs, "
        "constraint_failed, guardrail_failed, dependent_samples_suspected, blocks_too_few, ..."
    )
    outcome: GateOutcome | None = Field(
        description="The outcome this fact leads to on its own (null: a fact stated, deciding nothing)"
    )
    metric: Name | None = Field(
        default=None, description="The metric the fact is about; null when it is about no one metric"
    )
    case_id: Name | None = Field(
        default=None,
        description="The case the fact is about (unpaired checks, per-case facts); null otherwise",
    )
    message: Text = Field(description="The fact in words, with its numbers")


class GateJudgment(Record):
    """The gate's rule applied to the statistics (see ``references/gate.md``)."""

    outcome: GateOutcome = Field(
        description="pass, improvement, regression, inconclusive, invalid, correctness_failed or "
        "identity_mismatch (exit 0, 0, 10, 12, 13, 14, 11; see references/gate.md)"
    )
    minimum_effect_pct: float = Field(description="The Target's minimum effect m (%)")
    regression_bound_pct: float = Field(
        description="The effect (%, > 0 = candidate better) of a regression as large as m: "
        "100·(1/(1 + m/100) - 1) on the log-ratio scale, -m in parity mode"
    )
    improvement_bound_pct: float = Field(description="The effect of an improvement as large as m (%)")
    reasons: list[GateReason] = Field(description="The facts the outcome follows from, one per line")


class UnpairedComparison(Record):
    """One metric of one case compared unpaired: saved calls against this invocation's calls."""

    case_id: Name = Field(description="The case compared")
    role: Literal["primary", "constraint"] = Field(
        description="primary (the Target's primary metric) or constraint (a relative constraint's metric)"
    )
    threshold_pct: float = Field(description="m for the primary, the constraint's max_regression_pct")
    statistic: Statistic = Field(
        description="The engine's unpaired comparison of the saved calls with this invocation's calls"
    )


class UnpairedStatistics(Record):
    comparisons: list[UnpairedComparison] = Field(
        description="One comparison per case and judged metric (primary, constraints)"
    )
    guardrails: list[GuardrailOutcome] = Field(
        description="The Target's absolute guardrails on the current code's calls"
    )
    calls_baseline: dict[Name, int] = Field(description="Saved calls per case")
    calls_current: dict[Name, int] = Field(description="Valid calls of this invocation per case")


class GateResult(PairedResult):
    operation: Literal["gate"] = Field(description="The operation: always gate")
    gate: GateSpec = Field(description="What the current code was compared with and how")
    statistics: Statistics | None = Field(description="Paired: the comparison over the valid pairs")
    unpaired: UnpairedStatistics | None = Field(description="Unpaired: per-case comparisons")
    resolution: Resolution = Field(
        description="Whether the plan's pairs can resolve the Target's minimum effect, per the newest "
        "matching noise record"
    )
    judgment: GateJudgment = Field(description="The gate's outcome and the facts it follows from")
