"""``check``: validate, attempt, freeze: the Target (optimization or diagnostic) is frozen in the work area
and renamed onto the root only once everything passed."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from gpuopt.errors import GpuoptError, InputError
from gpuopt.evaluation import driver as drv
from gpuopt.evaluation import formats, identity, jsonio
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.execution import ExecutionSpec
from gpuopt.evaluation.executor import SMOKE_SAMPLES
from gpuopt.evaluation.readiness.attempt import (
    Attempt,
    SmokeFailure,
    lineage,
    resolve,
    run_probe,
    smoke_error,
    storage_probe,
)
from gpuopt.evaluation.readiness.validate import (
    check_sampler,
    contamination_for,
    fail,
    idle_check,
    parse_request,
    validate,
)
from gpuopt.evaluation.store import Store, create_env_key, hash_tree
from gpuopt.models.evaluation.common import UNAVAILABLE, RecordRef
from gpuopt.models.evaluation.driver import DriverRequest, NormalizedDriver
from gpuopt.models.evaluation.invocation import EvidenceStep, FrozenVariant
from gpuopt.models.evaluation.readiness import (
    DiagnosticRequest,
    ReadinessPlan,
    ReadinessRequest,
    ReadinessResult,
    SmokeSummary,
)
from gpuopt.models.evaluation.target import DiagnosticTarget, StorageCheck, Target

# ---- check -------------------------------------------------------------------------------------------------


_Prepared = tuple[ReadinessRequest | DiagnosticRequest, Path, list[StorageCheck], dict[str, Any] | None]


def _prepare(data: bytes, cwd: Path) -> _Prepared:
    """Validation shared by the check and its dry run: nothing is written."""
    req = parse_request(data)
    validate(req)
    root = resolve(cwd, req.root)
    if root.exists() or root.is_symlink():
        raise fail(
            "root_exists",
            f"{root} already exists; a Target is frozen into a new root",
            "root",
            "absent",
            str(root),
        )
    if not root.parent.is_dir():
        raise fail("root_not_found", f"the parent folder {root.parent} does not exist", "root")
    probe = storage_probe(root.parent)
    contamination = None
    if isinstance(req, ReadinessRequest):
        contamination = contamination_for(req)
        if contamination["sampler"] != "disabled" and req.gpus:  # host signals need no GPU source
            check_sampler(contamination["sampler"])
    return req, root, probe, contamination


def plan(data: bytes, *, cwd: Path | None = None) -> ReadinessPlan:
    """``gpuopt readiness check --dry-run``: validates the request, probes the storage and hashes the
    inputs; runs and writes nothing."""
    cwd = Path.cwd() if cwd is None else cwd
    req, root, probe, _ = _prepare(data, cwd)
    return _plan(req, root, cwd, probe)


def check(data: bytes, *, cwd: Path | None = None) -> ReadinessResult:
    """Runs ``gpuopt readiness check`` on a request (JSON bytes); see the module documentation."""
    cwd = Path.cwd() if cwd is None else cwd
    req, root, probe, contamination = _prepare(data, cwd)
    attempt = Attempt(root)
    attempt.write_json("request.json", req)
    try:
        if isinstance(req, DiagnosticRequest):
            result = _diagnostic(req, attempt, cwd, probe)
        else:
            assert contamination is not None
            result = _optimization(req, attempt, cwd, probe, contamination)
    except SmokeFailure as exc:
        attempt.keep_failure(exc, stop_reason=exc.stop_reason, violations=exc.violations)
        raise InputError(
            exc.code, exc.message, path=exc.path, expected=exc.expected, observed=exc.observed
        ) from None
    except GpuoptError as exc:
        attempt.keep_failure(exc, stop_reason=None, violations=[])
        raise
    except BaseException as exc:
        attempt.keep_failure(
            InputError("internal_error", f"{type(exc).__name__}: {exc}"), stop_reason=None, violations=[]
        )
        raise
    attempt.remove()
    return result


def _plan(
    req: ReadinessRequest | DiagnosticRequest, root: Path, cwd: Path, probe: list[StorageCheck]
) -> ReadinessPlan:
    exclude = req.source_rules.exclude if req.original.kind == "source" else []
    objects = {
        "original": hash_tree(resolve(cwd, req.original.path), exclude=exclude, limits=req.scan_limits)
    }
    steps = [f"freeze the original ({req.original.kind}) into a work area beside {root}"]
    if isinstance(req, ReadinessRequest):
        objects["test_set"] = hash_tree(resolve(cwd, req.test_set.path), exclude=[], limits=req.scan_limits)
        if req.accuracy.reference_path is not None:
            objects["accuracy_reference"] = hash_tree(
                resolve(cwd, req.accuracy.reference_path), exclude=[], limits=req.scan_limits
            )
        steps += [
            "freeze the test set and accuracy reference, observe GPU and tool identity",
            f"run a {SMOKE_SAMPLES}-sample smoke call through the driver and check correctness",
        ]
    steps.append(f"publish the Target by renaming the work area onto {root}")
    return ReadinessPlan(
        dry_run=True,
        root=str(root),
        mode="diagnostic" if isinstance(req, DiagnosticRequest) else "optimization",
        claim_layer=req.claim_layer,
        request=req.model_dump(mode="json", by_alias=True),
        objects={k: v.digest for k, v in objects.items()},
        storage_probe=probe,
        steps=steps,
    )


def _freeze_common(req: ReadinessRequest | DiagnosticRequest, store: Store, cwd: Path) -> dict[str, Any]:
    exclude = req.source_rules.exclude if req.original.kind == "source" else []
    original = store.freeze(resolve(cwd, req.original.path), exclude=exclude, limits=req.scan_limits)
    return {"original": {"role": "original", "kind": req.original.kind, "digest": original.digest}}


def _optimization(
    req: ReadinessRequest,
    attempt: Attempt,
    cwd: Path,
    probe: list[StorageCheck],
    contamination: dict[str, Any],
) -> ReadinessResult:
    store = Store(attempt.root)
    frozen = _freeze_common(req, store, cwd)
    test_set = store.freeze(resolve(cwd, req.test_set.path), exclude=[], limits=req.scan_limits)
    reference = None
    if req.accuracy.reference_path is not None:
        reference = store.freeze(
            resolve(cwd, req.accuracy.reference_path), exclude=[], limits=req.scan_limits
        ).digest
    observed = identity.observe(sorted(req.gpus), req.required_tools)
    attempt.write_json("observed.json", observed)
    key = create_env_key(store)
    driver: NormalizedDriver = drv.normalize(req.driver, cwd=cwd, environ=os.environ, key=key)
    gpus = sorted(req.gpus)
    idle = idle_check(gpus, contamination)
    core: dict[str, Any] = {
        "format": formats.TARGET,
        "mode": "optimization",
        "claim_layer": req.claim_layer,
        "lineage": lineage(req, cwd),
        **frozen,
        "source_rules": req.source_rules.model_dump(),
        "test_set": {
            "digest": test_set.digest,
            "case_ids": list(req.test_set.case_ids),
            "case_weights": req.test_set.case_weights,
        },
        "accuracy": {"reference": reference, "rules": [r.model_dump() for r in req.accuracy.rules]},
        "metrics": {k: v.model_dump() for k, v in req.metrics.items()},
        "objective": req.objective.model_dump(),
        "driver": driver.model_dump(),
        "gpus": gpus,
        "statistics": req.statistics.model_dump(),
        "contamination": contamination,
    }
    provisional = targets.target_id(core)
    smoke_case = req.smoke.case_id or req.test_set.case_ids[0]
    probe_id = (
        "probe-"
        + jsonio.digest(
            {"provisional": provisional, "smoke": req.smoke.model_dump(), "driver": driver.identity}
        )[:24]
    )
    spec = ExecutionSpec(
        invocation_id=probe_id,
        operation="readiness_smoke",
        target_id=provisional,
        target=None,
        request_digest=jsonio.digest({"probe": probe_id, "provisional": provisional}),
        store_root=str(attempt.root),
        gpus=gpus,
        driver=driver,
        metrics=req.metrics,
        rules=req.accuracy.rules,
        test_set_digest=test_set.digest,
        accuracy_reference=reference,
        variants={"original": FrozenVariant(kind=req.original.kind, digest=frozen["original"]["digest"])},
        evidence_plan=[
            EvidenceStep(
                call_index=0,
                pair_index=None,
                case_id=smoke_case,
                order=None,
                roles=["original"],
                lifecycle="isolated",
            )
        ],
        samples_per_call=SMOKE_SAMPLES,
        warmup_per_call=0,
        seed=req.statistics.seed,
        shared_state=[],
        rebuilt_state=[],
        expected_reported=None,
        limits=req.smoke.limits,
        keep_workspace=False,
    )
    result = run_probe(attempt, spec)
    failed = smoke_error(result)
    if failed is not None:
        raise SmokeFailure(failed[0], None if result is None else result.stop_reason, failed[1])
    assert result is not None and result.reported_runtime is not None
    try:
        scope, notes = identity.cross_check(observed, result.reported_runtime, gpus)
    except InputError as exc:
        raise SmokeFailure(exc, "identity_mismatch", []) from None
    core["runtime_identity"] = {
        "observed": observed.model_dump(),
        "reported": result.reported_runtime.model_dump(),
        "attribution_scope": scope,
        "notes": notes,
    }
    smoke_dir = attempt.dir / "smoke"
    smoke_request = jsonio.load(
        DriverRequest, (smoke_dir / "calls" / "0000" / "request.json").read_bytes(), what="smoke request"
    )
    receipt = result.call_receipts[0]
    doc = {
        **core,
        "id": targets.target_id(core),
        "readiness": {
            "checked_at_epoch": time.time(),
            "storage_probe": [c.model_dump() for c in probe],
            "idle_check": idle.model_dump(),
            "smoke_request": smoke_request.model_dump(),
            "smoke_receipt": receipt.model_dump(),
            "bundle_digest": receipt.bundle,
            "correctness": [c.model_dump() for c in result.correctness],
        },
    }

    target = jsonio.validate(Target, doc, what="target")
    ref = _publish_target(store, attempt, target)
    return ReadinessResult(
        status="ready",
        root=str(attempt.final),
        target=ref,
        mode="optimization",
        claim_layer=req.claim_layer,
        attribution_scope=scope,
        identity_notes=notes,
        smoke=SmokeSummary(
            elapsed_s=receipt.elapsed_s, invocation_id=probe_id, correctness=result.correctness
        ),
        unavailable=[],
        objects={
            "original": target.original.digest,
            "test_set": test_set.digest,
            **({"accuracy_reference": reference} if reference else {}),
        },
        attempt=attempt.name,
    )


def _publish_target(store: Store, attempt: Attempt, target: Any) -> RecordRef:
    published = store.write_record("target.json", target)
    store.ledger_append(
        "target", target.id, published, {"mode": target.mode, "claim_layer": target.claim_layer}
    )
    attempt.publish()
    return RecordRef(id=target.id, sha256=published.sha256)


def _diagnostic(
    req: DiagnosticRequest, attempt: Attempt, cwd: Path, probe: list[StorageCheck]
) -> ReadinessResult:

    store = Store(attempt.root)
    frozen = _freeze_common(req, store, cwd)
    materials = []
    for m in req.materials:
        digest = store.freeze(resolve(cwd, m.path), exclude=[], limits=req.scan_limits).digest
        materials.append(
            {
                "kind": m.kind,
                "tool": m.tool,
                "tool_version": m.tool_version,
                "format": m.format,
                "digest": digest,
            }
        )
    observed = identity.observe([], [])
    attempt.write_json("observed.json", observed)
    unavailable = UNAVAILABLE.model_dump()
    in_container = bool(observed.host.container_hints)
    core: dict[str, Any] = {
        "format": formats.TARGET,
        "mode": "diagnostic",
        "claim_layer": "diagnostic",
        "lineage": lineage(req, cwd),
        **frozen,
        "source_rules": req.source_rules.model_dump(),
        "materials": materials,
        **{
            k: unavailable
            for k in (
                "test_set",
                "accuracy",
                "metrics",
                "objective",
                "driver",
                "gpus",
                "statistics",
                "contamination",
            )
        },
        "runtime_identity": {
            "observed": observed.model_dump(),
            "reported": unavailable,
            "attribution_scope": "frozen_runtime_only" if in_container else "identified_runtime",
            "notes": ["observed container hints; no driver reports a lineage"] if in_container else [],
        },
    }
    doc = {
        **core,
        "id": targets.target_id(core),
        "readiness": {
            "checked_at_epoch": time.time(),
            "storage_probe": [c.model_dump() for c in probe],
            "smoke": unavailable,
        },
    }
    target = jsonio.validate(DiagnosticTarget, doc, what="target")
    ref = _publish_target(store, attempt, target)
    return ReadinessResult(
        status="ready",
        root=str(attempt.final),
        target=ref,
        mode="diagnostic",
        claim_layer="diagnostic",
        attribution_scope=target.runtime_identity.attribution_scope,
        identity_notes=target.runtime_identity.notes,
        smoke=None,
        unavailable=[
            "test_set",
            "accuracy",
            "metrics",
            "objective",
            "driver",
            "gpus",
            "runtime_identity.reported",
            "statistics",
            "contamination",
        ],
        objects={
            "original": target.original.digest,
            **{f"material[{i}]": m["digest"] for i, m in enumerate(materials)},
        },
        attempt=attempt.name,
    )
