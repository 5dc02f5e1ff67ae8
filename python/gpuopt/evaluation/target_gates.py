"""The target's gates (spec §3.5), read from the ledger: the screen gate (no rejecting screen of the
Experiment; one retry chain under the current tool identity ending ``not_rejected``) and one formal
attempt per Experiment."""

from __future__ import annotations

from gpuopt.errors import InputError
from gpuopt.evaluation import invocation
from gpuopt.evaluation.identity import tool_identity
from gpuopt.evaluation.records import read_request, read_result
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import ResultRef, Role
from gpuopt.models.evaluation.experiment import Experiment
from gpuopt.models.evaluation.frozen import BoundCore
from gpuopt.models.evaluation.invocation import FrozenVariant
from gpuopt.models.evaluation.operations import Binding


def _lines_of(store: Store, operation: str, exp_id: str) -> list[str]:
    seen: list[str] = []
    for line in store.ledger():
        if (
            line.kind == "invocation"
            and line.keys.get("operation") == operation
            and line.keys.get("experiment") == exp_id
            and line.id not in seen
        ):
            seen.append(line.id)
    return seen


def _result_verdicts(store: Store) -> dict[str, tuple[str, str]]:
    out = {}
    for line in store.ledger():
        if line.kind == "result":
            out[line.id] = (str(line.keys.get("verdict")), line.sha256)
    return out


def screen_gate(
    store: Store, exp: Experiment, variants: dict[Role, FrozenVariant], binding: Binding
) -> list[ResultRef]:
    """The target's screen gate (spec §3.5): no rejected screen of this Experiment under any tool identity;
    under the current tool identity, with the same variants and binding, one retry chain of one request
    digest ending in a completed ``not_rejected`` result."""
    verdicts = _result_verdicts(store)
    screens = _lines_of(store, "screen", exp.id)
    for inv_id in screens:
        if verdicts.get(inv_id, ("", ""))[0] == "rejected":
            raise InputError(
                "screen_rejected",
                f"screen {inv_id} of this Experiment rejected the candidate",
                path="experiment",
                observed=inv_id,
            )
    current = tool_identity()
    digests: dict[str, list[str]] = {}
    for inv_id in screens:
        request = read_request(store, inv_id)
        same = (
            request.tool_identity == current
            and request.variants == variants
            and isinstance(request, BoundCore)
            and request.reference_binding == binding
        )
        if same:
            digests.setdefault(request.request_digest, []).append(inv_id)
    if len(digests) > 1:
        raise InputError(
            "screen_attempt_changed",
            "this Experiment's screens under the current tool identity come from more than one request",
            path="experiment",
            observed=", ".join(sorted(digests)),
        )
    if not digests:
        raise InputError(
            "screen_required",
            "a completed not_rejected screen of this Experiment is required before its target",
            path="experiment",
        )
    chain = next(iter(digests.values()))
    latest = chain[-1]
    verdict = verdicts.get(latest)
    if verdict is None or verdict[0] != "not_rejected":
        raise InputError(
            "screen_required",
            f"the latest screen {latest} has not ended not_rejected",
            path="experiment",
            expected="not_rejected",
            observed="running or no result" if verdict is None else verdict[0],
        )
    return [ResultRef(invocation_id=latest, sha256=verdict[1])]


def one_formal_attempt(store: Store, exp: Experiment, digest: str) -> None:
    for inv_id in _lines_of(store, "target", exp.id):
        request = read_request(store, inv_id)
        if request.request_digest == digest:
            continue
        st = invocation.status(store.root, inv_id)
        found = read_result(store, inv_id)
        final = found is not None and invocation.is_final(found[0])
        if st.state in ("starting", "running") or final:
            raise InputError(
                "target_attempt_exists",
                f"Experiment {exp.id} already has a formal attempt ({inv_id}); a new try is a new "
                "Experiment with supersedes",
                path="experiment",
                observed=inv_id,
            )
