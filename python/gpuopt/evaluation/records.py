"""Every reader of the evaluation records in one artifact root (the store layer): frozen requests and
results of invocations, Experiments, Selections and the Champion pointer, and :func:`mark_stale`, the one
rewrite of a result that lost its Champion binding. Operations, the runner and the views read records
through here; none of them reads another operation's module to get at a record."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio, registry
from gpuopt.evaluation.store import Store
from gpuopt.models._base import Model
from gpuopt.models.evaluation.champion import ChampionPointer, Selection
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.experiment import Experiment, ReferenceAtCreation
from gpuopt.models.evaluation.invocation import FrozenRequest, InvocationResult, Warning
from gpuopt.models.evaluation.operations import BindingStatus
from gpuopt.models.evaluation.target import Target, Variant

M = TypeVar("M", bound=Model)

POINTER = "champion/current.json"
LOCK = "locks/champion.lock"


# ---- invocations -------------------------------------------------------------------------------------------


def invocation_rel(inv_id: str, name: str = "") -> str:
    _native.validate_id("invocation", inv_id)
    return f"invocations/{inv_id}" + (f"/{name}" if name else "")


def read_request(store: Store, inv_id: str) -> FrozenRequest:
    rel = invocation_rel(inv_id, "request.json")
    if not store.exists(rel):
        raise InputError("invocation_not_found", f"no invocation {inv_id} in {store.root}", path=rel)
    raw = jsonio.parse(store.read_bytes(rel), max_bytes=jsonio.MAX_RECORD_BYTES, what="request.json")
    return jsonio.validate(request_model(raw), raw, what=rel)


def _supervised(raw: Any) -> registry.Supervised | None:
    return registry.find_supervised(raw.get("operation") if isinstance(raw, dict) else None)


def request_model(raw: Any) -> type[FrozenRequest]:
    """The frozen-request model of a parsed ``request.json`` (its ``operation``'s in the registry; an
    unknown operation is refused by the base model)."""
    found = _supervised(raw)
    return FrozenRequest if found is None else cast("type[FrozenRequest]", registry.load(found.frozen))


def result_model(raw: Any) -> type[InvocationResult]:
    """The result model of a parsed ``result.json`` (by its ``operation``)."""
    found = _supervised(raw)
    return InvocationResult if found is None else cast("type[InvocationResult]", registry.load(found.result))


def read_result(store: Store, inv_id: str) -> tuple[InvocationResult, str] | None:
    rel = invocation_rel(inv_id, "result.json")
    if not store.exists(rel):
        return None
    raw = jsonio.parse(store.read_bytes(rel), max_bytes=jsonio.MAX_RECORD_BYTES, what="result.json")
    result, sha = store.read_record(rel, result_model(raw), what="invocation result")
    return result, sha


RESULT_REF_KEYS = ("baseline", "noise", "result")
"""The request keys that hold an invocation result reference (``ResultRef``)."""


def load_request(model: type[M], data: bytes, *, cwd: Path, what: str) -> M:
    """A request, strict, after :func:`complete_result_refs`."""
    raw = jsonio.parse(data, what=what)
    return jsonio.validate(model, complete_result_refs(raw, cwd), what=what)


def complete_result_refs(raw: Any, cwd: Path) -> Any:
    """A request may name an invocation result by its id alone (``"inv-..."`` or ``{"invocation_id":
    "inv-..."}``): the store of the request's root fills in the sha256 of that ``result.json``, so the
    frozen request always holds the full reference. A given sha256 is kept (and checked where it is read);
    anything else is left for validation to refuse."""
    if not isinstance(raw, dict) or not isinstance(raw.get("root"), str):
        return raw
    out = dict(raw)
    for key in RESULT_REF_KEYS:
        value = out.get(key)
        inv_id = value if isinstance(value, str) else None
        if isinstance(value, dict) and set(value) == {"invocation_id"}:
            inv_id = value["invocation_id"] if isinstance(value["invocation_id"], str) else None
        if inv_id is None:
            continue
        store = Store.open(cwd / raw["root"])
        _native.validate_id("invocation", inv_id)
        rel = invocation_rel(inv_id, "result.json")
        if not store.exists(rel):
            raise InputError("result_not_found", f"no result {inv_id} in {store.root}", path=key)
        out[key] = {"invocation_id": inv_id, "sha256": jsonio.sha256_hex(store.read_bytes(rel))}
    return out


def mark_stale(result: InvocationResult, *, observed: str | None) -> InvocationResult:
    """A bound result whose Champion moved before publication: measurement invalid, not evaluated. A result
    that was already not evaluated (refused, failed, timed out) keeps its stop reason."""
    update: dict[str, Any] = {
        "measurement_validity": "invalid",
        "verdict": "not_evaluated",
        "stop_reason": "stale_reference" if result.verdict != "not_evaluated" else result.stop_reason,
        "warnings": [
            *result.warnings,
            Warning(
                code="stale_reference",
                message="the Champion changed before this result was published",
                observed=observed,
            ),
        ],
    }
    binding = getattr(result, "reference_binding", None)
    if isinstance(binding, BindingStatus):
        update["reference_binding"] = binding.model_copy(update={"status": "stale"})
    if hasattr(result, "performance_interpreted"):
        update["performance_interpreted"] = False
    if hasattr(result, "statistics"):
        update["statistics"] = None
    return type(result).model_validate({**result.model_dump(), **update})


# ---- Experiments -------------------------------------------------------------------------------------------


def experiment_rel(exp_id: str) -> str:
    _native.validate_id("experiment", exp_id)
    return f"experiments/{exp_id}.json"


def load_experiment(store: Store, ref: RecordRef) -> Experiment:
    """An Experiment of this root, verified against its ref (``experiment_not_found``,
    ``experiment_changed``)."""
    rel = experiment_rel(ref.id)
    if not store.exists(rel):
        raise InputError("experiment_not_found", f"no Experiment {ref.id} in {store.root}", path=rel)
    try:
        exp, _ = store.read_record(rel, Experiment, what="experiment", sha256=ref.sha256)
    except InputError as exc:
        if exc.code == "record_changed":
            raise InputError(
                "experiment_changed",
                exc.message,
                path=rel,
                expected=exc.expected,
                observed=exc.observed,
            ) from None
        raise
    return exp


# ---- the Champion ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Current:
    """The resolved Champion."""

    variant: Variant
    selection: Selection | None
    selection_ref: RecordRef | None
    pointer_sha256: str | None

    @property
    def decision(self) -> Literal["original", "select_candidate", "restore_original"]:
        return "original" if self.selection is None else self.selection.decision

    @property
    def is_original(self) -> bool:
        return self.selection is None or self.selection.decision == "restore_original"

    def at_creation(self) -> ReferenceAtCreation:
        return ReferenceAtCreation(
            variant=self.variant.model_copy(update={"role": "reference"}),
            selection=self.selection_ref,
            pointer_sha256=self.pointer_sha256,
        )


def selection_rel(sel_id: str) -> str:
    _native.validate_id("selection", sel_id)
    return f"champion/selections/{sel_id}.json"


def _invalid(message: str, path: str = POINTER, **kw: str | None) -> InputError:
    return InputError("selection_invalid", message, path=path, **kw)


def read_selection(store: Store, ref: RecordRef) -> Selection:
    try:
        rel = selection_rel(ref.id)
    except InputError as exc:
        raise _invalid(f"the selection id {ref.id!r} is invalid: {exc.message}") from None
    if not store.exists(rel):
        raise _invalid(f"the pointer names {ref.id}, which does not exist (dangling)", rel)
    selection, _ = store.read_record(rel, Selection, what="selection", sha256=ref.sha256)
    return selection


def resolve_champion(store: Store, target: Target, tref: RecordRef) -> Current:
    """No pointer → the original; else pointer → selection (hash-checked, same Target) → its variant. An
    unreadable, symlinked, malformed or dangling pointer is ``selection_invalid``, never the original."""
    original = target.original
    if not store.exists(POINTER):
        if os.path.islink(store.root / POINTER):
            raise _invalid("champion/current.json is a symbolic link")
        return Current(variant=original, selection=None, selection_ref=None, pointer_sha256=None)
    try:
        data = store.read_bytes(POINTER, max_bytes=1 << 20)
        pointer = jsonio.load(ChampionPointer, data, what="champion pointer")
    except InputError as exc:
        raise _invalid(f"champion/current.json is unreadable or malformed: {exc.message}") from None
    if pointer.target.id != tref.id:
        raise _invalid("the pointer names another Target", expected=tref.id, observed=pointer.target.id)
    try:
        selection = read_selection(store, pointer.selection)
    except InputError as exc:
        if exc.code == "selection_invalid":
            raise
        raise _invalid(f"the selected record does not match the pointer: {exc.message}") from None
    if selection.id != pointer.selection.id or selection.target.id != tref.id:
        raise _invalid("the selection does not belong to this pointer and Target")
    variant = original if selection.decision == "restore_original" else selection.variant
    return Current(
        variant=variant,
        selection=selection,
        selection_ref=pointer.selection,
        pointer_sha256=jsonio.sha256_hex(data),
    )


def pointer_sha256(store: Store) -> str | None:
    """The Champion pointer file's sha256, or None when absent (the original is the Champion)."""
    if not store.exists(POINTER):
        return None
    return jsonio.sha256_hex(store.read_bytes(POINTER, max_bytes=1 << 20))
