"""One-line definitions of every column of every table gpuopt prints, and of every field of the reading
commands' JSON documents (from the pydantic models' descriptions).

A table is named ``AREA.TABLE``: the command's area and the table's ``data.table.name`` without the
area prefix (``nsys.cuda_gpu_kern_sum``, ``torch.ops``, ``ncu.launches`` for ``ncu_launches``).
``gpuopt schema AREA.TABLE`` prints one table's definitions; ``references/fields.md`` has them all
(``python -m gpuopt.fields > references/fields.md``); ``tests/test_fields.py`` runs every table command
on a fixture and fails on a column or model field without a definition.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from gpuopt.fields import _analyses, _ncu, _nsys, _paths_flops, _ranks, _sass, _stats, _torch

TABLES: dict[str, dict[str, str]] = {
    **_nsys.TABLES,
    **_torch.TABLES,
    **_paths_flops.TABLES,
    **_ncu.TABLES,
    **_sass.TABLES,
    **_stats.TABLES,
    **_ranks.TABLES,
    **_analyses.TABLES,
}

COMMON: dict[str, str] = {**_ranks.MANY, **_ranks.PER_DEVICE}
"""Columns any table may gain: the ``file`` key of several files read at once, ``device_id`` of an nsys
table read ``--per-device``."""

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


def undefined(key: str, columns: list[str]) -> list[str]:
    """The columns of ``columns`` that table ``key`` does not define (all of them for an unknown table)."""
    known = TABLES.get(key, {})
    return [c for c in columns if c not in known and c not in COMMON]


def row_schema(key: str) -> dict[str, Any]:
    """The definitions of one table as a JSON Schema of its rows (what ``gpuopt schema KEY`` prints)."""
    return {
        "title": key,
        "type": "object",
        "properties": {name: {"description": text} for name, text in TABLES[key].items()},
    }


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
        "Generated by `python -m gpuopt.fields > references/fields.md` from `python/gpuopt/fields/` (tables)",
        "and the pydantic models' descriptions (documents); `tests/test_fields.py` fails when a column or",
        "field has none, or when this file is stale. `gpuopt schema AREA.TABLE` prints one table;",
        "`gpuopt schema gpuopt.AREA.COMMAND/vN` the JSON Schema of a document, descriptions included.",
        "",
        "## Tables",
        "",
    ]
    for key in sorted(TABLES):
        lines += [f"### `{key}`", "", "| column | definition |", "|---|---|"]
        lines += [f"| `{c}` | {_cell(text)} |" for c, text in TABLES[key].items()]
        lines.append("")
    lines += ["### Columns any table may gain", "", "| column | definition |", "|---|---|"]
    lines += [f"| `{c}` | {_cell(text)} |" for c, text in COMMON.items()]
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
