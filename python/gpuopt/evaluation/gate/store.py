"""Where gate baselines live in an artifact root, and the few operations on them.

``gates/baselines/gb-<64hex>.json`` (create-once, 0444, canonical JSON: the id hashes the record without
``id``) and ``gates/names/<name>.json`` (the one mutable gate file, replaced atomically under
``locks/gates.lock``). A name is written only after its record, so a crash leaves at most a record no name
points at; a record is removed only by ``gate delete``, and only when no other name points at it.
"""

from __future__ import annotations

import re
import time
from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.gate import GateBaseline, GateName

BASELINES = "gates/baselines"
NAMES = "gates/names"
LOCK = "gates"
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$")
BASELINE_ID = re.compile(r"^gb-[0-9a-f]{64}$")


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise InputError(
            "gate_name_invalid",
            "a gate baseline name is a letter, then up to 127 letters, digits, '_', '.' or '-'",
            path="name",
            expected=NAME_PATTERN.pattern,
            observed=name if name.isprintable() and len(name) <= 200 else f"{len(name)} characters",
        )
    return name


def record_rel(baseline_id: str) -> str:
    if not BASELINE_ID.fullmatch(baseline_id):
        raise InputError("gate_baseline_invalid", "not a gate baseline id", expected="gb-<64 hex>")
    return f"{BASELINES}/{baseline_id}.json"


def name_rel(name: str) -> str:
    return f"{NAMES}/{check_name(name)}.json"


def baseline_id(core: dict[str, Any]) -> str:
    """``gb-`` + SHA-256 of the canonical record without ``id``."""
    return "gb-" + jsonio.digest({k: v for k, v in core.items() if k != "id"})


def publish(store: Store, core: dict[str, Any]) -> tuple[GateBaseline, RecordRef, bool]:
    """Validates and writes a baseline record once (identical bytes already there are accepted)."""
    record = jsonio.validate(GateBaseline, {**core, "id": baseline_id(core)}, what="gate baseline")
    store.ensure_dir(BASELINES)
    with store.lock("root", exclusive=False):
        published = store.write_record(record_rel(record.id), record)
    return record, RecordRef(id=record.id, sha256=published.sha256), published.created


def read_name(store: Store, name: str) -> GateName:
    rel = name_rel(name)
    if not store.exists(rel):
        raise InputError(
            "gate_baseline_not_found",
            f"no gate baseline named {name!r} in {store.root} (gpuopt gate list shows the names)",
            path="name",
            observed=name,
        )
    value, _ = store.read_record(rel, GateName, what=f"gate name {name}")
    if value.name != name:
        raise InputError("record_invalid", f"{rel} names {value.name!r}", path=rel)
    return value


def read_baseline(store: Store, ref: RecordRef) -> GateBaseline:
    """A baseline record, verified against its ref (``record_changed``) and its id (``record_invalid``)."""
    rel = record_rel(ref.id)
    record, _ = store.read_record(rel, GateBaseline, what="gate baseline", sha256=ref.sha256)
    if baseline_id(record.model_dump(mode="json")) != record.id or record.id != ref.id:
        raise InputError(
            "record_invalid", f"the gate baseline at {rel} does not hash to its id", path=rel, expected=ref.id
        )
    return record


def names(store: Store) -> list[str]:
    folder = store.root / NAMES
    if not folder.is_dir():
        return []
    out = []
    for entry in sorted(folder.iterdir()):
        stem = entry.name.removesuffix(".json")
        if entry.name.endswith(".json") and NAME_PATTERN.fullmatch(stem) and entry.is_file():
            out.append(stem)
    return out


def set_name(store: Store, name: str, ref: RecordRef, *, replace: bool) -> tuple[GateName, RecordRef | None]:
    """Points ``name`` at ``ref`` (atomic replace under the gates lock). An existing name pointing elsewhere
    needs ``replace`` (``gate_name_exists``); pointing at the same record changes nothing."""
    rel = name_rel(name)
    store.ensure_dir(NAMES)
    with store.lock(LOCK):
        if not store.exists(record_rel(ref.id)):
            # Published just before, then removed by a `gate delete` of another name that pointed at the
            # same record (it holds this lock, the publication did not): a name must never point at
            # nothing.
            raise InputError(
                "gate_baseline_not_found",
                f"the baseline record {ref.id} was removed (a concurrent `gpuopt gate delete`) before the "
                f"name {name!r} could point at it: save or import it again",
                path="name",
                observed=ref.id,
            )
        previous = read_name(store, name) if store.exists(rel) else None
        if previous is not None and previous.baseline == ref:
            return previous, previous.previous
        if previous is not None and not replace:
            raise InputError(
                "gate_name_exists",
                f"the name {name!r} already points at {previous.baseline.id}; pass --replace to point it "
                "at the new baseline",
                path="name",
                expected=previous.baseline.id,
                observed=ref.id,
            )
        value = GateName(
            format="gpuopt.gate-name/v1",
            name=name,
            baseline=ref,
            saved_at_epoch=time.time(),
            previous=None if previous is None else previous.baseline,
        )
        store.replace_bytes(rel, jsonio.record_bytes(value), 0o644)
    return value, value.previous


def delete(store: Store, name: str) -> tuple[RecordRef, bool]:
    """Removes a name, and its record when no other name points at it."""
    with store.lock(LOCK):
        value = read_name(store, name)
        store.remove(name_rel(name))
        others = [read_name(store, n).baseline.id for n in names(store)]
        removed = False
        if value.baseline.id not in others:
            with store.lock("root", exclusive=False):
                removed = store.remove(record_rel(value.baseline.id))
    return value.baseline, removed
