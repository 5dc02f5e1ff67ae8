"""The Champion: ``champion/current.json`` (absent = the original), append-only Selections, and the explicit
``select`` / ``restore-original`` verbs with compare-and-swap (spec §2.6, §2.9, §3.7).

gpuopt never selects or restores by itself: a Selection is made only on an explicit request that names the
justifying result and the Champion the caller expects to replace.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import formats, jsonio, registry
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.records import (
    LOCK,
    POINTER,
    Current,
    load_experiment,
    load_request,
    read_request,
    read_result,
    read_selection,
    resolve_champion,
    selection_rel,
)
from gpuopt.evaluation.store import Published, Store, ledger_keys
from gpuopt.models.evaluation.champion import (
    ChampionHistory,
    ChampionPointer,
    ChampionState,
    HistoryEntry,
    RestoreRequest,
    Selection,
    SelectOutcome,
    SelectRequest,
)
from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.target import Target


def _open(root: str | Path, expected: RecordRef | None) -> tuple[Store, Target, RecordRef]:
    store = Store.open(root)
    target, tref = targets.load(store, expected)
    return store, targets.optimizable(target), tref


def show(root: str | Path) -> ChampionState:
    store, target, tref = _open(root, None)
    cur = resolve_champion(store, target, tref)
    return ChampionState(
        root=str(store.root),
        target=tref,
        selection=cur.selection_ref,
        pointer_sha256=cur.pointer_sha256,
        variant=cur.variant,
        decision=cur.decision,
        experiment=None if cur.selection is None else cur.selection.experiment,
    )


# ---- select and restore ------------------------------------------------------------------------------------


def _not_eligible(message: str, observed: str) -> InputError:
    return InputError("result_not_eligible", message, path="result", observed=observed)


def _read_result(store: Store, ref: ResultRef, operation: str) -> Any:

    _native.validate_id("invocation", ref.invocation_id)
    rel = f"invocations/{ref.invocation_id}/result.json"
    if not store.exists(rel):
        raise InputError("result_not_found", f"no result {ref.invocation_id} in {store.root}", path=rel)
    raw = jsonio.parse(store.read_bytes(rel), max_bytes=jsonio.MAX_RECORD_BYTES)
    if not isinstance(raw, dict) or raw.get("operation") != operation:
        observed = raw.get("operation") if isinstance(raw, dict) else None
        raise _not_eligible(f"the result is not a {operation} result", f"operation {observed}")
    try:
        model = registry.load(registry.supervised(operation)[1].result)
        result, _ = store.read_record(rel, model, what="result", sha256=ref.sha256)
    except InputError as exc:
        if exc.code == "record_changed":
            raise InputError(
                "result_changed", exc.message, path=rel, expected=exc.expected, observed=exc.observed
            ) from None
        raise
    return result


def _expect(cur: Current, expected: RecordRef | Literal["original"]) -> None:
    """The caller's expected Champion must be the current one (``stale_reference``)."""
    now = "original" if cur.selection_ref is None else cur.selection_ref
    if jsonio.canonical(now) != jsonio.canonical(expected):
        raise InputError(
            "stale_reference",
            "the Champion is no longer the expected selection",
            path="expected_selection",
            expected=jsonio.canonical(expected).decode(),
            observed=jsonio.canonical(now).decode(),
        )


def _bound_to(result: Any, expected: RecordRef | Literal["original"]) -> bool:
    binding = result.reference_binding
    bound = "original" if binding.selection is None else binding.selection
    return jsonio.canonical(bound) == jsonio.canonical(expected)


def _check_common(
    result: Any, tref: RecordRef, cur: Current, expected: RecordRef | Literal["original"]
) -> None:
    checks = [
        (result.target is not None and result.target.id == tref.id, "target: another Target"),
        (result.execution_status == "succeeded", f"execution_status {result.execution_status}"),
        (result.measurement_validity == "valid", f"measurement_validity {result.measurement_validity}"),
        (result.cleanup_status == "confirmed", f"cleanup_status {result.cleanup_status}"),
        (result.reference_binding.status == "current", "reference_binding.status stale"),
        (_bound_to(result, expected), "reference_binding: bound to another Champion"),
        (result.reference_binding.pointer_sha256 == cur.pointer_sha256, "reference_binding.pointer_sha256"),
    ]
    for ok, failed in checks:
        if not ok:
            raise _not_eligible(f"the result is not eligible: {failed}", failed)


def _repeated(
    cur: Current, decision: str, result: ResultRef, expected: RecordRef | Literal["original"]
) -> SelectOutcome | None:
    """The outcome of an identical request already applied: the current selection was made from this result
    with this decision, against the Champion the request expected (``created: false``)."""
    sel = cur.selection
    previous = None if expected == "original" else expected
    if sel is None or cur.selection_ref is None or cur.pointer_sha256 is None:
        return None
    same = (
        sel.decision == decision
        and jsonio.canonical(sel.result) == jsonio.canonical(result)
        and jsonio.canonical(sel.previous) == jsonio.canonical(previous)
    )
    if not same:
        return None
    return SelectOutcome(
        created=False,
        selection=cur.selection_ref,
        decision=sel.decision,
        variant=sel.variant,
        previous=sel.previous,
        pointer_sha256=cur.pointer_sha256,
    )


def _publish(store: Store, tref: RecordRef, cur: Current, core: dict[str, Any]) -> SelectOutcome:
    sel_id = "sel-" + jsonio.digest(core)[:32]
    selection = jsonio.validate(Selection, {**core, "id": sel_id}, what="selection")
    sel_bytes = jsonio.record_bytes(selection)
    sel_ref = RecordRef(id=sel_id, sha256=jsonio.sha256_hex(sel_bytes))
    if cur.selection_ref is not None and cur.selection_ref.id == sel_id:
        assert cur.pointer_sha256 is not None
        return SelectOutcome(
            created=False,
            selection=sel_ref,
            decision=selection.decision,
            variant=selection.variant,
            previous=selection.previous,
            pointer_sha256=cur.pointer_sha256,
        )
    pointer = ChampionPointer(format=formats.CHAMPION_POINTER, target=tref, selection=sel_ref)
    pointer_bytes = jsonio.record_bytes(pointer)
    rel = selection_rel(sel_id)
    store.ensure_dir("champion/selections")
    with store.lock("root", exclusive=False):
        _native.store_cas(
            str(store.root), POINTER, LOCK, cur.pointer_sha256, pointer_bytes, [(rel, sel_bytes)]
        )
        for kind, rid, path, data, record in (
            ("selection", sel_id, rel, sel_bytes, selection),
            ("pointer", "current", POINTER, pointer_bytes, pointer),
        ):
            mtime_ns = os.stat(store.root / path, follow_symlinks=False).st_mtime_ns
            published = Published(path, jsonio.sha256_hex(data), True, mtime_ns)
            store.ledger_append(kind, rid, published, ledger_keys(record.model_dump(mode="json")))  # type: ignore[arg-type]
    return SelectOutcome(
        created=True,
        selection=sel_ref,
        decision=selection.decision,
        variant=selection.variant,
        previous=selection.previous,
        pointer_sha256=jsonio.sha256_hex(pointer_bytes),
    )


def select(data: bytes | SelectRequest, *, cwd: Path | None = None) -> SelectOutcome:
    """Selects the candidate of a ``target`` result that passed against the current Champion (compare-and-
    swap on the pointer; ``stale_reference`` if the Champion moved)."""
    cwd = Path.cwd() if cwd is None else cwd
    req = (
        data
        if isinstance(data, SelectRequest)
        else load_request(SelectRequest, data, cwd=cwd, what="request")
    )
    store, target, tref = _open(cwd / req.root, req.target)
    cur = resolve_champion(store, target, tref)
    repeated = _repeated(cur, "select_candidate", req.result, req.expected_selection)
    if repeated is not None:
        return repeated
    _expect(cur, req.expected_selection)
    result = _read_result(store, req.result, "target")
    _check_common(result, tref, cur, req.expected_selection)
    if result.verdict != "passed":
        raise _not_eligible(
            f"the result's verdict is {result.verdict}, not passed", f"verdict {result.verdict}"
        )
    request = read_request(store, req.result.invocation_id)
    reference = request.variants.get("reference")
    if reference is None or reference.digest != cur.variant.digest:
        raise _not_eligible("the result's reference is not the current Champion", "reference variant")
    exp = load_experiment(store, result.experiment)
    core = {
        "format": formats.SELECTION,
        "target": tref.model_dump(),
        "decision": "select_candidate",
        "variant": exp.candidate.model_dump(),
        "result": req.result.model_dump(),
        "experiment": result.experiment.model_dump(),
        "previous": None if cur.selection_ref is None else cur.selection_ref.model_dump(),
    }
    return _publish(store, tref, cur, core)


def restore_original(data: bytes | RestoreRequest, *, cwd: Path | None = None) -> SelectOutcome:
    """Restores the original after a final audit of the current Champion rejected it with restore
    support."""
    cwd = Path.cwd() if cwd is None else cwd
    req = (
        data
        if isinstance(data, RestoreRequest)
        else load_request(RestoreRequest, data, cwd=cwd, what="request")
    )
    store, target, tref = _open(cwd / req.root, req.target)
    cur = resolve_champion(store, target, tref)
    repeated = _repeated(cur, "restore_original", req.result, req.expected_selection)
    if repeated is not None:
        return repeated
    _expect(cur, req.expected_selection)
    if cur.is_original:
        raise _not_eligible("the Champion is already the original", "champion original")
    result = _read_result(store, req.result, "final_audit")
    checks = [
        (result.target is not None and result.target.id == tref.id, "target: another Target"),
        (result.verdict == "rejected", f"verdict {result.verdict}"),
        (result.restore_supported, "restore_supported false"),
        (result.cleanup_status == "confirmed", f"cleanup_status {result.cleanup_status}"),
        (result.reference_binding.status == "current", "reference_binding.status stale"),
        (_bound_to(result, req.expected_selection), "reference_binding: bound to another Champion"),
    ]
    for ok, failed in checks:
        if not ok:
            raise _not_eligible(f"the result is not eligible: {failed}", failed)
    core = {
        "format": formats.SELECTION,
        "target": tref.model_dump(),
        "decision": "restore_original",
        "variant": target.original.model_dump(),
        "result": req.result.model_dump(),
        "experiment": None,
        "previous": None if cur.selection_ref is None else cur.selection_ref.model_dump(),
    }
    return _publish(store, tref, cur, core)


# ---- history -----------------------------------------------------------------------------------------------


def _entry(
    store: Store, selection: Selection, ref: RecordRef, at: float | None, orphan: bool
) -> HistoryEntry:
    verdict = estimate = low = high = None
    mechanism = None
    try:
        found = read_result(store, selection.result.invocation_id)
    except InputError:
        found = None
    if found is not None:
        result = found[0]
        verdict = result.verdict
        stats = getattr(result, "statistics", None)
        if stats is not None:
            estimate, low, high = (
                stats.primary.estimate_pct,
                stats.primary.ci_low_pct,
                stats.primary.ci_high_pct,
            )
        mechanism = getattr(result, "mechanism", None)
    return HistoryEntry(
        selection=ref,
        decision=selection.decision,
        variant=selection.variant,
        result=selection.result,
        verdict=verdict,
        estimate_pct=estimate,
        ci_low_pct=low,
        ci_high_pct=high,
        experiment=selection.experiment,
        mechanism=mechanism,
        at_epoch=at,
        orphan=orphan,
    )


def history(root: str | Path, *, include_orphans: bool = False) -> ChampionHistory:
    """The chain from the pointer back along ``previous``; with ``include_orphans`` also Selections never
    pointed to."""
    store, target, tref = _open(root, None)
    cur = resolve_champion(store, target, tref)
    times = {line.id: line.at_epoch for line in store.ledger() if line.kind == "selection"}
    entries: list[HistoryEntry] = []
    seen: set[str] = set()
    ref = cur.selection_ref
    while ref is not None and ref.id not in seen:
        seen.add(ref.id)
        selection = read_selection(store, ref)
        entries.append(_entry(store, selection, ref, times.get(ref.id), False))
        ref = selection.previous
    if include_orphans:
        folder = store.root / "champion" / "selections"
        for path in sorted(folder.glob("sel-*.json")) if folder.is_dir() else []:
            sid = path.name[: -len(".json")]
            if sid in seen:
                continue
            data = store.read_bytes(selection_rel(sid))
            orphan_ref = RecordRef(id=sid, sha256=jsonio.sha256_hex(data))
            selection = read_selection(store, orphan_ref)
            entries.append(_entry(store, selection, orphan_ref, times.get(sid), True))
    return ChampionHistory(root=str(store.root), target=tref, current=cur.selection_ref, entries=entries)
