"""``gpuopt experiment``: freeze one candidate against the current Champion with its comparison contract,
screen design, opportunity claim and premises (spec §2.4, §3.4).

The candidate is frozen with the Target's source rules; its changed paths are computed against the source
base (the original or the current Champion) and must lie inside the declared change scope. The opportunity
claim's arithmetic (coverage f, local saving r, the Amdahl ceiling, the saving the region would need) and its
explicit contradictions are checked; whether the claim is worth pursuing is never judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuopt import _native
from gpuopt.evaluation import formats, jsonio
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.opportunity import LAYERS, bad, opportunity
from gpuopt.evaluation.records import (
    complete_result_refs,
    experiment_rel,
    load_experiment,
    resolve_champion,
)
from gpuopt.evaluation.skeleton import check_filled
from gpuopt.evaluation.store import Store, hash_tree_manifest, ledger_keys
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.driver import NormalizedDriver
from gpuopt.models.evaluation.experiment import (
    Contract,
    Experiment,
    ExperimentOutcome,
    ExperimentRequest,
    OpportunityComputed,
    ScreenDesign,
)
from gpuopt.models.evaluation.operations import BaselineResult
from gpuopt.models.evaluation.store import FileEntry, TreeManifest
from gpuopt.models.evaluation.target import Target

# ---- contract, screen, premises ----------------------------------------------------------------------------


def check_contract(contract: Contract, target: Target, driver: NormalizedDriver, *, path: str) -> None:
    err = "contract_invalid"
    if contract.lifecycle == "isolated" and contract.shared_state:
        raise bad(
            err, "an isolated comparison shares no state", f"{path}.shared_state", [], contract.shared_state
        )
    if contract.lifecycle == "same_process":
        if not contract.shared_state:
            raise bad(err, "a same-process comparison declares its shared state", f"{path}.shared_state")
        if not driver.same_process:
            raise bad(
                "capability_missing",
                "the Target's driver does not declare same_process: true",
                "driver.same_process",
                True,
                False,
            )
    both = sorted(set(contract.shared_state) & set(contract.rebuilt_state))
    if both:
        raise bad(err, f"state {both[0]} is both shared and rebuilt", f"{path}.rebuilt_state", None, both)
    rule_metrics = {r.metric for r in target.accuracy.rules}
    seen: set[str] = set()
    for k, gate in enumerate(contract.gates):
        where = f"{path}.gates[{k}].metric"
        if gate.metric in seen or gate.metric in rule_metrics or gate.metric in contract.diagnostics:
            raise bad(
                err,
                f"gate metric {gate.metric} repeats, is a Target accuracy metric or a diagnostic",
                where,
                "unique, not a Target rule metric, not a diagnostic",
                gate.metric,
            )
        if gate.cases != "all" and any(c not in target.test_set.case_ids for c in gate.cases):
            raise bad(err, "a gate names an unknown case", f"{path}.gates[{k}].cases")
        seen.add(gate.metric)


def check_screen(screen: ScreenDesign) -> None:
    if "upper_bound_below_minimum" in screen.reject_if and screen.kind != "conservative_bound":
        raise bad(
            "field_invalid",
            "reject_if upper_bound_below_minimum needs a conservative_bound screen",
            "screen.reject_if",
            "conservative_bound",
            screen.kind,
        )
    if len(set(screen.reject_if)) != len(screen.reject_if):
        raise bad("field_invalid", "a reject_if condition repeats", "screen.reject_if")


def _record_ids(store: Store) -> set[str]:
    return {line.id for line in store.ledger()}


def check_premises(req: ExperimentRequest, store: Store) -> None:
    ids: set[str] | None = None
    for k, premise in enumerate(req.premises):
        where = f"premises[{k}].source"
        if premise.status == "cited" and not premise.source:
            raise bad("premise_source_invalid", "a cited premise names its source", where)
        if premise.status == "measured_here":
            ids = _record_ids(store) if ids is None else ids
            if premise.source not in ids:
                raise bad(
                    "premise_source_invalid",
                    "a measured_here premise names a record id of this root",
                    where,
                    "a record id in the ledger",
                    premise.source,
                )


# ---- changed paths -----------------------------------------------------------------------------------------


def _entries(manifest: TreeManifest) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for e in manifest.entries:
        if isinstance(e, FileEntry):
            out[e.path] = ("file", e.mode, e.size_bytes, e.sha256)
        else:
            out[e.path] = ("directory", e.mode)
    return out


def changed_paths(base: TreeManifest, candidate: TreeManifest) -> list[str]:
    """Paths whose entry (kind, mode, size, sha256) differs: added, removed or modified."""
    a, b = _entries(base), _entries(candidate)
    return sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p))


def _safe(path: str) -> bool:
    parts = path.split("/")
    return not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def check_scope(changed: list[str], scope: list[str]) -> None:
    for k, s in enumerate(scope):
        if not _safe(s):
            raise bad("path_unsafe", f"change scope {s!r} is not a safe relative path", f"change_scope[{k}]")
    outside = [p for p in changed if not any(p == s or p.startswith(s.rstrip("/") + "/") for s in scope)]
    if outside:
        raise bad(
            "change_scope_exceeded",
            f"{len(outside)} changed paths lie outside the change scope",
            "change_scope",
            ", ".join(scope),
            ", ".join(outside[:20]) + (f" (+{len(outside) - 20} more)" if len(outside) > 20 else ""),
        )


# ---- create ------------------------------------------------------------------------------------------------


def _baseline(store: Store, req: ExperimentRequest, target_id: str) -> None:
    ref = req.baseline

    _native.validate_id("invocation", ref.invocation_id)
    rel = f"invocations/{ref.invocation_id}/result.json"
    if not store.exists(rel):
        raise bad(
            "baseline_required",
            f"no baseline result {ref.invocation_id} in this root",
            "baseline",
            "a baseline result",
            ref.invocation_id,
        )
    raw = jsonio.parse(store.read_bytes(rel), max_bytes=jsonio.MAX_RECORD_BYTES)
    if not isinstance(raw, dict) or raw.get("operation") != "baseline":
        raise bad(
            "baseline_invalid",
            "the ref is not a baseline result",
            "baseline",
            "baseline",
            raw.get("operation"),
        )
    result, _ = store.read_record(rel, BaselineResult, what="baseline result", sha256=ref.sha256)
    facts = (result.execution_status, result.measurement_validity, result.verdict)
    if (
        facts != ("succeeded", "valid", "passed")
        or result.cleanup_status != "confirmed"
        or result.target is None
        or result.target.id != target_id
    ):
        raise bad(
            "baseline_invalid",
            "the baseline must be of this Target, succeeded/valid/passed with cleanup confirmed",
            "baseline",
            "succeeded/valid/passed, cleanup confirmed",
            "/".join(facts) + f", cleanup {result.cleanup_status}",
        )


def _validate(req: ExperimentRequest, store: Store, target: Target) -> OpportunityComputed:
    _baseline(store, req, target.id)
    if LAYERS[req.claim_layer] > LAYERS[target.claim_layer]:
        raise bad(
            "claim_layer_exceeds_target",
            f"claim layer {req.claim_layer} exceeds the Target's {target.claim_layer}",
            "claim_layer",
            f"<= {target.claim_layer}",
            req.claim_layer,
        )
    if req.candidate.kind != target.original.kind:
        raise bad(
            "variant_kind_mismatch",
            "a candidate's kind must equal the original's",
            "candidate.kind",
            target.original.kind,
            req.candidate.kind,
        )
    check_contract(req.contract, target, target.driver, path="contract")
    check_screen(req.screen)
    check_premises(req, store)
    if req.supersedes is not None:
        load_experiment(store, req.supersedes)
    return opportunity(req.opportunity_claim, target, store)


def create(
    data: bytes | ExperimentRequest, *, cwd: Path | None = None, dry_run: bool = False
) -> ExperimentOutcome:
    """Creates (or finds, if identical) an Experiment; see the module documentation. A dry run checks the
    same things and computes the same id, hashing the candidate without storing it: it writes nothing
    (``created`` then says whether a real run would create the record)."""
    cwd = Path.cwd() if cwd is None else cwd
    if isinstance(data, ExperimentRequest):
        req = data
    else:
        raw = jsonio.parse(data, what="request")
        check_filled(raw)  # a skeleton of `gpuopt experiment init` not fully edited
        req = jsonio.validate(ExperimentRequest, complete_result_refs(raw, cwd), what="request")
    store = Store.open(cwd / req.root)
    target_any, tref = targets.load(store, req.target)
    target = targets.optimizable(target_any)
    computed = _validate(req, store, target)
    current = resolve_champion(store, target, tref)
    base_digest = target.original.digest if req.source_base == "original" else current.variant.digest
    if req.source_base_digest is not None and req.source_base_digest != base_digest:
        raise bad(
            "source_base_mismatch",
            f"the source base must be the {req.source_base} ({base_digest})",
            "source_base_digest",
            base_digest,
            req.source_base_digest,
        )
    exclude = target.source_rules.exclude if target.original.kind == "source" else []
    with store.lock("root", exclusive=False):
        if dry_run:
            frozen, manifest = hash_tree_manifest(
                cwd / req.candidate.path, exclude=exclude, limits=req.scan_limits
            )
        else:
            frozen = store.freeze(cwd / req.candidate.path, exclude=exclude, limits=req.scan_limits)
            manifest = store.manifest(frozen.digest)
        changed = changed_paths(store.manifest(base_digest), manifest)
        if not changed:
            raise bad(
                "candidate_unchanged",
                "the candidate is identical to its source base",
                "candidate.path",
                "a changed tree",
                frozen.digest,
            )
        if frozen.digest == current.variant.digest:
            raise bad(
                "candidate_unchanged",
                "the candidate is the current Champion",
                "candidate.path",
                "a tree other than the current Champion",
                frozen.digest,
            )
        check_scope(changed, req.change_scope)
        core: dict[str, Any] = {
            "format": formats.EXPERIMENT,
            "target": tref.model_dump(),
            "baseline": req.baseline.model_dump(),
            "reference": current.at_creation().model_dump(),
            "source_base": {"of": req.source_base, "digest": base_digest},
            "candidate": {"role": "candidate", "kind": req.candidate.kind, "digest": frozen.digest},
            "changed_paths": changed,
            "change_scope": sorted(set(req.change_scope)),
            "claim_layer": req.claim_layer,
            "hypothesis": req.hypothesis,
            "mechanism": req.mechanism,
            "rejection_scope": req.rejection_scope,
            "supersedes": None if req.supersedes is None else req.supersedes.model_dump(),
            "contract": req.contract.model_dump(),
            "screen": req.screen.model_dump(),
            "opportunity_claim": {
                **req.opportunity_claim.model_dump(by_alias=True),
                "computed": computed.model_dump(),
            },
            "premises": [p.model_dump() for p in req.premises],
        }
        exp_id = "exp-" + jsonio.digest(core)
        experiment = jsonio.validate(Experiment, {**core, "id": exp_id}, what="experiment")
        if dry_run:
            return ExperimentOutcome(
                dry_run=True,
                created=not store.exists(experiment_rel(exp_id)),
                experiment=RecordRef(id=exp_id, sha256=jsonio.sha256_hex(jsonio.record_bytes(experiment))),
                candidate=experiment.candidate,
                changed_paths=changed,
                reference=experiment.reference,
                mechanism=experiment.mechanism,
                opportunity=computed,
                blobs_new=0,
            )
        published = store.write_record(experiment_rel(exp_id), experiment)
        if published.created:
            store.ledger_append(
                "experiment", exp_id, published, ledger_keys(experiment.model_dump(mode="json"))
            )
    return ExperimentOutcome(
        created=published.created,
        experiment=RecordRef(id=exp_id, sha256=published.sha256),
        candidate=experiment.candidate,
        changed_paths=changed,
        reference=experiment.reference,
        mechanism=experiment.mechanism,
        opportunity=computed,
        blobs_new=frozen.blobs_new,
    )
