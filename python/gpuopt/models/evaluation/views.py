"""Data of the read-only views: ``show``, ``report`` and ``handoff``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import Count, Record, Sha256
from gpuopt.models.evaluation.status import InvocationStatus
from gpuopt.models.table import TableData


class InvalidPair(Record):
    """A pair left out of the statistics, and why."""

    pair_index: int = Field(description="The pair's index in the plan")
    case_id: str = Field(description="The test case the pair measured")
    reasons: list[str] = Field(description="Why it is invalid, each a sentence beginning with its code")


class CaseOutcome(Record):
    """What happened to one case of an invocation."""

    case_id: str = Field(description="The test case this outcome is about")
    correctness: Literal["passed", "failed", "not_checked"] = Field(
        description="failed: some call of the case failed a correctness rule or gate; not_checked: no call "
        "of it completed"
    )
    failures: list[str] = Field(description="Each failed correctness check: role, call, rule, observed value")
    pairs_valid: Count = Field(description="Valid pairs of the case (what the statistics used)")
    pairs_invalid: Count = Field(description="Pairs of the case left out (see invalid_pairs)")
    estimate_pct: float | None = Field(
        description="The primary metric's effect within the case (%; > 0: the candidate is better); null "
        "when not computed"
    )
    ci_low_pct: float | None = Field(description="Low end of its confidence interval (%)")
    ci_high_pct: float | None = Field(description="High end of its confidence interval (%)")


class ResultOutcome(Record):
    """Why an invocation's result came out as it did, in one place: the verdict, the reasons, each case."""

    invocation_id: str = Field(description="The invocation whose result this explains")
    operation: str = Field(description="baseline, noise, screen, target or final_audit")
    verdict: str = Field(description="The result's verdict")
    stop_reason: str = Field(description="The code the verdict was reached with (correctness_failed, ...)")
    why: list[str] = Field(
        description="Sentences saying why: the rule or statistic that decided the verdict, with its numbers"
    )
    cases: list[CaseOutcome] = Field(description="Each case of the plan, in plan order")
    invalid_pairs: list[InvalidPair] = Field(
        description="Every pair left out of the statistics, with its reasons"
    )


class ShowData(Record):
    """``gpuopt show``: one record, verified against its ledger hash, or one table of an invocation."""

    kind: str = Field(
        description="The record's ledger kind: target, experiment, invocation, result, selection, pointer "
        "or map"
    )
    id: str = Field(
        description="The record's id (tgt-, exp-, inv-, sel- or map- followed by hex; current for the "
        "Champion pointer)"
    )
    path: str = Field(description="The record file, relative to the root, as the ledger names it")
    sha256: Sha256 = Field(
        description="SHA-256 of the record file's bytes as the ledger records it (verified equals the file's)"
    )
    verified: bool = Field(description="The file's bytes hash to the ledger's sha256")
    status: InvocationStatus | None = Field(description="Derived status (invocations)")
    record: dict[str, Any] | None = Field(description="The record itself (without --pairs/--calls/...)")
    table: TableData | None = Field(description="The part asked for (--pairs, --samples, --calls, --events)")
    outcomes: list[ResultOutcome] = Field(
        default_factory=list,
        description="Why each result came out as it did: an invocation's own result, or every screen and "
        "target result of an Experiment (empty for other records and for --part)",
    )


class ReportData(Record):
    """``gpuopt report``: a view, never evidence."""

    format: Literal["md", "html", "json"] = Field(
        description="md (Markdown in text), json (the structure in report) or html (the page, written to out)"
    )
    scope: str = Field(description="The root, or the one record reported")
    out: str | None = Field(
        description="The file the report was written to (--out, or --html OUT); null when it is returned "
        "in text or report"
    )
    text: str | None = Field(description="The Markdown or HTML (when not written to --out)")
    report: dict[str, Any] | None = Field(description="The structured report (format json)")


class HandoffData(Record):
    """``gpuopt handoff``: where the draft went and what it holds."""

    path: str = Field(
        description="The Markdown draft written (default ROOT/handoff.draft.md); gpuopt never reads it back"
    )
    draft: bool = Field(
        description="Always true: the file is generated from records and marked a draft; its conclusion is "
        "the author's to write"
    )
    facts: int = Field(description="Facts written, each citing its record")
    placeholders: list[str] = Field(description="Sections left TO COMPLETE for the author")
