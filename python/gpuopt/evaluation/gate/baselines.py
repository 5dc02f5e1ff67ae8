"""``gpuopt gate save | list | show | delete``: named baselines of one artifact root.

A baseline binds what a later check compares with to the root's Target and to the runtime facts it was
measured under: the Target's observed runtime (host, driver, GPUs, required tools) and the runtime its
source results' driver reported (GPU names, driver, CUDA runtime, framework versions).
"""

from __future__ import annotations

from pathlib import Path

from gpuopt.errors import InputError
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.gate import captures as capture_baselines
from gpuopt.evaluation.gate import runtime, sources
from gpuopt.evaluation.gate import store as gates
from gpuopt.evaluation.records import read_result
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef, Role
from gpuopt.models.evaluation.gate import GateBaseline, GateName
from gpuopt.models.evaluation.target import Target
from gpuopt.models.gate import GateDeleteData, GateListData, GateSaveData, GateShowData, SavedBaseline


def open_root(root: str | Path) -> tuple[Store, Target, RecordRef]:
    store = Store.open(root)
    store.require_store()
    target, ref = targets.load(store)
    return store, targets.optimizable(target), ref


def target_facts(store: Store, target: Target, reported_from: list[str]) -> dict[str, str | None]:
    """The Target's observed facts, and the runtime its first source result's driver reported (else the
    Target's smoke's)."""
    facts = runtime.observed_facts(target.runtime_identity.observed)
    reported = target.runtime_identity.reported
    for inv_id in reported_from:
        found = read_result(store, inv_id)
        if found is not None and found[0].reported_runtime is not None:
            reported = found[0].reported_runtime
            break
    return {**facts, **runtime.reported_facts(reported)}


def summary_of(name: GateName, record: GateBaseline) -> SavedBaseline:
    s, c = record.samples, record.captures
    kind = "samples+captures" if s and c else "samples" if s else "captures"
    return SavedBaseline(
        name=name.name,
        baseline=name.baseline,
        saved_at_epoch=name.saved_at_epoch,
        target_id=record.target.id,
        kind=kind,
        variant_digest=None if s is None else s.variant.digest,
        calls=0 if s is None else len(s.calls),
        sessions=0 if s is None else len({call.session for call in s.calls}),
        captures=0 if c is None else len(c.files),
    )


def save(
    root: str | Path,
    name: str,
    *,
    sources_: list[str],
    role: Role | None,
    captures: list[str],
    replace: bool,
) -> GateSaveData:
    """Saves the calls of one variant from evaluation results (``sources_``: invocation ids) and/or
    capture files (``captures``: paths or ``cap:`` references) under ``name``."""
    gates.check_name(name)
    if not sources_ and not captures:
        raise InputError(
            "field_missing",
            "a baseline needs evaluation results (--from INVOCATION) or captures (--capture FILE)",
            path="from",
        )
    store, target, tref = open_root(root)
    samples = sources.samples(store, target, tref, sources_, role) if sources_ else None
    saved_captures = capture_baselines.freeze(store, captures) if captures else None
    core = {
        "format": "gpuopt.gate-baseline/v1",
        "target": tref.model_dump(),
        "samples": None if samples is None else samples.model_dump(mode="json"),
        "captures": None if saved_captures is None else saved_captures.model_dump(mode="json"),
        "runtime": target_facts(store, target, sources_),
    }
    record, ref, created = gates.publish(store, core)
    pointer, previous = gates.set_name(store, name, ref, replace=replace)
    saved = summary_of(pointer, record)
    lines = [f"{name} -> {ref.id} ({'new record' if created else 'existing record'})"]
    if samples is not None:
        lines.append(
            f"samples: {saved.calls} calls of {samples.role} {samples.variant.digest[:12]} from "
            f"{saved.sessions} result(s), {samples.plan.samples_per_call} samples per call, "
            f"{samples.plan.lifecycle}"
        )
    if saved_captures is not None:
        lines.append(f"captures: {saved.captures} {saved_captures.kind} capture(s)")
    if previous is not None:
        lines.append(f"replaced {previous.id}")
    return GateSaveData(saved=saved, created=created, previous=previous, summary=lines)


def listing(root: str | Path) -> GateListData:
    store, _, _ = open_root(root)
    out = []
    for name in gates.names(store):
        pointer = gates.read_name(store, name)
        out.append(summary_of(pointer, gates.read_baseline(store, pointer.baseline)))
    return GateListData(root=str(store.root), baselines=out)


def show(root: str | Path, name: str) -> GateShowData:
    store, _, _ = open_root(root)
    pointer = gates.read_name(store, name)
    record = gates.read_baseline(store, pointer.baseline)
    digests = [] if record.samples is None else [record.samples.variant.digest]
    digests += [] if record.captures is None else [f.object for f in record.captures.files]
    present = all(store.exists(f"objects/trees/{d}.json") for d in digests)
    return GateShowData(name=pointer, baseline=record, objects_present=present)


def delete(root: str | Path, name: str) -> GateDeleteData:
    store, _, _ = open_root(root)
    ref, removed = gates.delete(store, name)
    return GateDeleteData(name=name, baseline=ref, record_removed=removed)
