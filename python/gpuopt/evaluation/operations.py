"""Submitting a supervised verb, the same way for every one the operations registry lists with a builder
(``baseline``, ``noise``, ``screen``, ``target``, ``final-audit``, ``capture``; spec §3.3, §3.5).

:func:`run` validates the verb's request (its model in the registry), lets the verb's builder apply the
gates and build the frozen core (:mod:`gpuopt.evaluation.builders`, :mod:`gpuopt.evaluation.capture`), and
submits one supervised invocation — or, with ``dry_run``, returns the plan, the dedupe decision and the
expected duration, writing nothing. The plan a dry run shows is the plan that runs: both come from the same
frozen request.

Python twins of the CLI verbs: :func:`baseline`, :func:`noise`, :func:`screen`, :func:`target`,
:func:`final_audit` take the request (model, JSON bytes or dict) and return the command's data model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from gpuopt.errors import InputError
from gpuopt.evaluation import invocation, jsonio, plans, registry
from gpuopt.evaluation.outcome import outcome, outcome_lines
from gpuopt.evaluation.records import complete_result_refs, load_request, read_result
from gpuopt.evaluation.store import Store
from gpuopt.evaluation.summary import dry_run_summary, reference_line, result_summary
from gpuopt.models.evaluation.common import Record, ResultRef
from gpuopt.models.evaluation.evaluation_data import CallCounts, DryRun, Estimate, EvaluationData
from gpuopt.models.evaluation.invocation import EvidenceStep, InvocationResult, RequestCore
from gpuopt.models.evaluation.operations import (
    BaselineRequest,
    EvaluationRequestBase,
    FinalAuditRequest,
    NoiseRequest,
    ScreenRequest,
    TargetRequest,
)
from gpuopt.models.evaluation.target import Target

WAIT_MARGIN_S = 120.0


def _result_lines(result: InvocationResult, ref: ResultRef) -> list[str]:
    """The result's summary, then why it came out so, each case and each invalid pair (lines the summary
    already holds left out), then the record it is."""
    lines = result_summary(result)
    why = outcome(result)
    extra = [] if why is None else outcome_lines(why)[1:]
    return [*lines, *[x for x in extra if x.strip().removeprefix("why: ") not in lines], reference_line(ref)]


@dataclass(frozen=True)
class Built:
    """What a verb's builder returns: its typed core, ready to submit, with the store and Target it was
    built against, the conditional restore checks, and how the verb's summaries read for people."""

    store: Store
    target: Target
    core: RequestCore
    restore: list[EvidenceStep] = field(default_factory=list)
    dry_run_lines: Callable[[DryRun], list[str]] = dry_run_summary
    result_lines: Callable[[InvocationResult, ResultRef], list[str]] = _result_lines

    @property
    def steps(self) -> list[EvidenceStep]:
        return list(self.core.evidence_plan)

    def estimate(self) -> Estimate:
        plan = self.core.plan
        return plans.estimate(
            self.store,
            self.target,
            self.steps,
            samples_per_call=plan.samples_per_call,
            warmup_per_call=plan.warmup_per_call,
        )


Builder = Callable[[Any, Path], Built]


def parse(operation: str, data: bytes | dict[str, Any] | Record, cwd: Path) -> EvaluationRequestBase:
    """A request of ``operation``, strict; result references given by invocation id alone are completed
    from the store."""
    model = registry.get(operation).request_model()
    if isinstance(data, model):
        return cast("EvaluationRequestBase", data)
    what = f"{operation} request"
    if isinstance(data, bytes):
        return cast("EvaluationRequestBase", load_request(model, data, cwd=cwd, what=what))
    return cast("EvaluationRequestBase", jsonio.validate(model, complete_result_refs(data, cwd), what=what))


def _dry_run(built: Built, req: EvaluationRequestBase) -> DryRun:
    prepared = invocation.prepare(built.store.root, built.core)
    try:
        action, inv_id = invocation.decide(built.store, prepared.first, req.retry_of)
        dedupe: Any = action
    except InputError as exc:
        if exc.code != "retry_required":
            raise
        dedupe, inv_id = "retry_required", prepared.first
    now = time.time()
    limits = invocation.resolve_limits(req.limits, now)
    frozen = invocation.frozen_document(
        prepared, limits=limits, retry_of=req.retry_of, keep_workspace=req.keep_workspace, now=now
    )
    steps = built.steps
    counts = plans.role_counts(steps)
    return DryRun(
        request=frozen.model_dump(mode="json"),
        request_digest=prepared.digest,
        invocation_id=inv_id,
        dedupe=dedupe,
        evidence_plan=steps,
        restore_checks=built.restore,
        calls=CallCounts(total=len(steps), by_role=counts, restore_checks=len(built.restore)),  # type: ignore[arg-type]
        estimate=built.estimate(),
    )


def run(
    operation: str,
    data: bytes | dict[str, Any] | Record,
    *,
    cwd: Path | None = None,
    dry_run: bool = False,
    wait: bool = False,
    timeout_s: float | None = None,
    start: bool = True,
) -> Any:
    """Validates, gates and submits one invocation of a registered verb (or only plans it with
    ``dry_run``); returns an instance of the verb's data model (its registry entry's ``data``: which one
    depends on the entry, hence ``Any``; the twins below narrow it)."""
    cwd = Path.cwd() if cwd is None else cwd
    verb, supervised = registry.supervised(operation)
    if supervised.build is None:
        raise InputError(
            "operation_unknown", f"{operation} is not submitted from a request", path="operation"
        )
    req = parse(operation, data, cwd)
    build: Builder = registry.load(supervised.build)
    built = build(req, cwd)
    model = verb.data_model()
    if dry_run:
        plan = _dry_run(built, req)
        return model.model_validate(
            {
                "operation": operation,
                "dry_run": plan,
                "submission": None,
                "estimate": plan.estimate,
                "result_ref": None,
                "result": None,
                "summary": built.dry_run_lines(plan),
            }
        )
    estimate = built.estimate()
    sub = invocation.submit(
        built.store.root,
        built.core,
        limits=req.limits,
        retry_of=req.retry_of,
        keep_workspace=req.keep_workspace,
        start=start,
    )
    if wait:
        limit = timeout_s if timeout_s is not None else req.limits.operation_timeout_s + WAIT_MARGIN_S
        status = invocation.wait(built.store.root, sub.invocation_id, timeout_s=limit)
        sub = sub.model_copy(update={"status": status})
    found = read_result(built.store, sub.invocation_id) if sub.status.state == "completed" else None
    ref = None if found is None else ResultRef(invocation_id=sub.invocation_id, sha256=found[1])
    why = None if found is None else outcome(found[0])
    return model.model_validate(
        {
            "operation": operation,
            "dry_run": None,
            "submission": sub,
            "estimate": estimate,
            "result_ref": ref,
            "result": None if found is None else found[0],
            **({"outcome": why} if "outcome" in model.model_fields else {}),
            "summary": [f"{sub.invocation_id}: {sub.status.state}"]
            if found is None or ref is None
            else built.result_lines(found[0], ref),
        }
    )


def _evaluation(operation: str, data: Any, kw: dict[str, Any]) -> EvaluationData:
    out: EvaluationData = run(operation, data, **kw)
    return out


def baseline(data: bytes | dict[str, Any] | BaselineRequest, **kw: Any) -> EvaluationData:
    """``gpuopt baseline``: the original on every case, isolated; correctness first."""
    return _evaluation("baseline", data, kw)


def noise(data: bytes | dict[str, Any] | NoiseRequest, **kw: Any) -> EvaluationData:
    """``gpuopt noise``: A/A pairs of the original against itself (two materialized copies)."""
    return _evaluation("noise", data, kw)


def screen(data: bytes | dict[str, Any] | ScreenRequest, **kw: Any) -> EvaluationData:
    """``gpuopt screen``: the Experiment's short comparison (rejected or not_rejected, never passed)."""
    return _evaluation("screen", data, kw)


def target(data: bytes | dict[str, Any] | TargetRequest, **kw: Any) -> EvaluationData:
    """``gpuopt target``: the formal comparison (needs a non-rejecting screen; one formal attempt)."""
    return _evaluation("target", data, kw)


def final_audit(data: bytes | dict[str, Any] | FinalAuditRequest, **kw: Any) -> EvaluationData:
    """``gpuopt final-audit``: the original vs the current Champion, with restore checks."""
    return _evaluation("final_audit", data, kw)
