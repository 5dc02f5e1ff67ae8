"""One artifact root: records, objects, ledger and locks, all through the native no-follow primitives.

Layout (spec §2.8): ``target.json``, ``objects/{blobs,trees,tmp}``, ``experiments/``, ``invocations/``,
``champion/``, ``maps/``, ``ledger/records.jsonl``, ``locks/``, ``staging/``. Records are canonical JSON and
a newline, published once; the ledger gets one line per publication, appended under ``flock``.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.store import (
    FrozenObject,
    LedgerKind,
    LedgerLine,
    ScanLimits,
    StoreReindex,
    TreeManifest,
)

M = TypeVar("M", bound=BaseModel)

LEDGER = "ledger/records.jsonl"
TEMP_PREFIX = ".tmp-"


@dataclass(frozen=True)
class Published:
    """A record just written: its path below the root, file sha256, whether it was new, its mtime."""

    rel: str
    sha256: str
    created: bool
    mtime_ns: int


class Store:
    """An artifact root (one per Target)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))

    @classmethod
    def open(cls, root: str | Path) -> Store:
        path = Path(root)
        if not path.is_dir() or path.is_symlink():
            raise InputError("root_not_found", f"no artifact root at {path}", path=str(path))
        return cls(path)

    def __str__(self) -> str:
        return str(self.root)

    def path(self, rel: str) -> Path:
        _native.store_exists(str(self.root), rel)  # validates the relative path
        return self.root / rel

    # ---- records ---------------------------------------------------------------------------------------

    def write_record(self, rel: str, value: Any) -> Published:
        """Publishes a record once (canonical JSON + newline); identical existing bytes are accepted."""
        return self.write_bytes(rel, jsonio.record_bytes(value))

    def write_bytes(self, rel: str, data: bytes) -> Published:
        out = json.loads(_native.store_write_once(str(self.root), rel, data))
        return Published(rel, out["sha256"], out["created"], out["mtime_ns"])

    def replace_bytes(self, rel: str, data: bytes, mode: int = 0o644, *, durable: bool = True) -> Published:
        out = json.loads(_native.store_replace(str(self.root), rel, data, mode, durable))
        return Published(rel, out["sha256"], True, out["mtime_ns"])

    def read_bytes(self, rel: str, *, max_bytes: int = jsonio.MAX_RECORD_BYTES) -> bytes:
        return _native.store_read(str(self.root), rel, max_bytes)

    def exists(self, rel: str) -> bool:
        return _native.store_exists(str(self.root), rel)

    def remove(self, rel: str, *, durable: bool = True) -> bool:
        return _native.store_remove(str(self.root), rel, durable)

    def ensure_dir(self, rel: str) -> Path:
        _native.store_ensure_dir(str(self.root), rel)
        return self.root / rel

    def read_record(self, rel: str, model: type[M], *, what: str, sha256: str | None = None) -> tuple[M, str]:
        """Reads a record strictly; with ``sha256``, its bytes must still hash to it (``record_changed``)."""
        try:
            data = self.read_bytes(rel)
        except InputError as exc:
            if exc.code == "file_not_found":
                raise InputError("record_not_found", f"no {what} at {self.root / rel}", path=rel) from None
            raise
        actual = jsonio.sha256_hex(data)
        if sha256 is not None and actual != sha256:
            raise InputError(
                "record_changed",
                f"the {what} at {rel} no longer matches its ref",
                path=rel,
                expected=sha256,
                observed=actual,
            )
        try:
            value = jsonio.load(model, data, what=what, max_bytes=jsonio.MAX_RECORD_BYTES)
        except InputError as exc:
            raise InputError(
                "record_invalid", f"the {what} at {rel} is invalid: {exc.message}", path=exc.path
            ) from None
        if data != jsonio.record_bytes(jsonio.parse(data, max_bytes=jsonio.MAX_RECORD_BYTES)):
            raise InputError("record_invalid", f"the {what} at {rel} is not canonical JSON", path=rel)
        return value, actual

    # ---- objects ---------------------------------------------------------------------------------------

    def freeze(self, source: str | Path, *, exclude: list[str], limits: ScanLimits) -> FrozenObject:
        """Freezes a file or tree into this root's object store. Its blobs are unreferenced until the
        manifest, written last: the root lock is held shared throughout (``verify --repair`` is refused)."""
        with self.lock("root", exclusive=False):
            out = _native.store_freeze(
                str(source),
                str(self.root),
                list(exclude),
                limits.max_files,
                limits.max_total_bytes,
                limits.max_wall_s,
            )
        return _frozen(out)

    def materialize(self, digest: str, destination: str | Path) -> Path:
        """Writes object ``digest`` to ``destination`` (which must not exist), verifying every byte."""
        _native.store_materialize(str(self.root), digest, str(destination))
        return Path(destination)

    def manifest(self, digest: str) -> TreeManifest:
        return TreeManifest.model_validate_json(_native.store_manifest(str(self.root), digest))

    def read_blob(self, sha256: str, *, max_bytes: int) -> bytes:
        """A blob's bytes, re-verified against its name (``object_corrupt``)."""
        data = self.read_bytes(f"objects/blobs/{sha256[:2]}/{sha256}", max_bytes=max_bytes)
        if jsonio.sha256_hex(data) != sha256:
            raise InputError("object_corrupt", f"blob {sha256} is corrupt", path=f"objects/blobs/{sha256}")
        return data

    # ---- locks -----------------------------------------------------------------------------------------

    @contextmanager
    def lock(self, name: str, *, exclusive: bool = True, wait: bool = True) -> Iterator[None]:
        """Holds ``flock`` on ``locks/<name>.lock`` (never deleted); without ``wait``, a lock held by someone
        else is ``store_busy``."""
        fd = _native.store_lock_fd(str(self.root), f"locks/{name}.lock")
        try:
            try:
                fcntl.flock(
                    fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
                )
            except BlockingIOError:
                raise InputError(
                    "store_busy",
                    f"a writer holds {self.root} (an evaluation freezing or publishing); this needs the root "
                    "alone: run it again once the writers are done",
                    path=f"locks/{name}.lock",
                ) from None
            yield
        finally:
            os.close(fd)

    # ---- ledger ----------------------------------------------------------------------------------------

    def ledger_append(
        self, kind: LedgerKind, record_id: str, published: Published, keys: dict[str, Any]
    ) -> LedgerLine:
        entry = {
            "at_epoch": published.mtime_ns / 1e9,
            "kind": kind,
            "id": record_id,
            "path": published.rel,
            "sha256": published.sha256,
            "keys": keys,
        }
        line = _native.ledger_append(str(self.root), LEDGER, jsonio.canonical(entry))
        return LedgerLine.model_validate_json(line)

    def ledger(self) -> list[LedgerLine]:
        """Every complete ledger line, in order; a torn last line is ignored."""
        if not self.exists(LEDGER):
            return []
        data = self.read_bytes(LEDGER, max_bytes=1 << 34)
        parts = data.split(b"\n")
        out = []
        for number, raw in enumerate(parts[:-1], start=1):
            try:
                out.append(
                    jsonio.load(LedgerLine, raw, what="ledger line", max_bytes=jsonio.MAX_RECORD_BYTES)
                )
            except InputError as exc:
                raise InputError(
                    "ledger_corrupt", f"ledger line {number} is invalid: {exc.message}", path=LEDGER
                ) from None
        return out

    def require_store(self) -> None:
        """Refuses a folder that is not an artifact root (``not_a_store``): one holds ``target.json`` or
        ``ledger/records.jsonl`` (a root whose Target or ledger was lost keeps the other)."""
        if self.exists("target.json") or self.exists(LEDGER):
            return
        empty = not any(self.root.iterdir())
        raise InputError(
            "not_a_store",
            f"{self.root} is {'an empty folder' if empty else 'not a gpuopt store'}: a store (artifact "
            "root) is the folder `gpuopt readiness check` creates, holding target.json (the Target), "
            "ledger/records.jsonl (one line per published record), objects/ (frozen trees and their blobs), "
            "invocations/ and keys/",
            path=str(self.root),
            expected="target.json and ledger/records.jsonl",
            observed="an empty folder" if empty else "neither",
        )

    # ---- refs ------------------------------------------------------------------------------------------

    def target_ref(self) -> RecordRef:
        """The Target's ref, read from ``target.json`` (its id and file hash)."""
        data = self.read_bytes("target.json")
        value = jsonio.parse(data, max_bytes=jsonio.MAX_RECORD_BYTES)
        return RecordRef(id=str(value.get("id")), sha256=jsonio.sha256_hex(data))


def _frozen(out: bytes) -> FrozenObject:
    raw = json.loads(out)
    raw.pop("manifest", None)
    return FrozenObject.model_validate(raw)


def hash_tree(source: str | Path, *, exclude: list[str], limits: ScanLimits) -> FrozenObject:
    """Hashes a file or tree like a freeze, storing nothing (driver inputs)."""
    return _frozen(
        _native.store_freeze(
            str(source), None, list(exclude), limits.max_files, limits.max_total_bytes, limits.max_wall_s
        )
    )


def hash_tree_manifest(
    source: str | Path, *, exclude: list[str], limits: ScanLimits
) -> tuple[FrozenObject, TreeManifest]:
    """Hashes a file or tree like a freeze, storing nothing, and returns its manifest (dry runs)."""
    raw = json.loads(
        _native.store_freeze(
            str(source), None, list(exclude), limits.max_files, limits.max_total_bytes, limits.max_wall_s
        )
    )
    manifest = TreeManifest.model_validate(raw.pop("manifest"))
    return FrozenObject.model_validate(raw), manifest


# ---- reindex ------------------------------------------------------------------------------------

_KEY_FIELDS = (
    "mode",
    "claim_layer",
    "operation",
    "request_digest",
    "retry_of",
    "execution_status",
    "measurement_validity",
    "verdict",
    "stop_reason",
    "cleanup_status",
    "decision",
    "mechanism",
    "rejection_scope",
    "gpu_seconds",
    "performance_interpreted",
)
_REF_FIELDS = ("experiment", "baseline", "previous", "selection", "supersedes")


def _ref_id(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("id", "invocation_id"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def _evaluation_keys(record: dict[str, Any]) -> dict[str, Any]:
    """Keys of evaluation requests and results that listings show without opening the record."""
    keys: dict[str, Any] = {}
    stats = record.get("statistics")
    primary = stats.get("primary") if isinstance(stats, dict) else None
    if isinstance(primary, dict):
        # v3 embeds the engine's comparison; v1 and v2 copied its fields into the statistic
        facts = primary.get("comparison", primary)
        for name in ("verdict", "estimate_pct", "ci_low_pct", "ci_high_pct"):
            keys[f"primary_{name}"] = facts.get(name) if isinstance(facts, dict) else None
    pairs = record.get("pairs")
    if isinstance(pairs, list):
        valid = sum(1 for p in pairs if isinstance(p, dict) and p.get("valid") is True)
        keys["pairs_valid"] = valid
        keys["pairs_invalid"] = len(pairs) - valid
    binding = record.get("reference_binding")
    if isinstance(binding, dict) and isinstance(binding.get("status"), str):
        keys["binding_status"] = binding["status"]
    variants = record.get("variants")
    if isinstance(variants, dict):
        for role in ("candidate", "reference"):
            variant = variants.get(role)
            if isinstance(variant, dict) and isinstance(variant.get("digest"), str):
                keys[f"{role}_digest"] = variant["digest"]
    candidate = record.get("candidate")
    if isinstance(candidate, dict) and isinstance(candidate.get("digest"), str):
        keys["candidate_digest"] = candidate["digest"]
    variant = record.get("variant")
    if isinstance(variant, dict) and isinstance(variant.get("digest"), str):
        keys["variant_digest"] = variant["digest"]
    result = record.get("result")
    if isinstance(result, dict) and isinstance(result.get("invocation_id"), str):
        keys["result"] = result["invocation_id"]
    return keys


def ledger_keys(record: dict[str, Any]) -> dict[str, Any]:
    """What listings and gates filter on, taken from a record's top-level fields."""
    keys: dict[str, Any] = {
        k: record[k] for k in _KEY_FIELDS if k in record and not isinstance(record[k], dict | list)
    }
    for k in _REF_FIELDS:
        value = record.get(k)
        ref = _ref_id(value)
        if ref is not None:
            keys[k] = ref
        elif value is None and k in record:
            keys[k] = None
    keys.update(_evaluation_keys(record))
    return keys


RECORD_FOLDERS: tuple[tuple[str, LedgerKind], ...] = (
    ("experiments", "experiment"),
    ("champion/selections", "selection"),
    ("maps", "map"),
)
"""Folders of create-once records named ``<id>.json``, and their kind (the id kind too)."""


def scan_records(store: Store) -> tuple[list[tuple[LedgerKind, str, str]], list[str]]:
    """``(kind, id, rel)`` of every record file below the root, and the paths in record folders whose names
    are no record's (``experiments/notes.json``)."""
    found: list[tuple[LedgerKind, str, str]] = []
    misnamed: list[str] = []
    root = store.root
    if (root / "target.json").is_file():
        found.append(("target", "", "target.json"))
    for folder, kind in RECORD_FOLDERS:
        base = root / folder
        names = sorted(e.name for e in base.iterdir()) if base.is_dir() else []
        for name in names:
            if name.endswith(".json") and not name.startswith(TEMP_PREFIX):
                rid = name[: -len(".json")]
                if _valid_id(kind, rid):
                    found.append((kind, rid, f"{folder}/{name}"))
                else:
                    misnamed.append(f"{folder}/{name}")
    found += _scan_invocations(root, misnamed)
    if (root / "champion/current.json").is_file():
        found.append(("pointer", "current", "champion/current.json"))
    return found, misnamed


def _scan_invocations(root: Path, misnamed: list[str]) -> list[tuple[LedgerKind, str, str]]:
    found: list[tuple[LedgerKind, str, str]] = []
    inv = root / "invocations"
    for entry in sorted(inv.iterdir()) if inv.is_dir() else []:
        if not _valid_id("invocation", entry.name):
            misnamed.append(f"invocations/{entry.name}")
            continue
        for name, kind in (("request.json", "invocation"), ("result.json", "result")):
            if (entry / name).is_file():
                found.append((kind, entry.name, f"invocations/{entry.name}/{name}"))  # type: ignore[arg-type]
    return found


def _valid_id(kind: str, rid: str) -> bool:
    try:
        _native.validate_id(kind, rid)
    except InputError:
        return False
    return True


def _scan_strict(store: Store) -> list[tuple[LedgerKind, str, str]]:
    found, misnamed = scan_records(store)
    if misnamed:
        raise InputError(
            "path_unsafe", f"{misnamed[0]} is in a record folder but names no record", path=misnamed[0]
        )
    return found


def rebuilt_ledger_entries(store: Store) -> list[dict[str, Any]]:
    """The ledger as the files say it should be: one entry per record, ordered by publication time."""
    entries: list[tuple[tuple[int, str], dict[str, Any]]] = []
    for kind, rid, rel in _scan_strict(store):
        data = store.read_bytes(rel)
        record = jsonio.parse(data, max_bytes=jsonio.MAX_RECORD_BYTES)
        mtime_ns = os.stat(store.root / rel, follow_symlinks=False).st_mtime_ns
        record_id = rid or str(record.get("id"))
        entry = {
            "at_epoch": mtime_ns / 1e9,
            "kind": kind,
            "id": record_id,
            "path": rel,
            "sha256": jsonio.sha256_hex(data),
            "keys": ledger_keys(record),
        }
        entries.append(((mtime_ns, rel), entry))
    entries.sort(key=lambda e: e[0])
    return [{**entry, "seq": seq} for seq, (_, entry) in enumerate(entries, start=1)]


def reindex(store: Store) -> StoreReindex:
    """Rebuilds ``ledger/records.jsonl`` from the record files (under the root's exclusive lock)."""
    store.require_store()
    with store.lock("root", exclusive=True):
        previous = (
            jsonio.sha256_hex(store.read_bytes(LEDGER, max_bytes=1 << 34)) if store.exists(LEDGER) else None
        )
        entries = rebuilt_ledger_entries(store)
        sha = _native.ledger_rewrite(str(store.root), [jsonio.canonical(e) for e in entries])
    return StoreReindex(
        root=str(store.root),
        lines=len(entries),
        sha256=sha,
        previous_sha256=previous,
        identical=previous == sha,
    )


def now_epoch() -> float:
    return time.time()
