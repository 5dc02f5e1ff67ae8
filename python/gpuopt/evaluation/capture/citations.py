"""A target or final-audit result cites capture diffs: ``gpuopt profile diff --cite INVOCATION`` over ``cap:``
references records the diff's facts under ``citations/<invocation>/`` (published once, content-derived id);
``gpuopt report`` and ``gpuopt handoff`` show them beside the verdict."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio, registry
from gpuopt.evaluation.capture import refs
from gpuopt.evaluation.records import read_result
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.capture import CaptureDiffCitation, CitedKey
from gpuopt.models.evaluation.common import ResultRef
from gpuopt.models.profile import ProfileDiffData

FORMAT = "gpuopt.capture-diff-citation/v1"
FOLDER = "citations"
MAX_KEYS = 20


def _num(value: Any) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else float(value)


def cite(
    root: str | Path,
    inv_id: str,
    data: ProfileDiffData,
    rows: list[dict[str, Any]],
    baseline: list[str],
    candidate: list[str],
) -> tuple[CaptureDiffCitation, str]:
    """Records ``data`` (its whole table in ``rows``) as cited by the result of ``inv_id``; every input must
    be a ``cap:`` reference."""
    plain = [t for t in (*baseline, *candidate) if not refs.is_ref(t)]
    if plain:
        raise InputError(
            "citation_inputs_invalid",
            "a cited diff reads capture records only (files outside the store are not evidence of it)",
            path="--baseline/--candidate",
            expected="cap:INVOCATION/VARIANT[/CASE] on both sides",
            observed=plain[0],
        )
    store = Store.open(root)
    found = read_result(store, inv_id)
    if found is None or found[0].operation not in registry.citing_names():
        raise InputError(
            "citation_result_invalid",
            f"{inv_id} has no target or final-audit result to cite the diff",
            path="--cite",
            expected="the invocation id of a target or final-audit result",
            observed="no result" if found is None else found[0].operation,
        )
    result, sha = found
    rows = [r for r in rows if r.get("flagged")]
    rows.sort(key=lambda r: (-abs(_num(r.get("change_ns")) or 0.0), str(r.get("key"))))
    core: dict[str, Any] = {
        "format": FORMAT,
        "result": ResultRef(invocation_id=inv_id, sha256=sha).model_dump(),
        "operation": result.operation,
        "kind": data.kind,
        "by": data.by,
        "baseline": list(baseline),
        "candidate": list(candidate),
        "k_baseline": data.k_baseline,
        "k_candidate": data.k_candidate,
        "pairing": data.method.pairing,
        "fdr": data.method.fdr,
        "tested": data.counts.tested,
        "flagged": data.counts.flagged,
        "keys": [
            CitedKey(
                key=str(r["key"]),
                status=r["status"],
                change_pct=_num(r.get("change_pct")),
                ci_low_pct=_num(r.get("ci_low_pct")),
                ci_high_pct=_num(r.get("ci_high_pct")),
                q_value=_num(r.get("q_value")),
            ).model_dump()
            for r in rows[:MAX_KEYS]
        ],
        "warnings": [w.code for w in data.warnings],
    }
    citation = jsonio.validate(
        CaptureDiffCitation, {**core, "id": "cit-" + jsonio.digest(core)[:32]}, what="citation"
    )
    store.ensure_dir(f"{FOLDER}/{inv_id}")
    published = store.write_record(f"{FOLDER}/{inv_id}/{citation.id}.json", citation)
    return citation, published.sha256


def for_result(store: Store, inv_id: str) -> list[tuple[CaptureDiffCitation, str]]:
    """The capture diffs that cite ``inv_id``'s result (oldest id first); a citation of an earlier result
    bytes (the sha256 differs) is left out."""
    folder = store.root / FOLDER / inv_id
    if not folder.is_dir():
        return []
    found = read_result(store, inv_id)
    out = []
    for path in sorted(folder.glob("cit-*.json")):
        citation, sha = store.read_record(
            f"{FOLDER}/{inv_id}/{path.name}", CaptureDiffCitation, what="capture diff citation"
        )
        if found is not None and citation.result.sha256 == found[1]:
            out.append((citation, sha))
    return out


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1f} %"


def line(c: CaptureDiffCitation, *, keys: int = 3) -> str:
    """One line for people: 'kernel X -40.0 % [-42.0 %, -38.0 %] ... over 5 captures per side'."""
    side = (
        f"{c.k_baseline} captures per side"
        if c.k_baseline == c.k_candidate
        else f"{c.k_baseline} baseline and {c.k_candidate} candidate captures"
    )
    if c.k_baseline < 2 or c.k_candidate < 2:
        return f"{c.kind} {c.by} diff over {side}: one capture per side: no uncertainty"
    shown = "; ".join(
        f"{c.by} {k.key[:80]} {_pct(k.change_pct)} [{_pct(k.ci_low_pct)}, {_pct(k.ci_high_pct)}]"
        for k in c.keys[:keys]
    )
    head = (
        f"{c.kind} {c.by} diff over {side} ({c.pairing}): {c.flagged} of {c.tested} keys flagged "
        f"at FDR {c.fdr:g}"
    )
    more = f" (+{len(c.keys) - keys} more)" if len(c.keys) > keys else ""
    warn = f"; warnings {', '.join(c.warnings)}" if c.warnings else ""
    return head + (f"; {shown}{more}" if shown else "") + warn
