"""``gpuopt experiment init``: an Experiment request skeleton filled from a root's Target (root, Target
reference, newest passed baseline, claim layer, candidate kind, a contract the driver supports), with
``<FILL: ...>`` strings where only the author can answer. :func:`check_filled` refuses a request that
still holds one, so a half-edited skeleton never freezes an Experiment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import records
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.skeleton import RequestSkeleton

MARK = "<FILL: "


def _fill(what: str) -> str:
    return f"{MARK}{what}>"


def _paths(value: Any, at: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _paths(v, f"{at}.{k}" if at else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _paths(v, f"{at}[{i}]")]
    if isinstance(value, str) and value.startswith(MARK):
        return [f"{at}: {value[len(MARK) : -1]}"]
    return []


def check_filled(raw: Any) -> None:
    """Refuses a request that still holds a ``<FILL: ...>`` placeholder (``placeholder_unfilled``)."""
    left = _paths(raw)
    if left:
        where, what = left[0].split(": ", 1)
        raise InputError(
            "placeholder_unfilled",
            f"{len(left)} placeholder(s) of the skeleton are not filled, first {where} ({what})",
            path=where,
            expected=what,
            observed=f"{MARK}...>",
        )


def _passed(store: Store, operation: str) -> list[Any]:
    return [
        line
        for line in store.ledger()
        if line.kind == "result"
        and line.keys.get("operation") == operation
        and line.keys.get("verdict") == "passed"
    ]


def _contract(store: Store, same: bool) -> tuple[dict[str, Any], str]:
    """The contract the newest passed noise measurement ran under (so the Experiment's pairs share and
    rebuild what its A/A pairs did), else what the driver's lifecycle implies."""
    lifecycle = "same_process" if same else "isolated"
    passed = _passed(store, "noise")
    if passed:
        contract = getattr(records.read_request(store, passed[-1].id), "contract", None)
        if contract is not None and contract.lifecycle == lifecycle:
            shared, rebuilt = list(contract.shared_state), list(contract.rebuilt_state)
            note = f"contract: as the newest passed noise measurement {passed[-1].id}"
            return {"lifecycle": lifecycle, "shared_state": shared, "rebuilt_state": rebuilt}, note
    default = {
        "lifecycle": lifecycle,
        "shared_state": ["python_interpreter"] if same else [],
        "rebuilt_state": ["subject_module"] if same else [],
    }
    return default, f"contract.lifecycle: {lifecycle} (driver same_process: {same})"


def _baseline(store: Store) -> tuple[Any, str]:
    passed = _passed(store, "baseline")
    if not passed:
        return _fill(
            "the passed baseline's invocation id (run gpuopt baseline first)"
        ), "baseline: none passed yet"
    last = passed[-1]
    return {"invocation_id": last.id, "sha256": last.sha256}, f"baseline: newest passed {last.id}"


def experiment(root: str, *, cwd: Path) -> RequestSkeleton:
    """The skeleton of an Experiment request on ``root`` (as the request will name it, relative to cwd)."""
    store = Store.open(cwd / root)
    target, tref = targets.load(store)
    target = targets.optimizable(target)
    baseline, baseline_note = _baseline(store)
    same = target.driver.same_process
    contract, contract_note = _contract(store, same)
    request: dict[str, Any] = {
        "root": root,
        "target": tref.model_dump(),
        "baseline": baseline,
        "source_base": "original",
        "candidate": {"kind": target.original.kind, "path": _fill("the candidate's file or folder")},
        "change_scope": [_fill("a path (glob) of the original the candidate may change")],
        "claim_layer": target.claim_layer,
        "hypothesis": _fill("what the change does and why it should move the primary metric"),
        "mechanism": _fill("a slug naming the mechanism, e.g. vectorize-rows"),
        "rejection_scope": "implementation",
        "contract": contract,
        "screen": {
            "kind": "proxy",
            "minimum_pairs": 4,
            "reject_if": ["primary_regressed"],
            "claim": _fill("what the screen can show, e.g. the candidate is not slower on the cases"),
        },
        "opportunity_claim": {
            "quantified": False,
            "reason": _fill("why the claim is not quantified (or set quantified, inputs, coverage, ...)"),
            "boundary": {
                "region": _fill("the region the change affects"),
                "entry": _fill("where the region starts"),
                "exit": _fill("where it ends"),
                "phase": _fill("e.g. steady state after the warmups"),
                "shapes": [_fill("a shape the region runs on")],
            },
            "execution_form": {
                "form": _fill("how the region executes today"),
                "lowering": _fill("what it lowers to"),
                "dispatch": _fill("what dispatches it"),
                "fallback": _fill("its fallback path, or none"),
                "overlap": _fill("what it overlaps with, or none"),
            },
        },
        "premises": [],
    }
    filled = [
        f"root: {root}",
        f"target: {tref.id}",
        baseline_note,
        f"claim_layer: {target.claim_layer} (the Target's)",
        f"candidate.kind: {target.original.kind} (the original's)",
        contract_note,
    ]
    return RequestSkeleton(
        kind="gpuopt.request.experiment/v1",
        request=request,
        placeholders=_paths(request),
        filled=filled,
        out=None,
    )
