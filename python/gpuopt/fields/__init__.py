"""One-line definitions of every column of every table gpuopt prints, and of every field of the reading
commands' JSON documents (from the pydantic models' descriptions).

Nothing is written here: a column is declared once, where it is computed (``gpuopt._columns``: the
Rust engines' ``rust/src/<area>/fields.rs``, and the few Python-built columns next to their builders),
with its dtype, unit and meaning. A table is named ``AREA.TABLE``: the command's area and the table's
``data.table.name`` without the area prefix (``nsys.cuda_gpu_kern_sum``, ``torch.ops``, ``ncu.launches``
for ``ncu_launches``). ``gpuopt schema AREA.TABLE`` prints one table's definitions;
``references/fields.md`` has them all (``python -m gpuopt.fields > references/fields.md``);
``tests/test_fields.py`` runs every table command on a fixture and fails on a column without exactly one
declaration of its dtype, or a model field without a description.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from functools import cache
from typing import Any

from pydantic import BaseModel

from gpuopt import flops, many, profile
from gpuopt._columns import Column, native
from gpuopt._nsys.report import PER_DEVICE

COLUMNS: dict[str, tuple[Column, ...]] = {
    **native(),
    "ncu.flops": (*native()["ncu.roofline"], *flops.NCU_COLUMNS),
    "profile.keys": profile.KEY_COLUMNS,
}
"""``AREA.TABLE`` -> its columns in order: every table a command prints."""

COMMON_COLUMNS: tuple[Column, ...] = (*many.KEY_COLUMNS, PER_DEVICE)
"""Columns any table may gain: the ``file`` key of several files read at once, ``device_id`` of an nsys
table read ``--per-device``."""

TABLES: dict[str, dict[str, str]] = {key: {c.name: c.meaning for c in cs} for key, cs in COLUMNS.items()}
"""``AREA.TABLE`` -> column -> its one-line meaning."""

COMMON: dict[str, str] = {c.name: c.meaning for c in COMMON_COLUMNS}

LIBRARY_TABLES = frozenset({"nsys.operations"})
"""Tables of the Python API that no command prints (``nsys.Report.operations()``: what the HTML
timeline draws)."""

# Areas whose commands read evidence: every field of their JSON data has a definition.
READING_AREAS = ("nsys", "torch", "ncu", "sass", "compiler", "stats", "map", "profile")


def qualified(area: str, table: str) -> str:
    """The definitions key of table ``table`` printed by a command of ``area``."""
    return f"{area}.{table.removeprefix(area + '_')}"


COMMAND_TABLES: dict[str, str] = {
    "nsys.kernels": "nsys.cuda_gpu_kern_sum",
    "nsys.api": "nsys.cuda_api_sum",
    "nsys.mem": "nsys.memory",
    "nsys.nvtx": "nsys.nvtx_ranges",
    "torch.timeline": "torch.streams",
    "ncu.summary": "ncu.kernels",
    "profile.diff": "profile.keys",
    "nsys.critical-path": "nsys.critical_path",
    "torch.critical-path": "torch.critical_path",
}
"""``AREA.COMMAND`` -> the table that command prints, where the two names differ (people ask for the
command they ran; ``tests/test_fields.py`` runs each command and checks this)."""


def resolve(name: str) -> list[str]:
    """The table keys ``name`` may mean: a key itself, ``AREA.AREA_TABLE``, ``AREA.COMMAND`` (the table
    the command prints), or a bare ``data.table.name`` (``ncu_launches``, ``cuda_gpu_kern_sum``; ``gaps``
    is both ``nsys.gaps`` and ``torch.gaps``)."""
    if name in TABLES:
        return [name]
    area, dot, table = name.partition(".")
    if dot:
        key = qualified(area, table)
        if key in TABLES:
            return [key]
        return [COMMAND_TABLES[name]] if name in COMMAND_TABLES else []
    areas = sorted({key.split(".", 1)[0] for key in TABLES})
    return sorted({qualified(a, name) for a in areas} & set(TABLES))


_JSON_TYPES = {"String": "string", "Boolean": "boolean", "Float64": "number"}


def _json_type(dtype: str) -> str:
    if dtype.startswith("List"):
        return "array"
    return _JSON_TYPES.get(dtype, "integer")


def row_schema(key: str) -> dict[str, Any]:
    """The definitions of one table as a JSON Schema of its rows (what ``gpuopt schema KEY`` prints):
    each column's description, JSON type (null allowed: a fact may be absent), polars dtype and unit."""
    return {
        "title": key,
        "type": "object",
        "properties": {
            c.name: {
                "description": c.meaning,
                "type": [_json_type(c.dtype), "null"],
                "dtype": c.dtype,
                "unit": c.unit,
            }
            for c in COLUMNS[key]
        },
    }


def render(key: str) -> str:
    """One table's columns for people: name, dtype, unit and meaning, one per line."""
    cs = COLUMNS[key]
    name, dtype = max(len(c.name) for c in cs), max(len(c.dtype) for c in cs)
    unit = max(len(c.unit) for c in cs)
    shown = {c.name: "" if c.unit == "none" else c.unit for c in cs}
    return "\n".join(
        f"{c.name:<{name}}  {c.dtype:<{dtype}}  {shown[c.name]:<{unit}}  {c.meaning}" for c in cs
    )


@cache
def units() -> dict[str, str]:
    """Column name -> its unit, for every name whose declarations all agree (what people's tables scale
    by; ``tests/test_fields.py`` checks that every name's declarations agree)."""
    found: dict[str, set[str]] = {}
    for c in (*(c for cs in COLUMNS.values() for c in cs), *COMMON_COLUMNS):
        found.setdefault(c.name, set()).add(c.unit)
    return {name: next(iter(u)) for name, u in found.items() if len(u) == 1}


def columns_line(key: str) -> str:
    """One line naming a table's columns with their units: ``name, total_time_ns [ns], ...``."""
    return ", ".join(
        c.name if c.unit in ("none", "count", "id") else f"{c.name} [{c.unit}]" for c in COLUMNS[key]
    )


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def model_fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str | None]]:
    """Every field of ``model`` and of the models inside it, depth first: (dotted path, description).
    A list of models is written ``name[]``; a model met again on the same path is not entered twice."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        yield path, field.description
        inner = list(_models_in(field.annotation))
        listed = typing.get_origin(field.annotation) is list or "list[" in str(field.annotation)
        for sub in dict.fromkeys(inner):
            if sub is model:
                continue
            yield from model_fields(sub, f"{path}{'[]' if listed else ''}.")


def reading_documents() -> dict[str, type[BaseModel]]:
    """Schema name -> data model of every reading command's envelope."""
    from gpuopt.schemas import DATA_MODELS

    found = {}
    for name in DATA_MODELS:
        area = name.removeprefix("gpuopt.").split(".")[0]
        model = DATA_MODELS[name]
        if area in READING_AREAS and model is not None:
            found[name] = model
    return found


def markdown() -> str:
    """``references/fields.md``: every table's columns and every reading document's fields."""
    lines = [
        "# Fields: one-line definitions of every table column and JSON field",
        "",
        "Generated by `python -m gpuopt.fields > references/fields.md` from the column declarations (tables:",
        "`rust/src/<area>/fields.rs` where the engines compute them, a few Python-built columns next to",
        "their builders; see `gpuopt._columns`) and the pydantic models' descriptions (documents);",
        "`tests/test_fields.py` fails when a column or field has none, or when this file is stale.",
        "`gpuopt schema AREA.TABLE` prints one table; `gpuopt schema gpuopt.AREA.COMMAND/vN` the JSON",
        "Schema of a document, descriptions included. Units: ns, bytes, bytes_per_s, gbps (1 GB = 1e9",
        "bytes), pct (0-100), hz, cycles, flop, flop_per_s, flop_per_byte, count, ratio (dimensionless),",
        "id (a number that names something), input (the unit of the values read), per_row (the row's own",
        "`unit` column); text and flags have none.",
        "",
        "## Tables",
        "",
    ]
    for key in sorted(COLUMNS):
        lines += [f"### `{key}`", "", *_column_rows(COLUMNS[key]), ""]
    lines += ["### Columns any table may gain", "", *_column_rows(COMMON_COLUMNS)]
    lines += ["", "## Documents (`--json` data of the reading commands)", ""]
    for name, model in sorted(reading_documents().items()):
        lines += [f"### `{name}`", "", "| field | definition |", "|---|---|"]
        seen: set[str] = set()
        for path, text in model_fields(model):
            if path not in seen:
                seen.add(path)
                lines.append(f"| `data.{path}` | {_cell(text or '')} |")
        lines.append("")
    return "\n".join(lines)


def _column_rows(columns: tuple[Column, ...]) -> list[str]:
    rows = ["| column | dtype | unit | definition |", "|---|---|---|---|"]
    unit = {"none": ""}
    return rows + [
        f"| `{c.name}` | {c.dtype} | {unit.get(c.unit, c.unit)} | {_cell(c.meaning)} |" for c in columns
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
