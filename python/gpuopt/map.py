"""Execution maps (spec §8): ``account`` reads events ``{timeline, start_ns, end_ns, category, name}`` and
accounts a window's time over the selected timelines, per group of events.

Events come from JSON Lines, Parquet or Arrow IPC (detected from the file's first bytes). Times are
integers >= 0 in ``start_ns``/``end_ns``, or microseconds in ``start_us``/``end_us`` (numbers >= 0), converted
to the nearest nanosecond of the binary64 product ``us * 1000`` (ties to even). Other columns are ignored.
The arithmetic runs natively (``gpuopt._native.map_account``): one sweep over sorted boundaries of the
half-open intervals, ends before starts at equal times.

With ``root``, the map becomes the create-once record ``maps/map-<64hex>.json``, bound to the root's
Target, a variant of it and one of its cases; the event file is frozen into the root's objects.
"""

from __future__ import annotations

import fnmatch
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gpuopt import _window
from gpuopt._files import read_bounded, regular_size
from gpuopt.errors import InputError
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.map import (
    ExecutionMap,
    GroupKey,
    MapAccountData,
    MapBinding,
    MapGroup,
    MapSource,
    MapTotals,
    MapWindow,
)

FORMAT = "gpuopt.execution-map/v1"
GROUP_KEYS: tuple[GroupKey, ...] = ("timeline", "category", "name")
TEXT = ("timeline", "category", "name")
MAX_EVENT_FILE_BYTES = 8 << 30
_I64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class MapResult:
    """An account: the document (``data``) and its groups as a DataFrame (one row per group)."""

    data: MapAccountData
    groups: pl.DataFrame


@dataclass(frozen=True)
class _Events:
    frame: pl.DataFrame  # timeline, category, name (String), start_ns, end_ns (Int64)
    format: str
    time_unit: str


def _bad(code: str, message: str, path: str, expected: Any = None, observed: Any = None) -> InputError:
    def text(x: Any) -> str | None:
        return None if x is None else str(x)

    return InputError(code, message, path=path, expected=text(expected), observed=text(observed))


# ---- reading -----------------------------------------------------------------------------------------------


def _sniff(data: bytes) -> str:
    if data[:4] == b"PAR1":
        return "parquet"
    if data[:6] == b"ARROW1" or data[:4] == b"\xff\xff\xff\xff":
        return "arrow"
    return "jsonl"


def _time_unit(columns: list[str] | set[str], path: str) -> str:
    ns = {"start_ns", "end_ns"} & set(columns)
    us = {"start_us", "end_us"} & set(columns)
    if ns and us:
        raise _bad(
            "events_time_columns_ambiguous",
            "events carry both *_ns and *_us times",
            path,
            "start_ns/end_ns or start_us/end_us",
            sorted(ns | us),
        )
    return "us" if us else "ns"


def _us_to_ns(values: np.ndarray[Any, Any], field: str) -> np.ndarray[Any, Any]:
    """Microseconds (finite, >= 0) to the nearest integer nanosecond."""
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        row = int(bad[0])
        raise _bad(
            "event_time_invalid",
            f"{field} must be a finite number >= 0",
            f"events[{row}].{field}",
            ">= 0",
            values[row],
        )
    ns = np.rint(values * 1000.0)
    over = np.flatnonzero(ns > float(_I64_MAX))
    if over.size:
        row = int(over[0])
        raise _bad("map_overflow", f"{field} does not fit in int64 ns", f"events[{row}].{field}")
    return ns.astype(np.int64)


def _jsonl_row(
    obj: dict[str, Any],
    where: str,
    number: int,
    unit: str,
    cols: dict[str, list[Any]],
    times: dict[str, list[Any]],
) -> None:
    for key in TEXT:
        value = obj.get(key)
        if key not in obj:
            raise _bad("column_missing", f"line {number} has no {key}", f"{where}.{key}", "string")
        if not isinstance(value, str):
            raise _bad(
                "value_type_invalid",
                f"{key} must be a string",
                f"{where}.{key}",
                "string",
                type(value).__name__,
            )
        cols[key].append(value)
    for key in times:
        if key not in obj:
            raise _bad("column_missing", f"line {number} has no {key}", f"{where}.{key}", "number")
        value = obj[key]
        ok = isinstance(value, int) if unit == "ns" else isinstance(value, int | float)
        if isinstance(value, bool) or not ok:
            expected = "integer" if unit == "ns" else "number"
            raise _bad(
                "value_type_invalid",
                f"{key} must be a JSON {expected}",
                f"{where}.{key}",
                expected,
                type(value).__name__,
            )
        if unit == "ns" and not 0 <= value <= _I64_MAX:
            raise _bad(
                "event_time_negative" if value < 0 else "map_overflow",
                f"{key} {value} is outside [0, 2^63)",
                f"{where}.{key}",
                ">= 0",
                value,
            )
        times[key].append(value)


def _jsonl(data: bytes) -> tuple[pl.DataFrame, str]:
    """Strict JSON Lines: one object per line, required keys with exact JSON types (no bools as numbers,
    no NaN, no duplicate keys); blank lines are skipped."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"duplicate key {k!r}")
            out[k] = v
        return out

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    cols: dict[str, list[Any]] = {k: [] for k in TEXT}
    times: dict[str, list[Any]] = {}
    unit: str | None = None
    row = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"events[{row}]"
        try:
            obj = json.loads(raw, object_pairs_hook=pairs, parse_constant=constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _bad("events_invalid", f"line {number} is not JSON: {exc}", where) from None
        except RecursionError:
            raise _bad("events_invalid", f"line {number} is nested too deeply", where) from None
        if not isinstance(obj, dict):
            raise _bad(
                "events_invalid", f"line {number} is not an object", where, "object", type(obj).__name__
            )
        if unit is None:
            unit = _time_unit(list(obj), where)
            times = {f"start_{unit}": [], f"end_{unit}": []}
        _jsonl_row(obj, where, number, unit, cols, times)
        row += 1
    unit = unit or "ns"
    frame = pl.DataFrame(
        {
            **{k: pl.Series(k, v, dtype=pl.String) for k, v in cols.items()},
            **{
                k: pl.Series(k, v, dtype=pl.Int64 if unit == "ns" else pl.Float64)
                for k, v in (times or {"start_ns": [], "end_ns": []}).items()
            },
        }
    )
    return frame, unit


def _check_dtypes(frame: pl.DataFrame, unit: str) -> None:
    for key in TEXT:
        if key not in frame.columns:
            raise _bad("column_missing", f"the events have no {key} column", key, "string", frame.columns)
        dtype = frame.schema[key]
        if dtype not in (pl.String, pl.Categorical) and not isinstance(dtype, pl.Enum):
            raise _bad("value_type_invalid", f"{key} must be a string column", key, "string", dtype)
    for key in (f"start_{unit}", f"end_{unit}"):
        if key not in frame.columns:
            raise _bad("column_missing", f"the events have no {key} column", key, "integer", frame.columns)
        dtype = frame.schema[key]
        ok = dtype.is_integer() if unit == "ns" else dtype.is_numeric()
        if not ok:
            expected = "integer" if unit == "ns" else "number"
            raise _bad("value_type_invalid", f"{key} must be an {expected} column", key, expected, dtype)


def _columnar(data: bytes, fmt: str) -> tuple[pl.DataFrame, str]:
    try:
        frame = pl.read_parquet(io.BytesIO(data)) if fmt == "parquet" else _read_ipc(data)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # polars raises many types for damaged files, and panics (PanicException)
        raise _bad("events_invalid", f"cannot read the {fmt} event file: {exc}", "events") from None
    unit = _time_unit(frame.columns, "events")
    _check_dtypes(frame, unit)
    names = [*TEXT, f"start_{unit}", f"end_{unit}"]
    frame = frame.select(names)
    for key in names:
        nulls = frame[key].is_null()
        if nulls.any():
            row = int(nulls.arg_true()[0])
            raise _bad("value_missing", f"{key} is null", f"events[{row}].{key}")
    frame = frame.with_columns(pl.col(list(TEXT)).cast(pl.String))
    if unit == "ns":
        _check_ns_range(frame)
        frame = frame.with_columns(pl.col("start_ns", "end_ns").cast(pl.Int64))
    return frame, unit


def _check_ns_range(frame: pl.DataFrame) -> None:
    for key in ("start_ns", "end_ns"):
        col = frame[key]
        if col.dtype == pl.UInt64 and col.len() and int(col.max()) > _I64_MAX:  # type: ignore[arg-type]
            row = int((col > _I64_MAX).arg_true()[0])
            raise _bad("map_overflow", f"{key} does not fit in int64", f"events[{row}].{key}")
        if col.dtype.is_signed_integer() and col.len() and int(col.min()) < 0:  # type: ignore[arg-type]
            row = int((col < 0).arg_true()[0])
            raise _bad("event_time_negative", f"{key} < 0", f"events[{row}].{key}", ">= 0", col[row])


def _read_ipc(data: bytes) -> pl.DataFrame:
    if data[:6] == b"ARROW1":
        return pl.read_ipc(io.BytesIO(data))
    return pl.read_ipc_stream(io.BytesIO(data))


def read_events(data: bytes) -> _Events:
    """Reads and validates events from the bytes of a JSON Lines, Parquet or Arrow IPC file."""
    fmt = _sniff(data)
    frame, unit = _jsonl(data) if fmt == "jsonl" else _columnar(data, fmt)
    if unit == "us":
        start = _us_to_ns(frame["start_us"].cast(pl.Float64).to_numpy(), "start_us")
        end = _us_to_ns(frame["end_us"].cast(pl.Float64).to_numpy(), "end_us")
        frame = frame.drop("start_us", "end_us").with_columns(
            pl.Series("start_ns", start), pl.Series("end_ns", end)
        )
    start_np = frame["start_ns"].to_numpy()
    end_np = frame["end_ns"].to_numpy()
    reversed_rows = np.flatnonzero(end_np < start_np)
    if reversed_rows.size:
        row = int(reversed_rows[0])
        raise _bad(
            "event_time_reversed",
            "an event ends before it starts",
            f"events[{row}].end_{unit}",
            f">= start ({start_np[row]} ns)",
            f"{end_np[row]} ns",
        )
    return _Events(frame.select(*TEXT, "start_ns", "end_ns"), fmt, unit)


# ---- accounting --------------------------------------------------------------------------------------------


def parse_window(text: str) -> tuple[int, int]:
    """``START:END``, ``0 <= START < END`` (the one ``--window`` grammar, :mod:`gpuopt._window`)."""
    return _window.parse_closed_window(text)


def parse_group_by(text: str | list[str] | tuple[str, ...]) -> list[GroupKey]:
    keys = [k.strip() for k in text.split(",")] if isinstance(text, str) else list(text)
    out: list[GroupKey] = []
    for k in keys:
        if k not in GROUP_KEYS or k in out:
            raise _bad(
                "group_by_invalid",
                f"group-by key {k!r} is unknown or repeated",
                "group_by",
                "distinct keys of timeline, category, name",
                text,
            )
        out.append(k)
    if not out:
        raise _bad(
            "group_by_invalid", "group by at least one key", "group_by", "timeline, category, name", text
        )
    return out


def _select(frame: pl.DataFrame, patterns: list[str]) -> tuple[pl.DataFrame, list[str]]:
    names = sorted(frame["timeline"].unique().to_list())
    if not patterns:
        return frame, names
    chosen: set[str] = set()
    for pattern in patterns:
        hit = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not hit:
            raise _bad(
                "timeline_not_found",
                f"no timeline matches {pattern!r}",
                "timeline",
                pattern,
                ", ".join(names[:20]) + (f" (+{len(names) - 20})" if len(names) > 20 else ""),
            )
        chosen.update(hit)
    return frame.filter(pl.col("timeline").is_in(sorted(chosen))), sorted(chosen)


def _account(
    frame: pl.DataFrame, group_by: list[GroupKey], window: tuple[int, int] | None
) -> tuple[MapTotals, MapWindow, list[MapGroup], pl.DataFrame]:
    from gpuopt import _native

    keys = frame.select(group_by).unique().sort(group_by).with_row_index("group")
    coded = frame.join(keys, on=group_by, how="left")
    totals_json, table = _native.map_account(
        coded["start_ns"].cast(pl.Int64).to_numpy().astype("<i8").tobytes(),
        coded["end_ns"].cast(pl.Int64).to_numpy().astype("<i8").tobytes(),
        coded["group"].cast(pl.UInt32).to_numpy().astype("<u4").tobytes(),
        keys.height,
        window,
    )
    raw = json.loads(totals_json)
    stats = pl.DataFrame(table)
    groups = (
        keys.join(stats.with_columns(pl.col("group").cast(pl.UInt32)), on="group", how="inner")
        .filter(pl.col("count") > 0)
        .sort(group_by)
        .drop("group")
    )
    totals = MapTotals(
        window_ns=raw["window_ns"],
        events=raw["events"],
        union_ns=raw["union_ns"],
        idle_ns=raw["idle_ns"],
        overlap_excess_ns=raw["overlap_excess_ns"],
        max_concurrency=raw["max_concurrency"],
        serial_ns=raw["serial_ns"],
        zero_length_events=raw["zero_length_events"],
    )
    win = MapWindow(start_ns=raw["window_start_ns"], end_ns=raw["window_end_ns"], explicit=window is not None)
    rows = [
        MapGroup(
            key={k: r[k] for k in group_by},
            count=r["count"],
            zero_length=r["zero_length"],
            serial_ns=r["serial_ns"],
            union_ns=r["union_ns"],
            exclusive_ns=r["exclusive_ns"],
            share_of_window=r["share_of_window"],
        )
        for r in groups.iter_rows(named=True)
    ]
    return totals, win, rows, groups


def _binding(store: Store, variant: str, case: str) -> MapBinding:
    from gpuopt.evaluation import target as targets

    target_any, _ = targets.load(store)
    target = targets.optimizable(target_any)
    known = variant == target.original.digest or (
        len(variant) == 64
        and all(c in "0123456789abcdef" for c in variant)
        and store.exists(f"objects/trees/{variant}.json")
    )
    if not known:
        raise _bad(
            "map_binding_invalid",
            "the bound variant is neither the Target's original nor an object of this root",
            "binding.variant_digest",
            "a tree digest of this root",
            variant,
        )
    if case not in target.test_set.case_ids:
        raise _bad(
            "map_binding_invalid",
            f"case {case!r} is not a case of the Target",
            "binding.case_id",
            ", ".join(target.test_set.case_ids),
            case,
        )
    return MapBinding(target_id=target.id, variant_digest=variant, case_id=case)


def account(
    events: str | Path,
    *,
    timelines: list[str] | tuple[str, ...] = (),
    group_by: str | list[str] | tuple[str, ...] = ("category", "name"),
    window: tuple[int, int] | str | None = None,
    root: str | Path | None = None,
    bind_variant: str | None = None,
    case: str | None = None,
) -> MapResult:
    """Accounts the events of ``events`` (see the module documentation); with ``root`` (and
    ``bind_variant`` and ``case``) also publishes the map record."""
    from gpuopt import __version__
    from gpuopt.evaluation import jsonio

    bound = [root is not None, bind_variant is not None, case is not None]
    if any(bound) and not all(bound):
        raise _bad(
            "map_binding_incomplete",
            "--root, --bind-variant and --case go together",
            "binding",
            "all three or none",
            ", ".join(n for n, b in zip(("root", "bind_variant", "case"), bound, strict=True) if b),
        )
    keys = parse_group_by(group_by)
    win = parse_window(window) if isinstance(window, str) else window
    if win is not None:
        _window.check_closed(win[0], win[1], f"{win[0]}:{win[1]}")
    path = Path(events)
    try:
        size = regular_size(path)
    except InputError as exc:
        raise _bad(exc.code, exc.message, str(path), exc.expected, exc.observed) from None
    if size > MAX_EVENT_FILE_BYTES:
        raise _bad("events_too_large", "the event file is too large", str(path), MAX_EVENT_FILE_BYTES, size)
    try:
        data = read_bounded(path, "event file", MAX_EVENT_FILE_BYTES)
    except InputError as exc:
        code = "events_too_large" if exc.code == "input_too_large" else exc.code
        raise _bad(code, exc.message, str(path), exc.expected, exc.observed) from None
    ev = read_events(data)
    selected, names = _select(ev.frame, list(timelines))
    totals, map_window, groups, frame = _account(selected, keys, win)
    sha = jsonio.sha256_hex(data)
    source: dict[str, Any] = {
        "file": path.name,
        "format": ev.format,
        "sha256": sha,
        "digest": None,
        "time_unit": ev.time_unit,
        "producer": "gpuopt map account",
        "version": __version__,
    }
    body: dict[str, Any] = {
        "window": map_window.model_dump(),
        "timelines": names,
        "group_by": keys,
        "totals": totals.model_dump(),
        "groups": [g.model_dump() for g in groups],
    }
    if root is None:
        data_out = MapAccountData(
            record=None, created=None, source=MapSource(**source), binding=None, **_models(body)
        )
        return MapResult(data_out, frame)
    record, created, binding = _publish(Path(root), path, sha, source, body, str(bind_variant), str(case))
    data_out = MapAccountData(
        record=record,
        created=created,
        source=MapSource(**source),
        binding=binding,
        **_models(body),
    )
    return MapResult(data_out, frame)


def _models(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "window": MapWindow(**body["window"]),
        "timelines": body["timelines"],
        "group_by": body["group_by"],
        "totals": MapTotals(**body["totals"]),
        "groups": [MapGroup(**g) for g in body["groups"]],
    }


def _publish(
    root: Path, path: Path, sha: str, source: dict[str, Any], body: dict[str, Any], variant: str, case: str
) -> tuple[RecordRef, bool, MapBinding]:
    from gpuopt.evaluation import jsonio
    from gpuopt.evaluation.store import ledger_keys
    from gpuopt.models.evaluation.store import ScanLimits

    store = Store.open(root)
    binding = _binding(store, variant, case)
    with store.lock("root", exclusive=False):
        frozen = store.freeze(path, exclude=[], limits=ScanLimits())
        entries = store.manifest(frozen.digest).entries
        frozen_sha = [e.sha256 for e in entries if e.kind == "file"]
        if frozen_sha != [sha]:
            raise _bad(
                "file_changed_during_read",
                "the event file changed between reading and freezing it",
                str(path),
                sha,
                frozen_sha,
            )
        source["digest"] = frozen.digest
        core = {"format": FORMAT, "source": source, "binding": binding.model_dump(), **body}
        map_id = "map-" + jsonio.digest(core)
        record = jsonio.validate(ExecutionMap, {**core, "id": map_id}, what="execution map")
        store.ensure_dir("maps")
        published = store.write_record(map_rel(map_id), record)
        if published.created:
            store.ledger_append("map", map_id, published, ledger_keys(record.model_dump(mode="json")))
    return RecordRef(id=map_id, sha256=published.sha256), published.created, binding


def map_rel(map_id: str) -> str:
    from gpuopt import _native

    _native.validate_id("map", map_id)
    return f"maps/{map_id}.json"


def load(store: Store, ref: RecordRef) -> ExecutionMap:
    """A map record of this root, verified against its ref (``record_not_found``, ``record_changed``)."""
    value, _ = store.read_record(map_rel(ref.id), ExecutionMap, what="execution map", sha256=ref.sha256)
    return value


def share(record: ExecutionMap, category: str, name: str) -> float | None:
    """The ``share_of_window`` of the group ``{category, name}``; None when the map has no such group
    (or was not grouped by exactly category and name)."""
    if record.group_by != ["category", "name"]:
        return None
    for g in record.groups:
        if g.key == {"category": category, "name": name}:
            return g.share_of_window
    return None
