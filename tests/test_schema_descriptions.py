"""Every field of every published schema, requests included, has a description (issue 29, "Facts declared
once"): the envelopes ``gpuopt schema`` prints (every reading command's, every evaluation verb's from the
operations registry, the ones each ``--help`` names), the records, requests and driver files
(``gpuopt schema``'s documents), the tables' row schemas (``references/fields.md``) and the MCP tools' input
schemas.

The rule: a property is described by its own ``description``. A ``$ref`` to a model with a docstring does
not count: the docstring says what the type is, the property's description what it is *here* (a pair's
``reference`` and ``candidate`` share one type). Every schema is built once and walked whole: nested
objects, array items, unions and ``$defs``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpuopt import fields, schemas
from gpuopt.agent_tools import input_schema, tools
from gpuopt.cli import cli
from gpuopt.models._base import Model

# Keys whose values are data, not schemas (a default may hold a key named "properties").
_VALUES = frozenset({"default", "const", "enum", "examples"})


def undescribed(schema: Any, path: str = "") -> list[str]:
    """The JSON path of every property without a description, depth first."""
    missing: list[str] = []
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            missing += undescribed(item, f"{path}[{i}]")
    elif isinstance(schema, dict):
        for key, value in schema.items():
            here = f"{path}.{key}" if path else key
            if key == "properties" and isinstance(value, dict):
                for name, prop in value.items():
                    if not (isinstance(prop, dict) and str(prop.get("description", "")).strip()):
                        missing.append(f"{here}.{name}")
                    missing += undescribed(prop, f"{here}.{name}")
            elif key not in _VALUES:
                missing += undescribed(value, here)
    return missing


def published() -> dict[str, Any]:
    """Schema name -> JSON Schema of everything gpuopt publishes (a document model shared by several names,
    such as the result formats v1 to v3, is built once)."""
    out: dict[str, Any] = {name: schemas.json_schema(name) for name in schemas.ENVELOPES}
    built: dict[Any, Any] = {}
    for name, model in schemas.DOCUMENTS.items():
        if model not in built:
            built[model] = schemas.document_schema(name)
        out[name] = built[model]
    out.update({key: fields.row_schema(key) for key in fields.TABLES})
    out.update({f"mcp:{tool.name}": input_schema(tool.command) for tool in tools(cli)})
    return out


def test_every_published_field_has_a_description() -> None:
    found = published()
    assert len(found) > 300, sorted(found)
    missing = [f"{name}: {path}" for name, schema in found.items() for path in undescribed(schema)]
    assert not missing, f"{len(missing)} fields without a description:\n" + "\n".join(missing)


def test_every_envelope_a_help_names_is_published() -> None:
    """``--help`` ends "Output: ... one NAME envelope (gpuopt schema NAME describes every field)"."""
    named = {getattr(t.command.callback, "gpuopt_schema", None) for t in tools(cli)}
    assert len(named) > 50
    assert named - {None} <= set(schemas.ENVELOPES)


class _Inner(Model):
    described: int = Field(description="Described")
    bare: int


class _Outer(Model):
    inner: list[_Inner] = Field(description="Items of a model with an undescribed field")
    typed: _Inner
    optional: int | None = None


def test_the_walk_finds_each_undescribed_field_wherever_it_is() -> None:
    assert undescribed(_Outer.model_json_schema()) == [
        "$defs._Inner.properties.bare",
        "properties.typed",
        "properties.optional",
    ]
    assert undescribed({"type": "object", "properties": {"a": {"type": "string", "description": " "}}}) == [
        "properties.a"
    ]
