"""Reading a published Target: its id and its file hash (whether it can still run here is checked before a
launch, in :mod:`gpuopt.evaluation.invocation`)."""

from __future__ import annotations

from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.target import DiagnosticTarget, Target

IDENTITY_EXCLUDES = ("id", "readiness")


def identity_core(doc: dict[str, Any]) -> dict[str, Any]:
    """A Target's identity core: every field except ``id`` and ``readiness``."""
    return {k: v for k, v in doc.items() if k not in IDENTITY_EXCLUDES}


def target_id(core: dict[str, Any]) -> str:
    return "tgt-" + jsonio.digest(core)


def load(store: Store, expected: RecordRef | None = None) -> tuple[Target | DiagnosticTarget, RecordRef]:
    """The Target of a root, verified: its id hashes its identity core, its file matches ``expected``."""
    if not store.exists("target.json"):
        raise InputError(
            "target_not_found", f"{store.root} has no target.json", path=str(store.root / "target.json")
        )
    data = store.read_bytes("target.json")
    sha = jsonio.sha256_hex(data)
    if expected is not None and (sha != expected.sha256):
        raise InputError(
            "target_changed",
            "target.json no longer matches the ref",
            path="target.json",
            expected=expected.sha256,
            observed=sha,
        )
    raw = jsonio.parse(data, max_bytes=jsonio.MAX_RECORD_BYTES, what="target.json")
    model: type[Target] | type[DiagnosticTarget] = (
        DiagnosticTarget if isinstance(raw, dict) and raw.get("mode") == "diagnostic" else Target
    )
    try:
        target = jsonio.validate(model, raw, what="target.json")
    except InputError as exc:
        raise InputError("target_invalid", exc.message, path=exc.path, observed=exc.observed) from None
    computed = target_id(identity_core(raw))
    if computed != target.id:
        raise InputError(
            "target_invalid",
            "target.json's id is not the hash of its identity core",
            path="id",
            expected=computed,
            observed=target.id,
        )
    if expected is not None and expected.id != target.id:
        raise InputError(
            "target_changed",
            "the ref names another Target",
            path="id",
            expected=expected.id,
            observed=target.id,
        )
    return target, RecordRef(id=target.id, sha256=sha)


def optimizable(target: Target | DiagnosticTarget) -> Target:
    if isinstance(target, DiagnosticTarget):
        raise InputError(
            "target_not_optimizable",
            "a diagnostic Target runs no workload (no smoke, no invocation)",
            path="mode",
            observed="diagnostic",
        )
    return target
