"""Every record file against the ledger's newest line for it: there, the same bytes (sha256), valid against
its model, and listed with the kind, id and keys the record implies; a result's tables against the hashes
it holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.records import request_model, result_model
from gpuopt.evaluation.store import LEDGER, Store, ledger_keys
from gpuopt.models.evaluation.champion import ChampionPointer, Selection
from gpuopt.models.evaluation.experiment import Experiment
from gpuopt.models.evaluation.store import Defect, DefectCode, LedgerKind, LedgerLine
from gpuopt.models.evaluation.target import DiagnosticTarget, Target
from gpuopt.models.map import ExecutionMap

MAX_TABLE_BYTES = 1 << 34


@dataclass
class Records:
    defects: list[Defect] = field(default_factory=list)
    models: dict[str, BaseModel] = field(default_factory=dict)
    """Every record file that validates, by path (its references are kept, ledgered or not)."""
    sha256: dict[str, str] = field(default_factory=dict)
    """The hash of every record file that could be read, by path."""


def _model(kind: LedgerKind, raw: Any) -> type[BaseModel]:
    if kind == "target":
        diagnostic = isinstance(raw, dict) and raw.get("mode") == "diagnostic"
        return DiagnosticTarget if diagnostic else Target
    if kind == "invocation":
        return request_model(raw)
    if kind == "result":
        return result_model(raw)
    models: dict[str, type[BaseModel]] = {
        "experiment": Experiment,
        "selection": Selection,
        "pointer": ChampionPointer,
        "map": ExecutionMap,
    }
    return models[kind]


def _invalid(rel: str, expected: str, observed: str) -> Defect:
    return Defect(code="record_invalid", path=rel, expected=expected, observed=observed)


def _read(store: Store, out: Records, kind: LedgerKind, rel: str, *, deep: bool) -> Any:
    """Reads, parses and validates one record file; returns the parsed value (None when it is no JSON)."""
    try:
        data = store.read_bytes(rel)
    except InputError as exc:
        out.defects.append(_invalid(rel, "a readable record file", exc.message))
        return None
    out.sha256[rel] = jsonio.sha256_hex(data)
    try:
        raw = jsonio.parse(data, max_bytes=jsonio.MAX_RECORD_BYTES, what=rel)
    except InputError as exc:
        out.defects.append(_invalid(rel, "a JSON record", exc.message))
        return None
    try:
        out.models[rel] = jsonio.validate(_model(kind, raw), raw, what=rel)
    except InputError as exc:
        out.defects.append(_invalid(rel, f"a valid {kind} record", exc.message))
    if deep and jsonio.record_bytes(raw) != data:
        out.defects.append(_invalid(rel, "canonical JSON (RFC 8785) and a newline", "other bytes"))
    return raw


def _line_mismatch(line: LedgerLine, kind: str, rid: str, record: Any) -> str | None:
    """How a ledger line differs from what its record says it should be (kind, id, keys), if it does."""
    expected_id = rid or (record.get("id") if isinstance(record, dict) else None)
    if (line.kind, line.id) != (kind, expected_id):
        return f"ledger names {line.kind} {line.id}, the file is {kind} {expected_id}"
    keys = ledger_keys(record) if isinstance(record, dict) else {}
    differ = sorted(k for k in {*keys, *line.keys} if keys.get(k) != line.keys.get(k))
    return f"ledger keys differ from the record: {', '.join(differ)}" if differ else None


def _table_problem(
    store: Store, rel: str, sha256: Any, *, deep: bool
) -> tuple[DefectCode, str | None] | None:
    """Whether one table is missing or (``deep``) hashes to something else, and what was found."""
    try:
        if not deep:
            return None if store.exists(rel) else ("table_missing", None)
        actual = jsonio.sha256_hex(store.read_bytes(rel, max_bytes=MAX_TABLE_BYTES))
    except InputError as exc:
        return ("table_missing", None) if exc.code == "file_not_found" else ("table_changed", exc.message)
    return None if actual == sha256 else ("table_changed", f"sha256 {actual}")


def _tables(store: Store, rel: str, record: Any, *, deep: bool) -> list[Defect]:
    """A result's tables (``samples.parquet``, ``resources.jsonl``) exist; with ``deep``, hash as it says."""
    tables = record.get("tables") if isinstance(record, dict) else None
    defects: list[Defect] = []
    for ref in tables.values() if isinstance(tables, dict) else []:
        if not isinstance(ref, dict):
            continue
        table_rel = f"{rel.rsplit('/', 1)[0]}/{ref.get('path')}"
        problem = _table_problem(store, table_rel, ref.get("sha256"), deep=deep)
        if problem is not None:
            expected = f"the table the result holds by hash (sha256 {ref.get('sha256')})"
            code, observed = problem
            defects.append(
                Defect(code=code, path=table_rel, expected=expected, observed=observed, record=rel)
            )
    return defects


def check_records(
    store: Store,
    lines: list[LedgerLine],
    on_disk: list[tuple[LedgerKind, str, str]],
    misnamed: list[str],
    *,
    deep: bool,
) -> Records:
    """Every record file and every ledger line's record; ``misnamed`` files in record folders are invalid."""
    out = Records()
    latest = {line.path: line for line in lines}
    files = {rel: (kind, rid) for kind, rid, rel in on_disk}
    out.defects += [
        _invalid(rel, "a folder named inv-<32 hex>" if rel.startswith("invocations/") else "<id>.json", rel)
        for rel in misnamed
    ]
    parsed = {rel: _read(store, out, kind, rel, deep=deep) for rel, (kind, _) in sorted(files.items())}
    for rel, line in sorted(latest.items()):
        if rel not in files:
            expected = f"the {line.kind} record the ledger lists (seq {line.seq}, sha256 {line.sha256})"
            out.defects.append(Defect(code="record_missing", path=rel, expected=expected))
            continue
        actual = out.sha256.get(rel)
        if actual is None:
            continue  # unreadable: already a defect
        if actual != line.sha256:
            expected = f"sha256 {line.sha256} (ledger seq {line.seq})"
            out.defects.append(
                Defect(code="record_changed", path=rel, expected=expected, observed=f"sha256 {actual}")
            )
            continue
        record = parsed[rel]
        detail = _line_mismatch(line, *files[rel], record)
        if detail is not None:
            expected = f"seq {line.seq}: the kind, id and keys {rel} implies"
            out.defects.append(
                Defect(code="ledger_mismatch", path=LEDGER, expected=expected, observed=detail, record=rel)
            )
        if line.kind == "result":
            out.defects += _tables(store, rel, record, deep=deep)
    for rel, (kind, _) in sorted(files.items()):
        if rel not in latest:
            expected = f"a ledger line for this {kind} record (gpuopt store reindex adds it)"
            out.defects.append(Defect(code="record_unlisted", path=rel, expected=expected))
    return out
