"""An Experiment's opportunity arithmetic (spec §2.7): the claim's inputs (fractions, savings, a map's share
of a window), their sources in this root, and the ceiling and required effect they imply."""

from __future__ import annotations

from typing import Any

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.experiment import (
    OpportunityClaim,
    OpportunityComputed,
    OpportunityInput,
)
from gpuopt.models.evaluation.target import Target

LAYERS = {"kernel": 0, "workload": 1, "serving": 2}
TOLERANCE = 1e-6


# ---- opportunity arithmetic --------------------------------------------------------------------------------


def bad(code: str, message: str, path: str, expected: Any = None, observed: Any = None) -> InputError:
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
        raise bad(
            "opportunity_arithmetic_invalid",
            f"input {inp.name} has unit {unit}",
            f"{path}.unit",
            "fraction | percent",
            unit,
        )
    ok = (0 < value <= 1) if closed_high else (0 <= value < 1)
    if not ok:
        interval = "(0, 1]" if closed_high else "[0, 1)"
        raise bad(
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
            raise bad("opportunity_arithmetic_invalid", "a gain is >= 0", f"{path}.value", ">= 0", inp.value)
        return g / (1 + g)
    if inp.unit not in ("x", "ratio"):
        raise bad(
            "opportunity_arithmetic_invalid",
            f"a speedup has unit x or ratio, not {inp.unit}",
            f"{path}.unit",
            "x | ratio",
            inp.unit,
        )
    if inp.value < 1:
        raise bad("opportunity_arithmetic_invalid", "a speedup is >= 1", f"{path}.value", ">= 1", inp.value)
    return (inp.value - 1) / inp.value


def _fraction_like(inp: OpportunityInput, path: str) -> float:
    if inp.unit == "fraction":
        return inp.value
    if inp.unit == "percent":
        return inp.value / 100.0
    raise bad(
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
            raise bad("opportunity_source_mismatch", "an external source needs text", f"{where}.text")
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
                _native.validate_id("invocation", inv)
                rel = f"invocations/{inv}/result.json"
                ok = store.exists(rel) and jsonio.sha256_hex(store.read_bytes(rel)) == sha
            except InputError:
                ok = False
        if not ok:
            raise bad(
                "opportunity_source_mismatch",
                "the invocation source does not resolve to a result of this root",
                f"{where}.ref",
                "{invocation_id, sha256} of a result here",
                ref,
            )
        return
    digest = ref.get("digest", "")
    if len(digest) != 64 or not store.exists(f"objects/trees/{digest}.json"):
        raise bad(
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
    from gpuopt import map as maps  # numpy and polars, only for a map-sourced input

    src = inp.source
    where = f"{path}.source"
    ref = src.ref or {}
    if set(ref) != {"id", "sha256"}:
        raise bad(
            "opportunity_source_mismatch",
            "an execution-map source cites {id, sha256} of a map record",
            f"{where}.ref",
            "{id, sha256}",
            sorted(ref),
        )
    try:
        record = maps.load(store, RecordRef(id=ref["id"], sha256=ref["sha256"]))
    except (InputError, ValueError) as exc:
        raise bad(
            "opportunity_source_mismatch",
            f"the execution map does not resolve in this root: {exc}",
            f"{where}.ref",
            "{id, sha256} of a map here",
            ref,
        ) from None
    if src.select is None:
        raise bad(
            "opportunity_source_mismatch",
            "an execution-map source selects a group and a quantity",
            f"{where}.select",
            "{group: {category, name}, quantity: share_of_window}",
        )
    group = src.select.group
    selected = maps.share(record, group.category, group.name)
    if selected is None:
        raise bad(
            "opportunity_source_mismatch",
            "the map has no such group (it must be grouped by category,name and the group non-empty)",
            f"{where}.select.group",
            "a group of the map",
            {"category": group.category, "name": group.name},
        )
    if inp.unit not in ("fraction", "percent"):
        raise bad(
            "opportunity_source_mismatch",
            f"share_of_window is a fraction; the input has unit {inp.unit}",
            f"{path}.unit",
            "fraction | percent",
            inp.unit,
        )
    stated = inp.value / 100.0 if inp.unit == "percent" else inp.value
    if abs(stated - selected) > MAP_TOLERANCE * max(abs(stated), abs(selected)):
        raise bad(
            "opportunity_source_mismatch",
            f"input {inp.name} states {stated!r} but the map's share_of_window is {selected!r}",
            f"{path}.value",
            selected,
            stated,
        )
    if inp.input_class == "same_boundary" and record.binding.target_id != target.id:
        raise bad(
            "opportunity_boundary_mismatch",
            "a same_boundary input's execution map is bound to another Target",
            f"{where}.ref",
            target.id,
            record.binding.target_id,
        )


def _unquantified(claim: OpportunityClaim, path: str) -> OpportunityComputed:
    if not claim.reason:
        raise bad("field_missing", "an unquantified claim needs a reason", f"{path}.reason")
    if claim.coverage is not None or claim.local_saving is not None:
        raise bad(
            "opportunity_arithmetic_invalid",
            "an unquantified claim has no coverage or local saving",
            f"{path}.coverage",
        )
    return OpportunityComputed(
        f=None, r=None, ceiling_pct=None, required_saving=None, ceiling_vs_minimum="not_applicable"
    )


def _admissible(inputs: dict[str, tuple[int, OpportunityInput]], name: str, where: str, path: str) -> int:
    if name not in inputs:
        raise bad("opportunity_arithmetic_invalid", f"no input named {name}", where, "an input name", name)
    k, inp = inputs[name]
    if inp.input_class == "diagnostic":
        raise bad(
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
            raise bad(
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
        raise bad(
            "opportunity_contradiction",
            "the expected effect's low is above its high",
            f"{path}.expected_effect_pct",
            "low <= high",
            f"{expected.low} > {expected.high}",
        )
    if expected.high > ceiling * (1 + TOLERANCE):
        raise bad(
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
        raise bad("opportunity_arithmetic_invalid", "input names repeat", f"{path}.inputs")
    for k, inp in enumerate(claim.inputs):
        _check_source(store, target, inp, f"{path}.inputs[{k}]")
    if not claim.quantified:
        return _unquantified(claim, path)
    primary = target.metrics[target.objective.primary]
    if primary.kind in ("quantile", "other"):
        raise bad(
            "opportunity_ceiling_not_applicable",
            f"time share does not bound a {primary.kind} primary",
            f"{path}.quantified",
            "a duration or throughput primary",
            primary.kind,
        )
    if claim.coverage is None or claim.local_saving is None:
        raise bad("field_missing", "a quantified claim needs coverage and local_saving", f"{path}.coverage")
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
