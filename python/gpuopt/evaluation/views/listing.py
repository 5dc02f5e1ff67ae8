"""``gpuopt ls`` and ``gpuopt show`` (spec §3.8).

``ls`` lists from the ledger (the keys each publication recorded) plus the live status of invocations that
have no result yet; it opens no invocation directory of a completed invocation. ``show`` prints one record
verified against its ledger hash, or one table of an invocation. :func:`ls_document` and
:func:`show_document` answer what the commands print (a :class:`gpuopt.answer.Answer`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import invocation, jsonio
from gpuopt.evaluation.outcome import outcome
from gpuopt.evaluation.sampler import resource_rows
from gpuopt.evaluation.views.records import Root
from gpuopt.models.evaluation.views import ResultOutcome, ShowData

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.table import TableResult

KINDS = ("invocations", "experiments", "selections", "maps", "objects")
FILTERS = ("operation", "experiment", "mechanism", "verdict", "status")


def _invocation_rows(root: Root) -> list[dict[str, Any]]:
    rows = []
    for inv_id in root.ids("invocation"):
        line = root.latest[("invocation", inv_id)]
        result = root.latest.get(("result", inv_id))
        keys = dict(line.keys)
        if result is not None:
            keys.update(result.keys)
            state = "completed"
        else:
            state = invocation.status(root.store.root, inv_id).state
        rows.append(
            {
                "id": inv_id,
                "operation": keys.get("operation"),
                "experiment": keys.get("experiment"),
                "mechanism": keys.get("mechanism"),
                "state": state,
                "verdict": keys.get("verdict"),
                "stop_reason": keys.get("stop_reason"),
                "primary_verdict": keys.get("primary_verdict"),
                "estimate_pct": keys.get("primary_estimate_pct"),
                "ci_low_pct": keys.get("primary_ci_low_pct"),
                "ci_high_pct": keys.get("primary_ci_high_pct"),
                "pairs_valid": keys.get("pairs_valid"),
                "pairs_invalid": keys.get("pairs_invalid"),
                "gpu_seconds": keys.get("gpu_seconds"),
                "retry_of": keys.get("retry_of"),
                "submitted_at_epoch": line.at_epoch,
                "finished_at_epoch": None if result is None else result.at_epoch,
            }
        )
    return rows


def _experiment_rows(root: Root) -> list[dict[str, Any]]:
    verdicts: dict[tuple[str, str], str] = {}
    for inv_id in root.ids("invocation"):
        keys = root.latest[("invocation", inv_id)].keys
        result = root.latest.get(("result", inv_id))
        exp = keys.get("experiment")
        if isinstance(exp, str) and result is not None:
            verdicts[(exp, str(keys.get("operation")))] = str(result.keys.get("verdict"))
    rows = []
    for exp_id in root.ids("experiment"):
        line = root.latest[("experiment", exp_id)]
        k = line.keys
        rows.append(
            {
                "id": exp_id,
                "mechanism": k.get("mechanism"),
                "claim_layer": k.get("claim_layer"),
                "rejection_scope": k.get("rejection_scope"),
                "candidate_digest": k.get("candidate_digest"),
                "supersedes": k.get("supersedes"),
                "screen_verdict": verdicts.get((exp_id, "screen")),
                "target_verdict": verdicts.get((exp_id, "target")),
                "created_at_epoch": line.at_epoch,
            }
        )
    return rows


def _selection_rows(root: Root) -> list[dict[str, Any]]:
    rows = []
    for sel_id in root.ids("selection"):
        line = root.latest[("selection", sel_id)]
        k = line.keys
        rows.append(
            {
                "id": sel_id,
                "decision": k.get("decision"),
                "variant_digest": k.get("variant_digest"),
                "result": k.get("result"),
                "experiment": k.get("experiment"),
                "previous": k.get("previous"),
                "at_epoch": line.at_epoch,
            }
        )
    return rows


def _object_rows(root: Root) -> list[dict[str, Any]]:
    rows = []
    folder = root.store.root / "objects" / "trees"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        digest = path.name[: -len(".json")]
        manifest = root.store.manifest(digest)
        rows.append(
            {
                "digest": digest,
                "source_kind": manifest.source_kind,
                "file_count": manifest.file_count,
                "total_bytes": manifest.total_bytes,
            }
        )
    return rows


def ls(root_path: str | Path, kind: str = "invocations", **filters: str | None) -> pl.DataFrame:
    """A table of one kind of record, from the ledger, filtered by exact key values."""
    import polars as pl

    if kind not in KINDS:
        raise InputError("field_invalid", f"unknown kind {kind}", path="kind", expected=", ".join(KINDS))
    root = Root.open(root_path)
    builders = {
        "invocations": _invocation_rows,
        "experiments": _experiment_rows,
        "selections": _selection_rows,
        "maps": lambda _root: [],
        "objects": _object_rows,
    }
    rows = builders[kind](root)
    wanted = {("state" if k == "status" else k): v for k, v in filters.items() if v is not None}
    rows = [r for r in rows if all(k in r and r[k] == v for k, v in wanted.items())]
    if not rows:
        return pl.DataFrame({"id": pl.Series([], dtype=pl.String)})
    return pl.DataFrame(rows, infer_schema_length=None)


# ---- show --------------------------------------------------------------------------------------------------


def _kind_of(rid: str) -> str:
    for prefix, kind in (
        ("tgt-", "target"),
        ("exp-", "experiment"),
        ("inv-", "invocation"),
        ("sel-", "selection"),
    ):
        if rid.startswith(prefix):
            return kind
    raise InputError(
        "field_invalid", f"{rid!r} is not a record id", path="id", expected="tgt-…, exp-…, inv-… or sel-…"
    )


def _table(root: Root, inv_id: str, part: str) -> pl.DataFrame:
    import polars as pl

    if part == "samples":
        rel = f"invocations/{inv_id}/samples.parquet"
        found = root.result(inv_id)
        tables = None if found is None else found[0].tables
        if tables is None or tables.samples is None or not root.store.exists(rel):
            return pl.DataFrame({"call": pl.Series([], dtype=pl.Int64)})
        data = root.store.read_bytes(rel, max_bytes=1 << 34)
        if jsonio.sha256_hex(data) != tables.samples.sha256:
            raise InputError("record_changed", f"{rel} no longer matches its result", path=rel)
        return pl.read_parquet(root.store.root / rel)
    if part == "events":
        rel = f"invocations/{inv_id}/events.jsonl"
        lines = root.store.read_bytes(rel, max_bytes=1 << 30).split(b"\n") if root.store.exists(rel) else []
        rows = [json.loads(x) for x in lines[:-1]]
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame({"seq": []})
    if part == "resources":
        rel = f"invocations/{inv_id}/resources.jsonl"
        if not root.store.exists(rel):
            raise InputError(
                "table_unavailable",
                f"{inv_id} has no resources.jsonl (its Target's sampler is disabled, or it never started)",
                path=part,
            )

        rows = resource_rows(root.store.read_bytes(rel, max_bytes=1 << 30))
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame({"t_mono_ns": []})
    found = root.result(inv_id)
    if found is None:
        raise InputError("result_not_found", f"{inv_id} has no result yet", path="id")
    result = found[0]
    if part == "pairs":
        pairs = getattr(result, "pairs", [])
        rows = []
        for p in pairs:
            for metric, v in p.values.items():
                rows.append(
                    {
                        "pair_index": p.pair_index,
                        "case_id": p.case_id,
                        "order": p.order,
                        "metric": metric,
                        "reference": v.reference,
                        "candidate": v.candidate,
                        "effect_log": p.effects_log.get(metric),
                        "valid": p.valid,
                        "invalid_reasons": ",".join(p.invalid_reasons),
                    }
                )
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame({"pair_index": []})
    if part == "calls":
        rows = [
            {
                "call_index": r.call_index,
                "case_id": r.step.case_id,
                "pair_index": r.step.pair_index,
                "order": r.step.order,
                "roles": "+".join(r.step.roles),
                "status": r.status,
                "stop_reason": r.stop_reason,
                "elapsed_s": r.elapsed_s,
                "cleanup": r.cleanup.status,
                "violations": ",".join(v.code for v in r.violations),
            }
            for r in result.call_receipts
        ]
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame({"call_index": []})
    raise InputError(
        "table_unavailable",
        f"{part} is not a table of an invocation",
        path=part,
        expected="pairs, samples, calls, events, resources",
    )


def _outcomes(root: Root, kind: str, rid: str) -> list[ResultOutcome]:
    """Why each result came out as it did: an invocation's own result, or every result of an Experiment's
    invocations (in ledger order)."""
    if kind == "invocation":
        ids = [rid]
    elif kind == "experiment":
        ids = [
            i for i in root.ids("invocation") if root.latest[("invocation", i)].keys.get("experiment") == rid
        ]
    else:
        return []
    found = [root.result(i) for i in ids]
    return [outcome(f[0]) for f in found if f is not None]


def show(root_path: str | Path, rid: str, *, part: str | None = None) -> tuple[ShowData, pl.DataFrame | None]:
    """One record verified by its ledger hash (with derived status for invocations), or one part table."""
    root = Root.open(root_path)
    kind = _kind_of(rid)
    _native.validate_id(kind, rid)
    ledger_kind = "result" if kind == "invocation" and ("result", rid) in root.latest else kind
    value, line = root.record_json(ledger_kind, rid)
    own = value.get("id", value.get("invocation_id")) if isinstance(value, dict) else None
    if own is not None and own != rid:
        raise InputError(
            "record_changed",
            f"{line.path} holds {own}, not {rid}",
            path=line.path,
            expected=rid,
            observed=str(own),
        )
    status = invocation.status(root.store.root, rid) if kind == "invocation" else None
    frame = None
    if part is not None:
        if kind != "invocation":
            raise InputError("field_invalid", f"--{part} needs an invocation id", path="id")
        frame = _table(root, rid, part)
    outcomes = [] if part is not None else _outcomes(root, kind, rid)
    return (
        ShowData(
            kind=ledger_kind,
            id=rid,
            path=line.path,
            sha256=line.sha256,
            verified=True,
            status=status,
            record=None if part is not None else value,
            table=None,
            outcomes=outcomes,
        ),
        frame,
    )


def ls_document(
    root_path: str | Path,
    kind: str = "invocations",
    *,
    limit: int = 50,
    sort: str | None = None,
    **filters: str | None,
) -> Answer[TableResult]:
    """``gpuopt ls``: :func:`ls` as a document, in ``sort`` order with the first ``limit`` rows (0: all)."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.table import TableResult

    frame = sorted_by(ls(root_path, kind, **filters), sort)
    return Answer(TableResult(table=table_data(kind, frame, limit)), tables={kind: frame})


def show_document(
    root_path: str | Path, rid: str, *, part: str | None = None, limit: int = 50, sort: str | None = None
) -> Answer[ShowData]:
    """``gpuopt show``: :func:`show` as a document; a ``part`` table in ``sort`` order with the first
    ``limit`` rows (0: all)."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer

    data, frame = show(root_path, rid, part=part)
    if frame is None:
        return Answer(data)
    name = part or "table"
    frame = sorted_by(frame, sort)
    return Answer(data.model_copy(update={"table": table_data(name, frame, limit)}), tables={name: frame})
