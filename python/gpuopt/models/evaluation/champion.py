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

    format: Literal["gpuopt.champion-pointer/v1"]
    target: RecordRef
    selection: RecordRef


class Selection(Record):
    """``champion/selections/sel-<32hex>.json`` (create-once); history is the ``previous`` chain."""

    format: Literal["gpuopt.selection/v1"]
    id: SelectionId
    target: RecordRef
    decision: Decision
    variant: Variant
    result: ResultRef
    experiment: RecordRef | None
    previous: RecordRef | None


class ChampionState(Record):
    """``gpuopt champion show``: the current Champion; creates nothing."""

    root: str
    target: RecordRef
    selection: RecordRef | None
    pointer_sha256: Sha256 | None
    variant: Variant
    decision: Literal["original", "select_candidate", "restore_original"]
    experiment: RecordRef | None


class SelectRequest(Record):
    """``gpuopt champion select`` (``gpuopt.request.champion-select/v1``)."""

    root: Annotated[str, Field(min_length=1, max_length=4096)]
    target: RecordRef | None = Field(default=None, description="If given, must be the root's Target")
    result: ResultRef = Field(description="A target result that passed against the current Champion")
    expected_selection: RecordRef | Literal["original"] = Field(
        description="The Champion the caller believes is current (compare-and-swap)"
    )


class RestoreRequest(Record):
    """``gpuopt champion restore-original`` (``gpuopt.request.champion-restore/v1``)."""

    root: Annotated[str, Field(min_length=1, max_length=4096)]
    target: RecordRef | None = None
    result: ResultRef = Field(description="A final-audit result of the current Champion with restore support")
    expected_selection: RecordRef | Literal["original"]


class SelectOutcome(Record):
    """A Selection made (or found already made by an identical earlier request)."""

    created: bool
    selection: RecordRef
    decision: Decision
    variant: Variant
    previous: RecordRef | None
    pointer_sha256: Sha256


class HistoryEntry(Record):
    selection: RecordRef
    decision: Decision
    variant: Variant
    result: ResultRef
    verdict: str | None
    estimate_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    experiment: RecordRef | None
    mechanism: str | None
    at_epoch: Epoch | None = Field(description="Publication time of the Selection (from the ledger)")
    orphan: bool = Field(description="Never pointed to (a crash before the compare-and-swap)")


class ChampionHistory(Record):
    """``gpuopt champion history``: from the pointer back along ``previous``; ``--all`` adds orphans."""

    root: str
    target: RecordRef
    current: RecordRef | None
    entries: list[HistoryEntry]
