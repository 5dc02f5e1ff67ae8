"""``gpuopt capture``: its builder (the operations registry names it) resolves the request's variants and
profiler and builds the interleaved plan; :func:`gpuopt.evaluation.operations.run` submits it as one
supervised invocation, like every evaluation (or, with ``dry_run``, returns the plan and writes nothing).

The plan: for each repeat, for each case, every variant once; the variant order rotates by one each repeat
(``original, candidate`` then ``candidate, original``), and every call of one repeat and case gets the same
input seed, so capture ``r`` of each variant saw the same input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from gpuopt.errors import InputError
from gpuopt.evaluation import operations, plans
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.capture import profilers
from gpuopt.evaluation.operations import Built
from gpuopt.evaluation.records import load_experiment, resolve_champion
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.capture import (
    VARIANT_ROLES,
    CaptureCore,
    CaptureData,
    CaptureRequest,
    CaptureResult,
    CaptureSettings,
    CaptureVariantRef,
)
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.evaluation_data import DryRun
from gpuopt.models.evaluation.invocation import EvidenceStep, FrozenVariant, Plan
from gpuopt.models.evaluation.target import Target


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


def build(req: CaptureRequest, cwd: Path) -> Built:
    """The operation's typed frozen core (what :func:`invocation.submit` freezes)."""
    store = Store.open(cwd / req.root)
    target, tref = targets.load(store, req.target)
    target = targets.optimizable(target)
    _check_driver(req, target)
    variants = _variants(req, store, target, tref)
    profiler = profilers.find(req.tool, req.profiler, cwd)
    options, argv = profilers.settings(req, profiler)
    cases = plans.case_ids(target, req.plan.case_ids)
    plans.check_samples(target.metrics, req.plan.samples_per_call)
    core = CaptureCore(
        operation="capture",
        plan=Plan(
            case_ids=cases,
            pairs=None,
            calls_per_case=req.plan.repeats * len(variants),
            samples_per_call=req.plan.samples_per_call,
            warmup_per_call=req.plan.warmup_per_call,
            seed=target.statistics.seed if req.plan.seed is None else req.plan.seed,
            lifecycle="isolated",
        ),
        evidence_plan=steps(cases, variants, req.plan.repeats),
        variants={v.role: FrozenVariant(kind=v.kind, digest=v.digest) for v in variants},
        capture=CaptureSettings(
            tool=req.tool,
            profiler=profiler,
            options=options,
            argv=argv,
            variants=variants,
            repeats=req.plan.repeats,
        ),
        experiment=req.experiment,
    )
    return Built(
        store,
        target,
        core,
        dry_run_lines=lambda plan: dry_run_lines(req, core, plan),
        result_lines=lambda result, _ref: summary(cast("CaptureResult", result)),
    )


def dry_run_lines(req: CaptureRequest, core: CaptureCore, plan: DryRun) -> list[str]:
    """The plan for people: the captures, the profiler's argv, one line per call."""
    names = {v.role: v.variant for v in core.capture.variants}
    return [
        f"{plan.invocation_id} ({plan.dedupe}): {plan.calls.total} captures with {req.tool}, "
        f"{req.plan.repeats} per variant and case, interleaved",
        "profiler argv: " + " ".join(core.capture.argv or ["(none: the driver writes the trace)"]),
        *(
            f"  call {s.call_index}: {s.case_id} repeat {s.pair_index} {names[s.roles[0]]}"
            for s in plan.evidence_plan
        ),
    ]


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


def run(data: bytes | dict[str, Any] | CaptureRequest, **kw: Any) -> CaptureData:
    """``gpuopt capture``: validates and submits one capture (or only plans it with ``dry_run``); the
    keywords of :func:`gpuopt.evaluation.operations.run`."""
    out: CaptureData = operations.run("capture", data, **kw)
    return out
