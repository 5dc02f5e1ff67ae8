"""A tool call's arguments checked against the tool's input schema, then against what argv can carry.

Every problem becomes one typed error item (``argument_unknown`` with the accepted names and the close
misses, ``argument_missing``, ``argument_invalid``, ``argument_too_long``); the values themselves are never
quoted back (they may be large), only their JSON types. The schema is the one ``tools/list`` shows
(``agent_tools.input_schema``), so what is advertised is what is enforced.
"""

from __future__ import annotations

import difflib
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from gpuopt.models.envelope import ErrorItem

# Linux refuses one argv string over 128 KiB (MAX_ARG_STRLEN) and argv + environment over ARG_MAX.
ARGUMENT_CAP_BYTES = 64 * 1024
ARGV_CAP_BYTES = 1024 * 1024
_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number"}


def _json_type(value: object) -> str:
    return _JSON_TYPES.get(type(value), "null" if value is None else type(value).__name__)


def _where(error: ValidationError) -> str:
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _shape(schema: dict[str, Any]) -> str:
    """A schema in words: ``an integer >= 0``, ``one of: a, b``, ``an array of strings``."""
    if "enum" in schema:
        return "one of: " + ", ".join(str(v) for v in schema["enum"])
    kind = schema.get("type", "any value")
    if kind == "array":
        return f"an array of {_shape(schema.get('items', {})).removeprefix('a ').removeprefix('an ')}s"
    words = {"integer": "an integer", "number": "a number", "boolean": "a boolean", "string": "a string"}
    text = words.get(kind, kind)
    bounds = [f">= {schema['minimum']}"] if "minimum" in schema else []
    bounds += [f"<= {schema['maximum']}"] if "maximum" in schema else []
    return " ".join([text, " and ".join(bounds)]) if bounds else text


def _unknown(names: list[str], accepted: list[str], tool: str) -> list[ErrorItem]:
    items = []
    for name in names:
        near = difflib.get_close_matches(name, accepted, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
        message = f"{tool} has no argument {name[:80]!r}{hint}; it takes: {', '.join(accepted) or 'none'}"
        items.append(
            ErrorItem(code="argument_unknown", message=message, path=name[:80], expected=", ".join(accepted))
        )
    return items


def _problem(error: ValidationError, schema: dict[str, Any], tool: str) -> list[ErrorItem]:
    properties: dict[str, Any] = schema["properties"]
    if error.validator == "additionalProperties":
        return _unknown(sorted(set(error.instance) - set(properties)), list(properties), tool)
    if error.validator == "required":
        missing = [n for n in error.validator_value if n not in error.instance]
        return [
            ErrorItem(
                code="argument_missing",
                message=f"{tool} needs the argument {n!r} ({_shape(properties[n])})",
                path=n,
                expected=_shape(properties[n]),
            )
            for n in missing
        ]
    where = _where(error)
    expected = _shape(error.schema if isinstance(error.schema, dict) else {})
    message = f"argument {where}: expected {expected}, got {_json_type(error.instance)}"
    if error.validator in ("minimum", "maximum", "enum"):
        message = f"argument {where}: expected {expected}"
    return [ErrorItem(code="argument_invalid", message=message, path=where, expected=expected)]


def _strings(value: object, where: str) -> list[tuple[str, str]]:
    if isinstance(value, list):
        return [(f"{where}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str)]
    return [(where, value)] if isinstance(value, str) else []


def _argv_problem(where: str, text: str) -> ErrorItem | None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if "\0" in text:
        message = f"argument {where} holds a NUL character, which no command-line argument can carry"
        return ErrorItem(
            code="argument_invalid", message=message, path=where, expected="a string without NUL"
        )
    if size > ARGUMENT_CAP_BYTES:
        message = f"argument {where} is {size} bytes, more than one argument may hold"
        expected = f"at most {ARGUMENT_CAP_BYTES} bytes"
        return ErrorItem(code="argument_too_long", message=message, path=where, expected=expected)
    return None


def _argv_problems(arguments: dict[str, Any]) -> list[ErrorItem]:
    """What the schema allows but a command line cannot carry: NUL, one huge string, a huge argv."""
    strings = [pair for name, value in arguments.items() for pair in _strings(value, name)]
    items = [item for where, text in strings if (item := _argv_problem(where, text)) is not None]
    total = sum(len(text.encode("utf-8", "surrogatepass")) for _, text in strings)
    if not items and total > ARGV_CAP_BYTES:
        message = f"the arguments are {total} bytes in all, more than a command line may hold"
        items.append(
            ErrorItem(code="argument_too_long", message=message, expected=f"at most {ARGV_CAP_BYTES} bytes")
        )
    return items


def check(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> list[ErrorItem]:
    """Every problem of ``arguments`` for ``tool`` (empty when the call may run)."""
    validator = Draft202012Validator(schema)
    items = [item for error in validator.iter_errors(arguments) for item in _problem(error, schema, tool)]
    return sorted(items, key=lambda i: (i.path or "", i.code)) or _argv_problems(arguments)
