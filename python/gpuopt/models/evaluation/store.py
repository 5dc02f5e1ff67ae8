"""Store documents: frozen-tree manifests, ledger lines, and the outputs of ``store verify|reindex``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import Count, Record, Sha256


class DirectoryEntry(Record):
    path: str
    kind: Literal["directory"]
    mode: Annotated[int, Field(ge=0, le=0o7777)]


class FileEntry(Record):
    path: str
    kind: Literal["file"]
    mode: Annotated[int, Field(ge=0, le=0o7777)]
    size_bytes: Count
    sha256: Sha256


class TreeManifest(Record):
    """``objects/trees/<digest>.json``; the object digest is SHA-256 of its canonical form."""

    format: Literal["gpuopt.tree/v1"]
    source_kind: Literal["file", "directory"]
    exclude: list[str]
    entries: list[Annotated[DirectoryEntry | FileEntry, Field(discriminator="kind")]]
    file_count: Count
    total_bytes: Count


class FrozenObject(Record):
    """What a freeze produced; ``source_resolved`` is evidence, never identity."""

    digest: Sha256
    source_resolved: str
    source_kind: Literal["file", "directory"]
    file_count: Count
    total_bytes: Count
    blobs_new: Count
    blobs_existing: Count


class ScanLimits(Record):
    """Limits of one freeze (spec defaults 100 000 files, 8 GiB, 300 s)."""

    max_files: Annotated[int, Field(ge=1)] = 100_000
    max_total_bytes: Annotated[int, Field(ge=1)] = 8 << 30
    max_wall_s: Annotated[float, Field(gt=0, le=86_400)] = 300.0


LedgerKind = Literal["target", "experiment", "invocation", "result", "selection", "pointer", "map"]


class LedgerLine(Record):
    """One line of ``ledger/records.jsonl``."""

    seq: Annotated[int, Field(ge=1)]
    prev_sha256: Sha256 | None = Field(
        default=None, description="SHA-256 of the previous line's bytes (absent on the first line)"
    )
    at_epoch: float
    kind: LedgerKind
    id: str
    path: str
    sha256: Sha256
    keys: dict[str, str | int | float | bool | None]


DefectCode = Literal[
    "ledger_missing",
    "ledger_line_invalid",
    "ledger_line_duplicated",
    "ledger_seq_invalid",
    "ledger_chain_broken",
    "ledger_mismatch",
    "record_missing",
    "record_changed",
    "record_invalid",
    "record_unlisted",
    "table_missing",
    "table_changed",
    "object_missing",
    "manifest_corrupt",
    "blob_missing",
    "blob_size_mismatch",
    "blob_corrupt",
    "events_missing",
    "event_line_invalid",
    "event_line_duplicated",
    "event_seq_invalid",
    "event_chain_broken",
    "event_result_mismatch",
    "env_key_missing",
    "env_key_invalid",
    "env_key_mismatch",
]


class Defect(Record):
    """One thing in the root that does not verify."""

    code: DefectCode = Field(description="What is wrong (stable; see references/evaluation-runtime.md)")
    path: str = Field(description="The file below the root that is wrong or absent")
    expected: str = Field(description="What verify expected there")
    observed: str | None = Field(default=None, description="What it found instead (null: nothing)")
    record: str | None = Field(
        default=None, description="The ledgered record that references the path, when it is not the record"
    )


class RepairAction(Record):
    path: str
    reason: Literal["temp_file", "unreferenced_blob"]


class StoreRepair(Record):
    """What ``--repair`` removed, or with ``--dry-run`` would remove (nothing a record references)."""

    dry_run: bool
    removed: list[RepairAction] = Field(description="Removed; with --dry-run, what a repair would remove")
    kept_unreferenced_blobs: list[str] = Field(
        description="Unreferenced blobs left in place because the store has defects: the missing or damaged "
        "evidence may be what references them"
    )


class StoreVerification(Record):
    """``gpuopt store verify``: the ledger, every ledgered record and what it references (trees, blobs,
    events, the environment key), and what a repair removes."""

    root: str
    deep: bool
    ok: bool
    defects: list[Defect]
    ledger_lines: Count
    ledger_torn_tail: bool
    records: Count = Field(description="Ledgered records checked")
    manifests: Count
    blobs: Count
    events_files: Count = Field(description="Invocation event logs checked")
    blobs_unreferenced: list[str]
    temp_files: list[str]
    repair: StoreRepair | None = Field(description="null without --repair")


class StoreReindex(Record):
    """``gpuopt store reindex``: the rebuilt ledger."""

    root: str
    lines: Count
    sha256: Sha256
    previous_sha256: Sha256 | None
    identical: bool
