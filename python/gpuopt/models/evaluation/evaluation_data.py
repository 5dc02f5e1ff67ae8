"""What the evaluation commands print: the dry-run plan (estimates, call counts) and the ``data`` of
``baseline``, ``noise``, ``screen``, ``target`` and ``final-audit`` (their requests and results are in
:mod:`gpuopt.models.evaluation.operations`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import (
    Count,
    InvocationId,
    NonNegative,
    Record,
    ResultRef,
    Role,
    Sha256,
    Text,
)
from gpuopt.models.evaluation.invocation import EvidenceStep
from gpuopt.models.evaluation.operations import (
    BaselineResult,
    FinalAuditResult,
    NoiseResult,
    ScreenResult,
    TargetResult,
)
from gpuopt.models.evaluation.status import SubmitOutcome
from gpuopt.models.evaluation.views import ResultOutcome

# ---- dry run and command data ------------------------------------------------------------------------------


class Estimate(Record):
    """Expected duration, per step from earlier calls of this Target (spec §3.1)."""

    p50_s: NonNegative | None = Field(
        description="Sum over steps of the median of comparable earlier call times (s); null when no step "
        "has a basis"
    )
    p90_s: NonNegative | None = Field(
        description="Sum over steps of the 90th percentiles (s); null when no step has a basis"
    )
    gpu_seconds_p50: NonNegative | None = Field(
        description="p50_s times the number of Target GPUs (GPU-s); null when no step has a basis"
    )
    basis: list[str] = Field(description="The records the per-step times came from")
    scaled: bool = Field(description="Some step times were scaled linearly by samples + warmup (or subjects)")
    unknown_steps: list[int] = Field(description="Call indices without any basis")


class CallCounts(Record):
    total: Count = Field(description="Calls in the evidence plan")
    by_role: dict[Role, int] = Field(
        description="Subject runs per role over those calls (a same-process call counts both roles)"
    )
    restore_checks: Count = Field(
        description="Restore-check calls that would run if the Champion failed correctness (final audit; 0 "
        "otherwise)"
    )


class DryRun(Record):
    """What an evaluation would run; nothing is written."""

    request: dict[str, Any] = Field(description="The frozen request as it would be written")
    request_digest: Sha256 = Field(description="SHA-256 identifying the frozen request")
    invocation_id: InvocationId = Field(
        description="The invocation that would run, or that would be reused or attached to"
    )
    dedupe: Literal["run", "reuse", "attach", "retry_required"] = Field(
        description="run (a new attempt), reuse (an identical request's final result), attach (an "
        "identical request is running) or retry_required (the last attempt failed: set "
        "retry_of)"
    )
    evidence_plan: list[EvidenceStep] = Field(
        description="Every call that would run, in order (the executed plan is the same list)"
    )
    restore_checks: list[EvidenceStep] = Field(
        description="Restore-check calls frozen for a final audit; empty otherwise"
    )
    calls: CallCounts = Field(description="Call counts of the plan")
    estimate: Estimate = Field(description="Expected duration from earlier calls of this Target")


class EvaluationData(Record):
    """What an evaluation command returns: the dry-run plan, or the submission and (with --wait and
    completion) its result."""

    operation: str = Field(description="The verb: baseline, noise, screen, target or final_audit")
    dry_run: DryRun | None = Field(
        description="With --dry-run: what would run (nothing written); null otherwise"
    )
    submission: SubmitOutcome | None = Field(
        description="The submission: invocation id, dedupe flags and status; null with --dry-run"
    )
    estimate: Estimate | None = Field(description="Expected duration from earlier calls of this Target")
    result_ref: ResultRef | None = Field(
        description="The result once the invocation completed (with --wait, or a deduplicated request); "
        "null before"
    )
    outcome: ResultOutcome | None = Field(
        default=None,
        description="Why the result came out as it did: reasons, each case's outcome, every invalid pair "
        "(null until there is a result)",
    )
    summary: list[Text] = Field(description="One line per fact shown to a person")


class BaselineData(EvaluationData):
    result: BaselineResult | None = Field(
        description="The baseline result once completed; null before (or with --dry-run)"
    )


class NoiseEvaluationData(EvaluationData):
    result: NoiseResult | None = Field(
        description="The noise result once completed; null before (or with --dry-run)"
    )


class ScreenData(EvaluationData):
    result: ScreenResult | None = Field(
        description="The screen result once completed; null before (or with --dry-run)"
    )


class TargetData(EvaluationData):
    result: TargetResult | None = Field(
        description="The target result once completed; null before (or with --dry-run)"
    )


class FinalAuditData(EvaluationData):
    result: FinalAuditResult | None = Field(
        description="The final-audit result once completed; null before (or with --dry-run)"
    )
