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

from gpuopt.errors import InputError
from gpuopt.evaluation import champion, jsonio
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.store import Store, ledger_keys
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.driver import NormalizedDriver
from gpuopt.models.evaluation.experiment import (
    Contract,
    Experiment,
    ExperimentOutcome,
    ExperimentRequest,
    OpportunityClaim,
    OpportunityComputed,
    OpportunityInput,
    ScreenDesign,
)
from gpuopt.models.evaluation.operations import BaselineResult
from gpuopt.models.evaluation.store import FileEntry, TreeManifest
from gpuopt.models.evaluation.target import Target

LAYERS = {"kernel": 0, "workload": 1, "serving": 2}
TOLERANCE = 1e-6


def experiment_rel(exp_id: str) -> str:
    from gpuopt import _native

    _native.validate_id("experiment", exp_id)
    return f"experiments/{exp_id}.json"


def load(store: Store, ref: RecordRef) -> Experiment:
    """An Experiment of this root, verified against its ref (``experiment_not_found``,
    ``experiment_changed``)."""
    rel = experiment_rel(ref.id)
    if not store.exists(rel):
        raise InputError("experiment_not_found", f"no Experiment {ref.id} in {store.root}", path=rel)
    try:
        exp, _ = store.read_record(rel, Experiment, what="experiment", sha256=ref.sha256)
    except InputError as exc:
        if exc.code == "record_changed":
            raise InputError(
                "experiment_changed",
                exc.message,
                path=rel,
                expected=exc.expected,
                observed=exc.observed,
            ) from None
        raise
    return exp


# ---- opportunity arithmetic --------------------------------------------------------------------------------


def _bad(code: str, message: str, path: str, expected: Any = None, observed: Any = None) -> InputError:
    def text(x: Any) -> str | None:
        return None if x is None else str(x)

    return InputError(code, message, path=path, expected=text(expected), observed=text(observed))


def _fraction(inp: OpportunityInput, path: str, *, closed_high: bool) -> float:
    unit = inp.unit
    if unit == "fraction":
        value = inp.value
    elif unit == "percent":
        value = inp.value / 100.0
    else:
        raise _bad(
            "opportunity_arithmetic_invalid",
            f"input {inp.name} has unit {unit}",
            f"{path}.unit",
            "fraction | percent",
            unit,
        )
    ok = (0 < value <= 1) if closed_high else (0 <= value < 1)
    if not ok:
        interval = "(0, 1]" if closed_high else "[0, 1)"
        raise _bad(
            "opportunity_arithmetic_invalid",
            f"input {inp.name} = {inp.value} {unit} is outside {interval}",
            f"{path}.value",
            interval,
            inp.value,
        )
    return value


def _saving(inp: OpportunityInput, form: str, path: str) -> float:
    if form == "saving":
        return _fraction(inp, path, closed_high=False)
    if form == "gain":
        g = _fraction_like(inp, path)
        if g < 0:
            raise _bad("opportunity_arithmetic_invalid", "a gain is >= 0", f"{path}.value", ">= 0", inp.value)
        return g / (1 + g)
    if inp.unit not in ("x", "ratio"):
        raise _bad(
            "opportunity_arithmetic_invalid",
            f"a speedup has unit x or ratio, not {inp.unit}",
            f"{path}.unit",
            "x | ratio",
            inp.unit,
        )
    if inp.value < 1:
        raise _bad("opportunity_arithmetic_invalid", "a speedup is >= 1", f"{path}.value", ">= 1", inp.value)
    return (inp.value - 1) / inp.value


def _fraction_like(inp: OpportunityInput, path: str) -> float:
    if inp.unit == "fraction":
        return inp.value
    if inp.unit == "percent":
        return inp.value / 100.0
    raise _bad(
        "opportunity_arithmetic_invalid",
        f"a gain has unit fraction or percent, not {inp.unit}",
        f"{path}.unit",
        "fraction | percent",
        inp.unit,
    )


def _check_source(store: Store, target: Target, inp: OpportunityInput, path: str) -> None:
    """An input's source must resolve in this root; an execution-map input must state the selected
    quantity of a map record of this root."""
    src = inp.source
    where = f"{path}.source"
    if src.kind == "external":
        if not src.text:
            raise _bad("opportunity_source_mismatch", "an external source needs text", f"{where}.text")
        return
    if src.kind == "execution_map":
        _check_map_source(store, target, inp, path)
        return
    ref = src.ref or {}
    if src.kind == "invocation":
        inv, sha = ref.get("invocation_id"), ref.get("sha256")
        ok = False
        if inv and sha:
            try:
                from gpuopt import _native

                _native.validate_id("invocation", inv)
                rel = f"invocations/{inv}/result.json"
                ok = store.exists(rel) and jsonio.sha256_hex(store.read_bytes(rel)) == sha
            except InputError:
                ok = False
        if not ok:
            raise _bad(
                "opportunity_source_mismatch",
                "the invocation source does not resolve to a result of this root",
                f"{where}.ref",
                "{invocation_id, sha256} of a result here",
                ref,
            )
        return
    digest = ref.get("digest", "")
    if len(digest) != 64 or not store.exists(f"objects/trees/{digest}.json"):
        raise _bad(
            "opportunity_source_mismatch",
            "the object source is not an object of this root",
            f"{where}.ref",
            "{digest} of an object here",
            ref,
        )


MAP_TOLERANCE = 1e-9


def _check_map_source(store: Store, target: Target, inp: OpportunityInput, path: str) -> None:
    """``source.ref`` = ``{id, sha256}`` of ``maps/<id>.json`` here; ``select`` = ``{group: {category,
    name}, quantity: share_of_window}``. The input's value (fraction, or percent / 100) must equal the
    selected quantity to 1e-9 relative; a ``same_boundary`` input's map must be bound to this Target."""
    from gpuopt import map as maps

    src = inp.source
    where = f"{path}.source"
    ref = src.ref or {}
    if set(ref) != {"id", "sha256"}:
        raise _bad(
            "opportunity_source_mismatch",
            "an execution-map source cites {id, sha256} of a map record",
            f"{where}.ref",
            "{id, sha256}",
            sorted(ref),
        )
    try:
        record = maps.load(store, RecordRef(id=ref["id"], sha256=ref["sha256"]))
    except (InputError, ValueError) as exc:
        raise _bad(
            "opportunity_source_mismatch",
            f"the execution map does not resolve in this root: {exc}",
            f"{where}.ref",
            "{id, sha256} of a map here",
            ref,
        ) from None
    if src.select is None:
        raise _bad(
            "opportunity_source_mismatch",
            "an execution-map source selects a group and a quantity",
            f"{where}.select",
            "{group: {category, name}, quantity: share_of_window}",
        )
    group = src.select.group
    selected = maps.share(record, group.category, group.name)
    if selected is None:
        raise _bad(
            "opportunity_source_mismatch",
            "the map has no such group (it must be grouped by category,name and the group non-empty)",
            f"{where}.select.group",
            "a group of the map",
            {"category": group.category, "name": group.name},
        )
    if inp.unit not in ("fraction", "percent"):
        raise _bad(
            "opportunity_source_mismatch",
            f"share_of_window is a fraction; the input has unit {inp.unit}",
            f"{path}.unit",
            "fraction | percent",
            inp.unit,
        )
    stated = inp.value / 100.0 if inp.unit == "percent" else inp.value
    if abs(stated - selected) > MAP_TOLERANCE * max(abs(stated), abs(selected)):
        raise _bad(
            "opportunity_source_mismatch",
            f"input {inp.name} states {stated!r} but the map's share_of_window is {selected!r}",
            f"{path}.value",
            selected,
            stated,
        )
    if inp.input_class == "same_boundary" and record.binding.target_id != target.id:
        raise _bad(
            "opportunity_boundary_mismatch",
            "a same_boundary input's execution map is bound to another Target",
            f"{where}.ref",
            target.id,
            record.binding.target_id,
        )


def _unquantified(claim: OpportunityClaim, path: str) -> OpportunityComputed:
    if not claim.reason:
        raise _bad("field_missing", "an unquantified claim needs a reason", f"{path}.reason")
    if claim.coverage is not None or claim.local_saving is not None:
        raise _bad(
            "opportunity_arithmetic_invalid",
            "an unquantified claim has no coverage or local saving",
            f"{path}.coverage",
        )
    return OpportunityComputed(
        f=None, r=None, ceiling_pct=None, required_saving=None, ceiling_vs_minimum="not_applicable"
    )


def _admissible(inputs: dict[str, tuple[int, OpportunityInput]], name: str, where: str, path: str) -> int:
    if name not in inputs:
        raise _bad("opportunity_arithmetic_invalid", f"no input named {name}", where, "an input name", name)
    k, inp = inputs[name]
    if inp.input_class == "diagnostic":
        raise _bad(
            "opportunity_input_not_admissible",
            f"input {inp.name} is diagnostic: it cannot feed f or r",
            f"{path}.inputs[{k}].class",
            "same_boundary | conservative_bound",
            "diagnostic",
        )
    return k


def _check_declared(claim: OpportunityClaim, ceiling: float, required: float, path: str) -> None:
    if claim.declared is None:
        return
    for name, declared, computed in (
        ("ceiling_pct", claim.declared.ceiling_pct, ceiling),
        ("required_saving", claim.declared.required_saving, required),
    ):
        if abs(declared - computed) > TOLERANCE * max(abs(computed), 1e-12):
            raise _bad(
                "opportunity_arithmetic_mismatch",
                f"declared {name} {declared} differs from the computed {computed:.9g}",
                f"{path}.declared.{name}",
                f"{computed:.9g}",
                declared,
            )


def _check_expected(claim: OpportunityClaim, ceiling: float, path: str) -> None:
    expected = claim.expected_effect_pct
    if expected is None:
        return
    if expected.low > expected.high:
        raise _bad(
            "opportunity_contradiction",
            "the expected effect's low is above its high",
            f"{path}.expected_effect_pct",
            "low <= high",
            f"{expected.low} > {expected.high}",
        )
    if expected.high > ceiling * (1 + TOLERANCE):
        raise _bad(
            "opportunity_contradiction",
            f"the expected effect {expected.high} % exceeds the Amdahl ceiling {ceiling:.6g} %",
            f"{path}.expected_effect_pct.high",
            f"<= {ceiling:.9g}",
            expected.high,
        )


def opportunity(
    claim: OpportunityClaim, target: Target, store: Store, *, path: str = "opportunity_claim"
) -> OpportunityComputed:
    """Computes f, r, the Amdahl ceiling and the required saving, and checks the claim (spec §2.4)."""
    inputs = {i.name: (k, i) for k, i in enumerate(claim.inputs)}
    if len(inputs) != len(claim.inputs):
        raise _bad("opportunity_arithmetic_invalid", "input names repeat", f"{path}.inputs")
    for k, inp in enumerate(claim.inputs):
        _check_source(store, target, inp, f"{path}.inputs[{k}]")
    if not claim.quantified:
        return _unquantified(claim, path)
    primary = target.metrics[target.objective.primary]
    if primary.kind in ("quantile", "other"):
        raise _bad(
            "opportunity_ceiling_not_applicable",
            f"time share does not bound a {primary.kind} primary",
            f"{path}.quantified",
            "a duration or throughput primary",
            primary.kind,
        )
    if claim.coverage is None or claim.local_saving is None:
        raise _bad("field_missing", "a quantified claim needs coverage and local_saving", f"{path}.coverage")
    fk = _admissible(inputs, claim.coverage.input, f"{path}.coverage.input", path)
    rk = _admissible(inputs, claim.local_saving.input, f"{path}.local_saving.input", path)
    f = _fraction(claim.inputs[fk], f"{path}.inputs[{fk}]", closed_high=True)
    r = _saving(claim.inputs[rk], claim.local_saving.form, f"{path}.inputs[{rk}]")
    ceiling = 100.0 * (1.0 / (1.0 - f * r) - 1.0)
    m = float(target.objective.minimum_effect_pct) / 100.0
    required = m / ((1.0 + m) * f)
    _check_declared(claim, ceiling, required, path)
    _check_expected(claim, ceiling, path)
    return OpportunityComputed(
        f=f,
        r=r,
        ceiling_pct=ceiling,
        required_saving=required,
        ceiling_vs_minimum="below" if ceiling < m * 100.0 else "above",
    )


# ---- contract, screen, premises ----------------------------------------------------------------------------


def check_contract(contract: Contract, target: Target, driver: NormalizedDriver, *, path: str) -> None:
    err = "contract_invalid"
    if contract.lifecycle == "isolated" and contract.shared_state:
        raise _bad(
            err, "an isolated comparison shares no state", f"{path}.shared_state", [], contract.shared_state
        )
    if contract.lifecycle == "same_process":
        if not contract.shared_state:
            raise _bad(err, "a same-process comparison declares its shared state", f"{path}.shared_state")
        if not driver.same_process:
            raise _bad(
                "capability_missing",
                "the Target's driver does not declare same_process: true",
                "driver.same_process",
                True,
                False,
            )
    both = sorted(set(contract.shared_state) & set(contract.rebuilt_state))
    if both:
        raise _bad(err, f"state {both[0]} is both shared and rebuilt", f"{path}.rebuilt_state", None, both)
    rule_metrics = {r.metric for r in target.accuracy.rules}
    seen: set[str] = set()
    for k, gate in enumerate(contract.gates):
        where = f"{path}.gates[{k}].metric"
        if gate.metric in seen or gate.metric in rule_metrics or gate.metric in contract.diagnostics:
            raise _bad(
                err,
                f"gate metric {gate.metric} repeats, is a Target accuracy metric or a diagnostic",
                where,
                "unique, not a Target rule metric, not a diagnostic",
                gate.metric,
            )
        if gate.cases != "all" and any(c not in target.test_set.case_ids for c in gate.cases):
            raise _bad(err, "a gate names an unknown case", f"{path}.gates[{k}].cases")
        seen.add(gate.metric)


def check_screen(screen: ScreenDesign) -> None:
    if "upper_bound_below_minimum" in screen.reject_if and screen.kind != "conservative_bound":
        raise _bad(
            "field_invalid",
            "reject_if upper_bound_below_minimum needs a conservative_bound screen",
            "screen.reject_if",
            "conservative_bound",
            screen.kind,
        )
    if len(set(screen.reject_if)) != len(screen.reject_if):
        raise _bad("field_invalid", "a reject_if condition repeats", "screen.reject_if")


def _record_ids(store: Store) -> set[str]:
    return {line.id for line in store.ledger()}


def check_premises(req: ExperimentRequest, store: Store) -> None:
    ids: set[str] | None = None
    for k, premise in enumerate(req.premises):
        where = f"premises[{k}].source"
        if premise.status == "cited" and not premise.source:
            raise _bad("premise_source_invalid", "a cited premise names its source", where)
        if premise.status == "measured_here":
            ids = _record_ids(store) if ids is None else ids
            if premise.source not in ids:
                raise _bad(
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
            raise _bad("path_unsafe", f"change scope {s!r} is not a safe relative path", f"change_scope[{k}]")
    outside = [p for p in changed if not any(p == s or p.startswith(s.rstrip("/") + "/") for s in scope)]
    if outside:
        raise _bad(
            "change_scope_exceeded",
            f"{len(outside)} changed paths lie outside the change scope",
            "change_scope",
            ", ".join(scope),
            ", ".join(outside[:20]) + (f" (+{len(outside) - 20} more)" if len(outside) > 20 else ""),
        )


# ---- create ------------------------------------------------------------------------------------------------


def _baseline(store: Store, req: ExperimentRequest, target_id: str) -> None:
    ref = req.baseline
    from gpuopt import _native

    _native.validate_id("invocation", ref.invocation_id)
    rel = f"invocations/{ref.invocation_id}/result.json"
    if not store.exists(rel):
        raise _bad(
            "baseline_required",
            f"no baseline result {ref.invocation_id} in this root",
            "baseline",
            "a baseline result",
            ref.invocation_id,
        )
    raw = jsonio.parse(store.read_bytes(rel), max_bytes=jsonio.MAX_RECORD_BYTES)
    if not isinstance(raw, dict) or raw.get("operation") != "baseline":
        raise _bad(
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
        raise _bad(
            "baseline_invalid",
            "the baseline must be of this Target, succeeded/valid/passed with cleanup confirmed",
            "baseline",
            "succeeded/valid/passed, cleanup confirmed",
            "/".join(facts) + f", cleanup {result.cleanup_status}",
        )


def _validate(req: ExperimentRequest, store: Store, target: Target) -> OpportunityComputed:
    _baseline(store, req, target.id)
    if LAYERS[req.claim_layer] > LAYERS[target.claim_layer]:
        raise _bad(
            "claim_layer_exceeds_target",
            f"claim layer {req.claim_layer} exceeds the Target's {target.claim_layer}",
            "claim_layer",
            f"<= {target.claim_layer}",
            req.claim_layer,
        )
    if req.candidate.kind != target.original.kind:
        raise _bad(
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
        load(store, req.supersedes)
    return opportunity(req.opportunity_claim, target, store)


def create(data: bytes | ExperimentRequest, *, cwd: Path | None = None) -> ExperimentOutcome:
    """Creates (or finds, if identical) an Experiment; see the module documentation."""
    cwd = Path.cwd() if cwd is None else cwd
    req = (
        data if isinstance(data, ExperimentRequest) else jsonio.load(ExperimentRequest, data, what="request")
    )
    store = Store.open(cwd / req.root)
    target_any, tref = targets.load(store, req.target)
    target = targets.optimizable(target_any)
    computed = _validate(req, store, target)
    current = champion.resolve(store, target, tref)
    base_digest = target.original.digest if req.source_base == "original" else current.variant.digest
    if req.source_base_digest is not None and req.source_base_digest != base_digest:
        raise _bad(
            "source_base_mismatch",
            f"the source base must be the {req.source_base} ({base_digest})",
            "source_base_digest",
            base_digest,
            req.source_base_digest,
        )
    exclude = target.source_rules.exclude if target.original.kind == "source" else []
    with store.lock("root", exclusive=False):
        frozen = store.freeze(cwd / req.candidate.path, exclude=exclude, limits=req.scan_limits)
        changed = changed_paths(store.manifest(base_digest), store.manifest(frozen.digest))
        if not changed:
            raise _bad(
                "candidate_unchanged",
                "the candidate is identical to its source base",
                "candidate.path",
                "a changed tree",
                frozen.digest,
            )
        if frozen.digest == current.variant.digest:
            raise _bad(
                "candidate_unchanged",
                "the candidate is the current Champion",
                "candidate.path",
                "a tree other than the current Champion",
                frozen.digest,
            )
        check_scope(changed, req.change_scope)
        core: dict[str, Any] = {
            "format": "gpuopt.experiment/v1",
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
