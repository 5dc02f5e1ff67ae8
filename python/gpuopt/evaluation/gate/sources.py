"""Calls of one variant taken from completed evaluation results, for a samples baseline.

A source is a result of this Target that ended ``succeeded/valid`` (baseline, noise, screen, target, final
audit or an earlier gate). The role whose calls are saved defaults to the one that measured a single,
named variant: the original of a baseline, the reference of a noise A/A, the candidate of a comparison or
a gate. A call is kept when it completed, passed correctness, reported the Target's runtime identity and no
contamination rule fired in its window; its value per metric is the Target's within-call summary of its raw
samples (read from the result's ``samples.parquet``, verified against the result's hash).
"""

from __future__ import annotations

import io
from collections import defaultdict
from typing import Any, cast

from gpuopt import stats
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio, registry
from gpuopt.evaluation.records import invocation_rel, read_request, read_result
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef, ResultRef, Role
from gpuopt.models.evaluation.frozen import ContractCore
from gpuopt.models.evaluation.gate import BaselineCall, BaselinePlan, BaselineSamples
from gpuopt.models.evaluation.invocation import FrozenVariant, InvocationResult
from gpuopt.models.evaluation.target import Target

MAX_SAMPLES_BYTES = 1 << 30


def _source(store: Store, target_ref: RecordRef, inv_id: str) -> tuple[InvocationResult, ResultRef]:
    found = read_result(store, inv_id)
    if found is None:
        raise InputError(
            "result_not_found", f"no completed result {inv_id} in {store.root}", path="from", observed=inv_id
        )
    result, sha = found
    problem = None
    if result.operation not in registry.gate_roles():
        problem = f"a {result.operation} result holds no measured calls of a variant"
    elif result.target is None or result.target.id != target_ref.id:
        problem = "it belongs to another Target"
    elif result.execution_status != "succeeded" or result.measurement_validity != "valid":
        problem = f"it ended {result.execution_status}/{result.measurement_validity} ({result.stop_reason})"
    if problem is not None:
        raise InputError(
            "gate_source_invalid",
            f"{inv_id} cannot be a gate baseline's source: {problem}",
            path="from",
            expected="a succeeded/valid baseline, noise, screen, target, final-audit or gate result",
            observed=inv_id,
        )
    return result, ResultRef(invocation_id=inv_id, sha256=sha)


def _samples_table(store: Store, result: InvocationResult) -> Any:
    import polars as pl

    table = result.tables.samples
    if table is None:
        raise InputError("table_missing", f"{result.invocation_id} has no samples table")
    rel = invocation_rel(result.invocation_id, table.path)
    data = store.read_bytes(rel, max_bytes=MAX_SAMPLES_BYTES)
    if jsonio.sha256_hex(data) != table.sha256:
        raise InputError(
            "table_changed", f"{rel} no longer matches its result", path=rel, expected=table.sha256
        )
    return pl.read_parquet(io.BytesIO(data))


def _valid_calls(result: InvocationResult, role: str) -> set[int]:
    passed = {(c.call_index, c.role) for c in result.correctness if c.passed}
    return {
        r.call_index
        for r in result.call_receipts
        if r.status == "completed"
        and not r.contamination
        and r.identity_equal is not False
        and (r.call_index, role) in passed
    }


def _calls(store: Store, target: Target, result: InvocationResult, role: str) -> list[BaselineCall]:
    import polars as pl

    frame = _samples_table(store, result).filter(pl.col("role") == role)
    valid = _valid_calls(result, role)
    grouped: dict[tuple[int, str], dict[str, list[float]]] = defaultdict(dict)
    for (call, case, metric), part in frame.group_by(["call", "case", "metric"], maintain_order=True):
        grouped[(int(call), str(case))][str(metric)] = part.sort("index")["value"].to_list()
    out = []
    for (call, case), by_metric in sorted(grouped.items()):
        if call not in valid:
            continue
        values = {
            name: float(stats.summarize([samples], target.metrics[name].within_call)[0])
            for name, samples in sorted(by_metric.items())
            if name in target.metrics
        }
        out.append(BaselineCall(session=result.invocation_id, call_index=call, case_id=case, values=values))
    return out


def _plan(store: Store, inv_id: str) -> tuple[BaselinePlan, dict[str, FrozenVariant]]:
    request = read_request(store, inv_id)
    plan = request.plan
    contract = request.contract if isinstance(request, ContractCore) else None
    return (
        BaselinePlan(
            case_ids=list(plan.case_ids),
            pairs=plan.pairs or plan.calls_per_case or 1,
            samples_per_call=plan.samples_per_call,
            warmup_per_call=plan.warmup_per_call,
            lifecycle=plan.lifecycle,
            shared_state=[] if contract is None else list(contract.shared_state),
            rebuilt_state=[] if contract is None else list(contract.rebuilt_state),
        ),
        {str(k): v for k, v in request.variants.items()},
    )


def _same(first: BaselinePlan, other: BaselinePlan, inv_id: str) -> None:
    for field in ("samples_per_call", "warmup_per_call", "lifecycle", "shared_state", "rebuilt_state"):
        if getattr(first, field) != getattr(other, field):
            raise InputError(
                "gate_sources_differ",
                f"the sources measured differently: {field} of {inv_id} differs from the first source's",
                path=f"from.{field}",
                expected=str(getattr(first, field)),
                observed=str(getattr(other, field)),
            )


def samples(
    store: Store, target: Target, target_ref: RecordRef, inv_ids: list[str], role: Role | None
) -> BaselineSamples:
    """The calls of one variant from one or more results (each a session: a block when unpaired)."""
    plan: BaselinePlan | None = None
    variant: FrozenVariant | None = None
    chosen: Role | None = None
    refs: list[ResultRef] = []
    calls: list[BaselineCall] = []
    for inv_id in dict.fromkeys(inv_ids):
        result, ref = _source(store, target_ref, inv_id)
        this_plan, variants = _plan(store, inv_id)
        this_role = role or cast("Role", registry.gate_roles()[result.operation])
        if this_role not in variants:
            raise InputError(
                "gate_role_unknown",
                f"{inv_id} ({result.operation}) has no {this_role} role",
                path="role",
                expected=", ".join(sorted(variants)),
                observed=this_role,
            )
        if variant is None or plan is None:
            plan, variant, chosen = this_plan, variants[this_role], this_role
        else:
            _same(plan, this_plan, inv_id)
            if variants[this_role].digest != variant.digest:
                raise InputError(
                    "gate_sources_differ",
                    f"{inv_id}'s {this_role} is another variant than the first source's",
                    path="from",
                    expected=variant.digest,
                    observed=variants[this_role].digest,
                )
            cases = list(dict.fromkeys([*plan.case_ids, *this_plan.case_ids]))
            plan = plan.model_copy(update={"case_ids": cases, "pairs": max(plan.pairs, this_plan.pairs)})
        refs.append(ref)
        calls.extend(_calls(store, target, result, this_role))
    if plan is None or variant is None or chosen is None or not calls:
        raise InputError(
            "gate_source_invalid",
            "the sources hold no valid call of the variant (every call failed, was contaminated or changed "
            "identity)",
            path="from",
        )
    return BaselineSamples(variant=variant, role=chosen, plan=plan, sources=refs, calls=calls)
