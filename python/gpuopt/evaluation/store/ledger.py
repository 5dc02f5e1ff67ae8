"""The ledger's content: the keys of a record's line (what listings and gates filter on without opening the
record), the scan of every record file (``gpuopt store verify`` shares it) and ``ledger/records.jsonl``
rebuilt from the files (``gpuopt store reindex``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.store.root import LEDGER, TEMP_PREFIX, Store
from gpuopt.models.evaluation.store import LedgerKind, StoreReindex

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
