"""``gpuopt capture``: validates a capture request, resolves its variants and profiler, builds the interleaved
plan and submits one supervised invocation (or, with ``dry_run``, returns the plan and writes nothing).

The plan: for each repeat, for each case, every variant once; the variant order rotates by one each repeat
(``original, candidate`` then ``candidate, original``), and every call of one repeat and case gets the same
input seed, so capture ``r`` of each variant saw the same input.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import invocation, jsonio, plans
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.capture import profilers
from gpuopt.evaluation.records import load_experiment, read_result, resolve_champion
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.capture import (
    VARIANT_ROLES,
    CaptureData,
    CaptureRequest,
    CaptureResult,
    CaptureVariantRef,
)
from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.invocation import EvidenceStep
from gpuopt.models.evaluation.operations import CallCounts, DryRun
from gpuopt.models.evaluation.target import Target

WAIT_MARGIN_S = 120.0


def parse(data: bytes | dict[str, Any] | CaptureRequest) -> CaptureRequest:
    if isinstance(data, CaptureRequest):
        return data
    if isinstance(data, bytes):
        return jsonio.load(CaptureRequest, data, what="capture request")
    return jsonio.validate(CaptureRequest, data, what="capture request")


def _variants(req: CaptureRequest, store: Store, target: Target, tref: RecordRef) -> list[CaptureVariantRef]:
    if len(set(req.plan.variants)) != len(req.plan.variants):
        raise InputError(
            "field_invalid",
            "each variant is captured once per repeat: list it once",
            path="plan.variants",
            observed=", ".join(req.plan.variants),
        )
    if ("candidate" in req.plan.variants) != (req.experiment is not None):
        raise InputError(
            "field_invalid",
            "the experiment names the candidate: give it exactly when variants holds 'candidate'",
            path="experiment",
            expected="experiment with variant candidate, or neither",
        )
    out: list[CaptureVariantRef] = []
    for name in req.plan.variants:
        if name == "original":
            kind, digest = target.original.kind, target.original.digest
        elif name == "champion":
            cur = resolve_champion(store, target, tref)
            kind, digest = cur.variant.kind, cur.variant.digest
        else:
            assert req.experiment is not None
            exp = load_experiment(store, req.experiment)
            if exp.target.id != tref.id:
                raise InputError(
                    "experiment_not_found", "the Experiment belongs to another Target", path="experiment.id"
                )
            kind, digest = exp.candidate.kind, exp.candidate.digest
        out.append(CaptureVariantRef(variant=name, role=VARIANT_ROLES[name], kind=kind, digest=digest))
    return out


def _check_driver(req: CaptureRequest, target: Target) -> None:
    if req.tool == "torch" and "torch_trace" not in (target.driver.capabilities or []):
        raise InputError(
            "driver_capability_missing",
            "the Target's driver does not declare the torch_trace capability: it cannot write a Kineto "
            "trace of its measured region, so tool torch cannot capture through it",
            path="tool",
            expected='driver.capabilities ["torch_trace"] in the readiness request (a new Target)',
            observed=", ".join(target.driver.capabilities or []) or "none",
        )


def steps(cases: list[str], variants: list[CaptureVariantRef], repeats: int) -> list[EvidenceStep]:
    """The interleaved plan (see the module docstring)."""
    out: list[EvidenceStep] = []
    for repeat in range(repeats):
        shift = repeat % len(variants)
        order = variants[shift:] + variants[:shift]
        for case in cases:
            for v in order:
                out.append(
                    EvidenceStep(
                        call_index=len(out),
                        pair_index=repeat,
                        case_id=case,
                        order=None,
                        roles=[v.role],
                        lifecycle="isolated",
                    )
                )
    return out


def build(req: CaptureRequest, cwd: Path) -> tuple[Store, Target, dict[str, Any]]:
    """The operation's frozen core (what :func:`invocation.submit` freezes)."""
    store = Store.open(cwd / req.root)
    target, tref = targets.load(store, req.target)
    target = targets.optimizable(target)
    _check_driver(req, target)
    variants = _variants(req, store, target, tref)
    profiler = profilers.find(req.tool, req.profiler, cwd)
    options, argv = profilers.settings(req, profiler)
    cases = plans.case_ids(target, req.plan.case_ids)
    plans.check_samples(target.metrics, req.plan.samples_per_call)
    plan = steps(cases, variants, req.plan.repeats)
    core = {
        "operation": "capture",
        "plan": {
            "case_ids": cases,
            "pairs": None,
            "calls_per_case": req.plan.repeats * len(variants),
            "samples_per_call": req.plan.samples_per_call,
            "warmup_per_call": req.plan.warmup_per_call,
            "seed": target.statistics.seed if req.plan.seed is None else req.plan.seed,
            "lifecycle": "isolated",
        },
        "evidence_plan": plans.step_dicts(plan),
        "variants": {v.role: {"kind": v.kind, "digest": v.digest} for v in variants},
        "capture": {
            "tool": req.tool,
            "profiler": None if profiler is None else profiler.model_dump(),
            "options": options,
            "argv": argv,
            "variants": [v.model_dump() for v in variants],
            "repeats": req.plan.repeats,
        },
        "experiment": None if req.experiment is None else req.experiment.model_dump(),
    }
    return store, target, core


def _dry_run(store: Store, target: Target, core: dict[str, Any], req: CaptureRequest) -> DryRun:
    prepared = invocation.prepare(store.root, core)
    try:
        action, inv_id = invocation.decide(store, prepared.first, req.retry_of)
        dedupe: Any = action
    except InputError as exc:
        if exc.code != "retry_required":
            raise
        dedupe, inv_id = "retry_required", prepared.first
    now = time.time()
    frozen = invocation.frozen_document(
        prepared,
        limits=invocation.resolve_limits(req.limits, now),
        retry_of=req.retry_of,
        keep_workspace=req.keep_workspace,
        now=now,
    )
    plan = [EvidenceStep.model_validate(s) for s in core["evidence_plan"]]
    return DryRun(
        request=frozen.model_dump(mode="json"),
        request_digest=prepared.digest,
        invocation_id=inv_id,
        dedupe=dedupe,
        evidence_plan=plan,
        restore_checks=[],
        calls=CallCounts(total=len(plan), by_role=plans.role_counts(plan), restore_checks=0),  # type: ignore[arg-type]
        estimate=_estimate(store, target, core),
    )


def _estimate(store: Store, target: Target, core: dict[str, Any]) -> Any:
    return plans.estimate(
        store,
        target,
        [EvidenceStep.model_validate(s) for s in core["evidence_plan"]],
        samples_per_call=core["plan"]["samples_per_call"],
        warmup_per_call=core["plan"]["warmup_per_call"],
    )


def summary(result: CaptureResult) -> list[str]:
    """One line per fact for people: the invocation, then per variant its captures."""
    lines = [
        f"{result.invocation_id} capture ({result.capture.tool}): {result.verdict} "
        f"({result.execution_status}/{result.measurement_validity}, stop {result.stop_reason})",
    ]
    profiler = result.capture.profiler
    if profiler is not None:
        lines.append(f"profiler {profiler.path} {profiler.version or '(version unknown)'}")
    for v in result.capture.variants:
        mine = [c for c in result.captures if c.variant == v.variant]
        took = [c for c in mine if c.status == "captured"]
        lines.append(
            f"{v.variant} ({v.digest[:12]}): {len(took)} captured of {len(mine)} run"
            + (f" — use cap:{result.invocation_id}/{v.variant}" if took else "")
        )
    for c in result.captures:
        if c.status != "captured":
            lines.append(f"capture {c.index} ({c.variant}, {c.case_id}): {c.status} {c.reason}: {c.message}")
    return lines


def run(
    data: bytes | dict[str, Any] | CaptureRequest,
    *,
    cwd: Path | None = None,
    dry_run: bool = False,
    wait: bool = False,
    timeout_s: float | None = None,
    start: bool = True,
) -> CaptureData:
    """Validates and submits one capture (or only plans it with ``dry_run``)."""
    cwd = Path.cwd() if cwd is None else cwd
    req = parse(data)
    store, target, core = build(req, cwd)
    if dry_run:
        plan = _dry_run(store, target, core, req)
        lines = [
            f"{plan.invocation_id} ({plan.dedupe}): {plan.calls.total} captures with {req.tool}, "
            f"{req.plan.repeats} per variant and case, interleaved",
            "profiler argv: " + " ".join(core["capture"]["argv"] or ["(none: the driver writes the trace)"]),
        ]
        names = {v["role"]: v["variant"] for v in core["capture"]["variants"]}
        lines += [
            f"  call {s.call_index}: {s.case_id} repeat {s.pair_index} {names[s.roles[0]]}"
            for s in plan.evidence_plan
        ]
        return CaptureData(
            operation="capture",
            dry_run=plan,
            submission=None,
            estimate=plan.estimate,
            result_ref=None,
            result=None,
            summary=lines,
        )
    sub = invocation.submit(
        store.root,
        core,
        limits=req.limits,
        retry_of=req.retry_of,
        keep_workspace=req.keep_workspace,
        start=start,
    )
    if wait:
        limit = timeout_s if timeout_s is not None else req.limits.operation_timeout_s + WAIT_MARGIN_S
        sub = sub.model_copy(
            update={"status": invocation.wait(store.root, sub.invocation_id, timeout_s=limit)}
        )
    found = read_result(store, sub.invocation_id) if sub.status.state == "completed" else None
    result = found[0] if found is not None and isinstance(found[0], CaptureResult) else None
    return CaptureData(
        operation="capture",
        dry_run=None,
        submission=sub,
        estimate=_estimate(store, target, core),
        result_ref=None if found is None else ResultRef(invocation_id=sub.invocation_id, sha256=found[1]),
        result=result,
        summary=summary(result) if result is not None else [f"{sub.invocation_id}: {sub.status.state}"],
    )
