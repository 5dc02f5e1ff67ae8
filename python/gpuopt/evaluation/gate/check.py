"""``gpuopt gate check``: the current code (or current captures) against a saved baseline or the Champion.

1. The baseline must be of this root's Target (``gate_target_mismatch``). The runtime observed now must
   equal the one the baseline was saved under (or the Target's, against the Champion): any difference is
   the outcome ``identity_mismatch`` with the differing facts, and nothing runs.
2. Samples (a samples baseline, or the Champion): the current code is frozen with the Target's source rules
   and measured in a ``gate`` invocation (:mod:`.operation`), paired when the reference can be rerun, else
   unpaired; an invalid measurement from contamination is retried up to the budget. The Target's own checks
   (observed runtime before launch, the driver's reported runtime on every call) turn a change into
   ``identity_mismatch`` too.
3. Captures (a capture baseline and ``captures``): :mod:`.captures`.
4. The parts' outcomes combine (:func:`judge.combine`); the exit code is the outcome's
   (:data:`gpuopt.models.gate.EXIT_CODES`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gpuopt._files import check_output
from gpuopt.errors import InputError
from gpuopt.evaluation import identity
from gpuopt.evaluation.gate import baselines, judge, operation, outputs, runtime
from gpuopt.evaluation.gate import captures as capture_gate
from gpuopt.evaluation.gate import store as gates
from gpuopt.evaluation.gate.baselines import open_root
from gpuopt.evaluation.records import resolve_champion
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.gate import GateBaseline, GateOutcome, GateReason, GateSpec
from gpuopt.models.evaluation.invocation import FrozenVariant, Limits
from gpuopt.models.evaluation.store import ScanLimits
from gpuopt.models.evaluation.target import Target
from gpuopt.models.gate import EXIT_CODES, GateCheckData, GateOutputs, RuntimeDifference
from gpuopt.models.profile import Dimension

IDENTITY_CODES = ("identity_changed", "identity_mismatch")


@dataclass
class CheckRequest:
    """What ``gpuopt gate check`` was asked (the CLI's options, the Python twin's arguments)."""

    root: Path
    name: str | None = None
    against: Literal["baseline", "champion"] = "baseline"
    source: Path | None = None
    mode: Literal["auto", "paired", "unpaired"] = "auto"
    pairs: int | None = None
    seed: int | None = None
    retries: int = 2
    inconclusive: Literal["fail", "pass"] = "fail"
    captures: list[str] = field(default_factory=list)
    keys: Dimension | None = None
    fdr: float = 0.05
    marker: str | None = None
    timeout_s: float | None = None
    limits: Limits = field(default_factory=Limits)
    markdown: Path | None = None
    junit: Path | None = None
    step_summary: Path | None = None


@dataclass
class _State:
    """What the check found so far."""

    outcomes: list[GateOutcome] = field(default_factory=list)
    reasons: list[GateReason] = field(default_factory=list)
    differences: list[RuntimeDifference] = field(default_factory=list)


def _baseline(store: Store, tref: RecordRef, name: str) -> tuple[RecordRef, GateBaseline]:
    pointer = gates.read_name(store, name)
    record = gates.read_baseline(store, pointer.baseline)
    if record.target.id != tref.id:
        raise InputError(
            "gate_target_mismatch",
            f"the baseline {name!r} was measured under another Target than this root's",
            path="name",
            expected=tref.id,
            observed=record.target.id,
        )
    return pointer.baseline, record


def _reference(
    req: CheckRequest,
    store: Store,
    target: Target,
    tref: RecordRef,
    record: GateBaseline | None,
    ref: RecordRef | None,
) -> operation.Reference:
    if record is not None and ref is not None:
        samples = record.samples
        assert samples is not None
        return operation.reference_for_baseline(store, ref, samples.variant, samples.plan, req.mode)
    if req.mode == "unpaired":
        raise InputError(
            "gate_unpaired_unsupported",
            "a check against the Champion reruns it: it is always paired",
            path="mode",
        )
    cur = resolve_champion(store, target, tref)
    plan = operation.champion_plan(store, None if cur.selection is None else cur.selection.result)
    variant = FrozenVariant(kind=cur.variant.kind, digest=cur.variant.digest)
    spec = GateSpec(against="champion", baseline=None, selection=cur.selection_ref, mode="paired")
    return operation.Reference(variant=variant, plan=plan, spec=spec)


def _identity_before(state: _State, baseline_facts: dict[str, str | None], target: Target) -> bool:
    """Compares what is observed now with the baseline's facts; True when the check may run."""
    frozen = target.runtime_identity.observed
    now = identity.observe(target.gpus, [t.name for t in frozen.required_tools])
    found = runtime.differences(baseline_facts, runtime.observed_facts(now))
    if not found:
        return True
    state.differences.extend(found)
    state.outcomes.append("identity_mismatch")
    state.reasons.append(
        judge.reason(
            "identity_mismatch",
            f"{len(found)} runtime fact(s) differ from the baseline's: "
            + ", ".join(d.name for d in found[:10]),
            "identity_mismatch",
        )
    )
    return False


def _samples(
    req: CheckRequest,
    store: Store,
    target: Target,
    tref: RecordRef,
    record: GateBaseline | None,
    ref: RecordRef | None,
    state: _State,
) -> tuple[operation.Reference, str, operation.Attempts | None]:
    if req.source is None:
        raise InputError(
            "field_missing", "a samples check measures the current code: give --source PATH", path="source"
        )
    reference = _reference(req, store, target, tref, record, ref)
    frozen = store.freeze(req.source, exclude=list(target.source_rules.exclude), limits=ScanLimits())
    candidate = FrozenVariant(kind=target.original.kind, digest=frozen.digest)
    core = operation.build(store, target, reference, candidate, pairs=req.pairs, seed=req.seed)
    try:
        attempts = operation.run(store, core, retries=req.retries, limits=req.limits, timeout_s=req.timeout_s)
    except InputError as exc:
        if exc.code not in IDENTITY_CODES:
            raise
        state.outcomes.append("identity_mismatch")
        state.reasons.append(judge.reason(exc.code, exc.message, "identity_mismatch"))
        state.differences.append(
            RuntimeDifference(name=exc.path or exc.code, baseline=exc.expected, current=exc.observed)
        )
        return reference, frozen.digest, None
    result = attempts.result
    if result is None:
        state.outcomes.append("invalid")
        state.reasons.append(judge.reason("result_missing", "the gate invocation left no result", "invalid"))
        return reference, frozen.digest, attempts
    state.outcomes.append(result.judgment.outcome)
    state.reasons.extend(result.judgment.reasons)
    if len(attempts.items) > 1 or result.stop_reason in operation.RETRYABLE:
        state.reasons.append(
            judge.reason(
                "attempts",
                f"{len(attempts.items)} attempt(s) within a retry budget of {req.retries}: "
                + ", ".join(f"{a.invocation_id} {a.stop_reason}" for a in attempts.items),
                None,
            )
        )
    return reference, frozen.digest, attempts


def _reported(
    state: _State, baseline_facts: dict[str, str | None], attempts: operation.Attempts | None
) -> None:
    """The driver's reported runtime in this check against the baseline's."""
    result = None if attempts is None else attempts.result
    if result is None or result.reported_runtime is None:
        return
    found = runtime.differences(
        {k: v for k, v in baseline_facts.items() if k.startswith("reported.")},
        runtime.reported_facts(result.reported_runtime),
    )
    if found:
        state.differences.extend(found)
        state.outcomes.append("identity_mismatch")
        state.reasons.append(
            judge.reason(
                "identity_mismatch",
                "the driver reported another runtime than the baseline's",
                "identity_mismatch",
            )
        )


def check(req: CheckRequest) -> GateCheckData:
    """Runs one check (see the module docstring)."""
    store, target, tref = open_root(req.root)
    for output in (req.markdown, req.junit, req.step_summary):
        if output is not None:
            check_output(output)  # before the measurement: a FIFO, a device, a store's record
    record = ref = None
    if req.against == "baseline":
        if req.name is None:
            raise InputError("field_missing", "name the baseline to check against", path="name")
        ref, record = _baseline(store, tref, req.name)
        facts = record.runtime
    else:
        if req.name is not None:
            # The Champion is the root's one selection: a name given with it was ignored (exit 10
            # against the Champion while the user meant the baseline).
            raise InputError(
                "field_invalid",
                f"--against champion checks against the root's Champion: the name {req.name!r} is not used "
                "with it",
                path="name",
                expected="no NAME with --against champion, or --against baseline NAME",
            )
        facts = baselines.target_facts(store, target, [])
    state = _State()
    run_samples = req.against == "champion" or (record is not None and record.samples is not None)
    if record is not None and record.samples is None and not req.captures:
        raise InputError(
            "gate_captures_missing",
            "this baseline holds captures only: give the current captures (--capture FILE, k of them)",
            path="capture",
        )
    if req.captures and (record is None or record.captures is None):
        raise InputError(
            "gate_captures_missing",
            "the baseline holds no captures to compare --capture with",
            path="capture",
        )
    if req.keys is not None and not req.captures:
        raise InputError(
            "gate_captures_missing", "per-key gates (--keys) compare captures: give --capture", path="keys"
        )
    reference, digest, attempts, gate = None, None, None, None
    if _identity_before(state, facts, target):
        if run_samples:
            reference, digest, attempts = _samples(req, store, target, tref, record, ref, state)
            _reported(state, facts, attempts)
        if req.captures and record is not None and record.captures is not None:
            gate, why, found = capture_gate.check(
                store,
                record.captures,
                req.captures,
                m=float(target.objective.minimum_effect_pct),
                keys=req.keys,
                fdr=req.fdr,
                marker=req.marker,
            )
            state.outcomes.append(gate.outcome)
            state.reasons.extend(why)
            state.differences.extend(found)
    outcome = judge.combine(state.outcomes) if state.outcomes else "inconclusive"
    code = 0 if outcome == "inconclusive" and req.inconclusive == "pass" else EXIT_CODES[outcome]
    mode = reference.spec.mode if reference is not None else "captures" if gate is not None else "not_run"
    data = GateCheckData(
        outcome=outcome,
        exit_code=code,
        reasons=state.reasons,
        root=str(store.root),
        target=tref,
        against=req.against,
        baseline_name=req.name if req.against == "baseline" else None,
        baseline=ref,
        champion=None if reference is None or req.against != "champion" else reference.spec.selection,
        mode=mode,
        candidate_digest=digest,
        identity_differences=state.differences,
        attempts=[] if attempts is None else attempts.items,
        retry_budget=req.retries,
        result=None if attempts is None else attempts.result,
        captures=gate,
        outputs=GateOutputs(markdown=None, step_summary=None, junit=None),
        summary=[],
    )
    data = data.model_copy(update={"summary": outputs.summary_lines(data)})
    return outputs.write(
        data, markdown_path=req.markdown, junit_path=req.junit, step_summary=req.step_summary
    )
