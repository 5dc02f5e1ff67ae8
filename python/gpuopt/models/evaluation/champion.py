"""The Champion pointer, Selections and the ``gpuopt champion`` verbs (spec §2.6, §3.7)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuopt.models.evaluation.common import Epoch, Record, RecordRef, ResultRef, Sha256
from gpuopt.models.evaluation.target import Variant

SelectionId = Annotated[str, StringConstraints(pattern=r"^sel-[0-9a-f]{32}$")]
Decision = Literal["select_candidate", "restore_original"]


class ChampionPointer(Record):
    """``champion/current.json``: the only mutable record. Its absence means "original, nothing selected"."""

    format: Literal["gpuopt.champion-pointer/v1"] = Field(
        description="Document format: always gpuopt.champion-pointer/v1"
    )
    target: RecordRef = Field(description="The root's Target")
    selection: RecordRef = Field(
        description="The selection that names the current Champion (replaced by compare-and-swap)"
    )


class Selection(Record):
    """``champion/selections/sel-<32hex>.json`` (create-once); history is the ``previous`` chain."""

    format: Literal["gpuopt.selection/v1"] = Field(description="Document format: always gpuopt.selection/v1")
    id: SelectionId = Field(
        description="sel- and the first 32 hex of the SHA-256 of the canonical record without id: an "
        "identical select reproduces it"
    )
    target: RecordRef = Field(description="The root's Target")
    decision: Decision = Field(
        description="select_candidate (a passed target result's candidate becomes Champion) or "
        "restore_original (a final audit supported restoring the original)"
    )
    variant: Variant = Field(
        description="The variant that became Champion (the original for restore_original)"
    )
    result: ResultRef = Field(
        description="The result that justifies the decision (a target or final-audit result)"
    )
    experiment: RecordRef | None = Field(
        description="The Experiment of the selected candidate; null for restore_original"
    )
    previous: RecordRef | None = Field(
        description="The selection current before this one; null when the Champion was the original: "
        "history follows this chain"
    )


class ChampionState(Record):
    """``gpuopt champion show``: the current Champion; creates nothing."""

    root: str = Field(description="The artifact root")
    target: RecordRef = Field(description="The root's Target")
    selection: RecordRef | None = Field(
        description="The current selection; null when nothing was selected (the Champion is the original)"
    )
    pointer_sha256: Sha256 | None = Field(
        description="SHA-256 of champion/current.json, to pass as the expected state of the next select; "
        "null when absent"
    )
    variant: Variant = Field(description="The Champion's variant")
    decision: Literal["original", "select_candidate", "restore_original"] = Field(
        description="original (nothing selected yet), select_candidate or restore_original"
    )
    experiment: RecordRef | None = Field(
        description="The Experiment of the selected candidate; null for the original"
    )


class SelectRequest(Record):
    """``gpuopt champion select`` (``gpuopt.request.champion-select/v1``)."""

    root: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The artifact root (path relative to the current directory)"
    )
    target: RecordRef | None = Field(default=None, description="If given, must be the root's Target")
    result: ResultRef = Field(description="A target result that passed against the current Champion")
    expected_selection: RecordRef | Literal["original"] = Field(
        description="The Champion the caller believes is current (compare-and-swap)"
    )


class RestoreRequest(Record):
    """``gpuopt champion restore-original`` (``gpuopt.request.champion-restore/v1``)."""

    root: Annotated[str, Field(min_length=1, max_length=4096)] = Field(
        description="The artifact root (path relative to the current directory)"
    )
    target: RecordRef | None = Field(default=None, description="If given, must be the root's Target")
    result: ResultRef = Field(description="A final-audit result of the current Champion with restore support")
    expected_selection: RecordRef | Literal["original"] = Field(
        description="The Champion the caller believes is current (compare-and-swap): its selection ref, or "
        "original"
    )


class SelectOutcome(Record):
    """A Selection made (or found already made by an identical earlier request)."""

    created: bool = Field(
        description="True when the selection was made now; false when an identical earlier request had "
        "made it (nothing written)"
    )
    selection: RecordRef = Field(description="The selection (id and file SHA-256)")
    decision: Decision = Field(description="select_candidate or restore_original")
    variant: Variant = Field(description="The variant that is now Champion")
    previous: RecordRef | None = Field(
        description="The selection that was current before; null when it was the original"
    )
    pointer_sha256: Sha256 = Field(description="SHA-256 of champion/current.json now")


class HistoryEntry(Record):
    selection: RecordRef = Field(
        description="The selection record (id and file SHA-256) this entry describes"
    )
    decision: Decision = Field(description="select_candidate or restore_original")
    variant: Variant = Field(description="The variant it made Champion")
    result: ResultRef = Field(description="The result that justified it")
    verdict: str | None = Field(description="That result's verdict; null when the result could not be read")
    estimate_pct: float | None = Field(
        description="That result's primary effect estimate (%, > 0 = better); null when it has no statistics"
    )
    ci_low_pct: float | None = Field(
        description="Low end of the primary's confidence interval (%); null when it has no statistics"
    )
    ci_high_pct: float | None = Field(
        description="High end of the primary's confidence interval (%); null when it has no statistics"
    )
    experiment: RecordRef | None = Field(
        description="The selected candidate's Experiment; null for restore_original"
    )
    mechanism: str | None = Field(description="The result's mechanism slug; null when it has none")
    at_epoch: Epoch | None = Field(description="Publication time of the Selection (from the ledger)")
    orphan: bool = Field(description="Never pointed to (a crash before the compare-and-swap)")


class ChampionHistory(Record):
    """``gpuopt champion history``: from the pointer back along ``previous``; ``--all`` adds orphans."""

    root: str = Field(description="The artifact root")
    target: RecordRef = Field(description="The root's Target")
    current: RecordRef | None = Field(
        description="The current selection; null when the Champion is the original"
    )
    entries: list[HistoryEntry] = Field(
        description="From the current selection back along previous (with --all, orphans too)"
    )
