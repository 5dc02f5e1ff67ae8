"""The one strict JSON reader and the one JSON hasher of the evaluation core.

Reading goes through the native strict parser first (duplicate keys, ``NaN``/``Infinity``, a BOM, invalid
UTF-8 and integers beyond ±(2^53-1) are ``json_invalid`` with the JSON path), then through a strict pydantic
model (``field_unknown``, ``field_missing``, ``field_invalid`` with the path). Hashing is SHA-256 of the RFC
8785 canonical form produced natively, so Python and Rust agree on every id.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gpuopt import _native
from gpuopt.errors import InputError

M = TypeVar("M", bound=BaseModel)

MAX_REQUEST_BYTES = 4 << 20
MAX_DRIVER_RESULT_BYTES = 16 << 20
MAX_RECORD_BYTES = 64 << 20


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical bytes of a JSON-able value (no trailing newline)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return _native.canonical_json(text.encode("utf-8"))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """SHA-256 of the canonical form: the one way an identity is computed."""
    return sha256_hex(canonical(value))


def record_bytes(value: Any) -> bytes:
    """What a record file holds: canonical JSON and a newline."""
    return canonical(value) + b"\n"


def parse(data: bytes, *, max_bytes: int = MAX_REQUEST_BYTES, what: str = "document") -> Any:
    """Strictly parses JSON bytes into Python values."""
    if len(data) > max_bytes:
        raise InputError(
            "json_invalid",
            f"the {what} is {len(data)} bytes, above the limit",
            path="$",
            expected=f"<= {max_bytes} bytes",
            observed=str(len(data)),
        )
    _native.canonical_json(data)  # raises json_invalid with the JSON path
    return json.loads(data)


def json_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic location as gpuopt prints JSON paths: ``subjects[1].measurements.step_time_ms``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part and all(c.isalnum() or c in "_-" for c in part) and part.isascii():
            out += ("." if out else "") + part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out or "$"


_CODE_BY_TYPE = {"extra_forbidden": "field_unknown", "missing": "field_missing"}


def _clean_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    # Drop pydantic's union-member tags ("function-after[...]", "list[...]", model names) from paths.
    return tuple(p for p in loc if not (isinstance(p, str) and ("[" in p or p[:1].isupper())))


def shape_of_json(value: Any) -> str:
    """A request value as an error shows it: its JSON type and size, never its text (a value in the wrong
    field, or a file that is not a request at all, may hold a secret)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if isinstance(value, (list, tuple)):
        return f"an array of {len(value)} items"
    if isinstance(value, dict):
        return f"an object with {len(value)} keys"
    return type(value).__name__


def violations_of(exc: ValidationError) -> list[dict[str, str]]:
    """Every pydantic error as ``{code, path, message, observed}``."""
    out = []
    for err in exc.errors(include_url=False):
        loc = _clean_loc(tuple(err["loc"]))
        code = _CODE_BY_TYPE.get(err["type"], "field_invalid")
        shown = shape_of_json(err.get("input")) if code == "field_invalid" else ""
        out.append({"code": code, "path": json_path(loc), "message": err["msg"], "observed": shown})
    return out


def validate(model: type[M], value: Any, *, what: str) -> M:
    """Validates a parsed value against a strict model; the first error is raised with code and path."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        found = violations_of(exc)
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise InputError(
            first["code"],
            f"{what}: {first['path']}: {first['message']}{more}",
            path=first["path"],
            observed=first["observed"] or None,
        ) from None


def load(model: type[M], data: bytes, *, what: str, max_bytes: int = MAX_REQUEST_BYTES) -> M:
    """Strict bytes -> strict model."""
    return validate(model, parse(data, max_bytes=max_bytes, what=what), what=what)
