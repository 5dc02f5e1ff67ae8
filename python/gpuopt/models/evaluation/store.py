"""Store documents: frozen-tree manifests, ledger lines, and the outputs of ``store verify|reindex``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import Count, Record, Sha256


class DirectoryEntry(Record):
    path: str = Field(
        description="Relative POSIX path of the directory inside the tree (no empty or .. component)"
    )
    kind: Literal["directory"] = Field(description="Always directory")
    mode: Annotated[int, Field(ge=0, le=0o7777)] = Field(
        description="Permission bits, st_mode & 0o7777 (a chmod changes the tree's digest)"
    )


class FileEntry(Record):
    path: str = Field(
        description="Relative POSIX path of the file inside the tree (a frozen single file records its "
        "base name)"
    )
    kind: Literal["file"] = Field(description="Always file")
    mode: Annotated[int, Field(ge=0, le=0o7777)] = Field(
        description="Permission bits, st_mode & 0o7777 (a chmod changes the tree's digest)"
    )
    size_bytes: Count = Field(description="The file's size (bytes)")
    sha256: Sha256 = Field(
        description="SHA-256 of the file's bytes: its blob is objects/blobs/<first 2 hex>/<sha256>"
    )


class TreeManifest(Record):
    """``objects/trees/<digest>.json``; the object digest is SHA-256 of its canonical form."""

    format: Literal["gpuopt.tree/v1"] = Field(description="Document format: always gpuopt.tree/v1")
    source_kind: Literal["file", "directory"] = Field(
        description="file when a single file was frozen, directory for a tree"
    )
    exclude: list[str] = Field(
        description="The exclusion globs applied (** allowed), e.g. the Target's source_rules.exclude"
    )
    entries: list[Annotated[DirectoryEntry | FileEntry, Field(discriminator="kind")]] = Field(
        description="Every directory and file, names sorted bytewise per directory, a directory before its "
        "children; empty directories included"
    )
    file_count: Count = Field(description="Number of file entries")
    total_bytes: Count = Field(description="Sum of the files' sizes (bytes)")


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

    max_files: Annotated[int, Field(ge=1)] = Field(
        default=100_000, description="Most files one freeze may read; more is object_limit_exceeded"
    )
    max_total_bytes: Annotated[int, Field(ge=1)] = Field(
        default=8 << 30,
        description="Most bytes one freeze may read (bytes; default 8 GiB); more is object_limit_exceeded",
    )
    max_wall_s: Annotated[float, Field(gt=0, le=86_400)] = Field(
        default=300.0, description="Longest one freeze may take (s); longer is object_limit_exceeded"
    )


LedgerKind = Literal["target", "experiment", "invocation", "result", "selection", "pointer", "map"]


class LedgerLine(Record):
    """One line of ``ledger/records.jsonl``."""

    seq: Annotated[int, Field(ge=1)] = Field(description="Position in the ledger, from 1, without gaps")
    prev_sha256: Sha256 | None = Field(
        default=None, description="SHA-256 of the previous line's bytes (absent on the first line)"
    )
    at_epoch: float = Field(
        description="When the record was published (epoch s; reindex uses the file's mtime)"
    )
    kind: LedgerKind = Field(
        description="What was published: target, experiment, invocation, result, selection, pointer or map"
    )
    id: str = Field(description="The record's id (current for the Champion pointer)")
    path: str = Field(description="The record file, relative to the root")
    sha256: Sha256 = Field(description="SHA-256 of the record file's bytes at publication")
    keys: dict[str, str | int | float | bool | None] = Field(
        description="What listings and gates filter on without opening the record: its operation, "
        "statuses, verdict, stop reason, refs (as ids) and the primary statistic's numbers"
    )


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
    "events_unfinished",
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
    path: str = Field(
        description="The file removed (or, with --dry-run, that would be), relative to the root"
    )
    reason: Literal["temp_file", "unreferenced_blob"] = Field(
        description="temp_file: a leftover of an interrupted write; unreferenced_blob: a blob no manifest "
        "lists"
    )


class StoreRepair(Record):
    """What ``--repair`` removed, or with ``--dry-run`` would remove (nothing a record references)."""

    dry_run: bool = Field(description="True with --dry-run: nothing was removed, removed lists what would be")
    removed: list[RepairAction] = Field(description="Removed; with --dry-run, what a repair would remove")
    kept_unreferenced_blobs: list[str] = Field(
        description="Unreferenced blobs left in place because the store has defects: the missing or damaged "
        "evidence may be what references them"
    )


class StoreVerification(Record):
    """``gpuopt store verify``: the ledger, every ledgered record and what it references (trees, blobs,
    events, the environment key), and what a repair removes."""

    root: str = Field(description="The artifact root verified")
    deep: bool = Field(
        description="True with --deep: every stored blob was re-hashed, not only its size checked"
    )
    ok: bool = Field(description="True when no defect was found")
    defects: list[Defect] = Field(
        description="Everything that does not verify, sorted by path, code and expectation"
    )
    ledger_lines: Count = Field(description="Lines of ledger/records.jsonl read")
    ledger_torn_tail: bool = Field(
        description="True when the ledger's last line is torn (an interrupted append; readers ignore it, "
        "the next writer truncates it)"
    )
    records: Count = Field(description="Ledgered records checked")
    manifests: Count = Field(description="Tree manifests found under objects/trees")
    blobs: Count = Field(description="Blobs found under objects/blobs (with --deep each was re-hashed)")
    events_files: Count = Field(description="Invocation event logs checked")
    blobs_unreferenced: list[str] = Field(
        description="Blobs no manifest lists (objects/blobs/<2>/<sha256>), e.g. left by a freeze that "
        "crashed before its manifest"
    )
    temp_files: list[str] = Field(
        description="Leftovers of interrupted writes (.tmp-* files, everything in objects/tmp), relative "
        "to the root"
    )
    repair: StoreRepair | None = Field(description="null without --repair")


class StoreReindex(Record):
    """``gpuopt store reindex``: the rebuilt ledger."""

    root: str = Field(description="The artifact root reindexed")
    lines: Count = Field(
        description="Lines of the rebuilt ledger: one per record file, in publication (mtime) order"
    )
    sha256: Sha256 = Field(description="SHA-256 of the rebuilt ledger/records.jsonl")
    previous_sha256: Sha256 | None = Field(
        description="SHA-256 of the ledger it replaced; null when there was none"
    )
    identical: bool = Field(description="True when the rebuilt ledger is byte-identical to the previous one")
