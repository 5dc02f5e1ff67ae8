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
    at_epoch: float
    kind: LedgerKind
    id: str
    path: str
    sha256: Sha256
    keys: dict[str, str | int | float | bool | None]


class ObjectsCheck(Record):
    blobs: Count
    manifests: Count
    blobs_corrupt: list[str]
    manifests_corrupt: list[str]
    blobs_missing: list[str]
    blobs_unreferenced: list[str]
    temp_files: list[str]
    removed: list[str]


class RecordCheck(Record):
    kind: LedgerKind
    id: str
    path: str
    status: Literal["ok", "changed", "missing", "unlisted", "invalid", "ledger_mismatch"]
    detail: str | None = None


class StoreVerification(Record):
    """``gpuopt store verify``: objects, records against the ledger, temp leftovers."""

    root: str
    deep: bool
    repaired: bool
    ok: bool
    objects: ObjectsCheck
    records: list[RecordCheck]
    ledger_lines: Count
    ledger_torn_tail: bool


class StoreReindex(Record):
    """``gpuopt store reindex``: the rebuilt ledger."""

    root: str
    lines: Count
    sha256: Sha256
    previous_sha256: Sha256 | None
    identical: bool
