"""Each inbound line judged against JSON-RPC 2.0 before the SDK sees it: a message, a refusal, or nothing.

The SDK's own stdio reader drops whatever it cannot parse without a word; here every line that is not a
valid message gets the error the JSON-RPC 2.0 spec names, with the request's ``id`` when it can be found
(even in a cut or broken line: ``recover_id``) and ``null`` otherwise. A valid notification is never
answered, whatever its method; an object that is not a valid message is answered even without an ``id``
(the spec's own examples do so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

from gpuopt.mcp_server.framing import MESSAGE_CAP_BYTES, Oversized

RequestId = int | str
_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


@dataclass(frozen=True)
class Refusal:
    """The error reply to a line that is not a valid message."""

    id: RequestId | None
    code: int
    message: str
    data: dict[str, Any] | None = None

    def reply(self) -> types.JSONRPCError:
        error = types.ErrorData(code=self.code, message=self.message)
        if self.data is not None:
            error.data = self.data
        return types.JSONRPCError(jsonrpc="2.0", id=self.id, error=error)


def _valid_id(value: object) -> RequestId | None:
    """An id MCP allows (a string or an integer, never a boolean), else None."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def recover_id(text: str) -> RequestId | None:
    """The ``id`` member of a top-level JSON object, read up to where the text breaks off or goes wrong."""
    try:
        at = _skip(text, 0)
        if text[at : at + 1] != "{":
            return None
        at += 1
        while True:
            key, at = _DECODER.raw_decode(text, _skip(text, at))
            at = _skip(text, at)
            if text[at : at + 1] != ":":
                return None
            value, at = _DECODER.raw_decode(text, _skip(text, at + 1))
            if key == "id":
                return _valid_id(value)
            at = _skip(text, at)
            if text[at : at + 1] != ",":
                return None
            at += 1
    except (ValueError, RecursionError):
        return None


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _has_lone_surrogate(document: object) -> bool:
    """Whether any string (or key) holds a lone UTF-16 surrogate, which no UTF-8 text can carry."""
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _parse(line: bytes) -> Any | Refusal:
    text = line.decode("utf-8", errors="replace")
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(recover_id(text), PARSE_ERROR, f"not UTF-8 text: invalid byte at offset {exc.start}")
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return Refusal(recover_id(text), PARSE_ERROR, f"not JSON at character {exc.pos}: {exc.msg}")
    except ValueError as exc:  # NaN, Infinity
        return Refusal(recover_id(text), PARSE_ERROR, str(exc))
    except RecursionError:
        return Refusal(recover_id(text), PARSE_ERROR, "not JSON this parser can read: nested too deeply")
    if _has_lone_surrogate(document):
        found = _valid_id(document.get("id")) if isinstance(document, dict) else None
        return Refusal(found, PARSE_ERROR, "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff escape)")
    return document


def _shape(document: dict[str, Any]) -> Refusal | None:
    """Why an object is not a JSON-RPC 2.0 message MCP accepts, or None."""
    has_id = "id" in document
    found = _valid_id(document.get("id"))
    if has_id and found is None:
        return Refusal(None, INVALID_REQUEST, "id must be a string or an integer")
    if document.get("jsonrpc") != "2.0":
        return Refusal(found, INVALID_REQUEST, 'jsonrpc must be "2.0"')
    method = document.get("method")
    if "method" not in document:
        if has_id and ("result" in document or "error" in document):
            return None  # a response to a request of ours
        return Refusal(found, INVALID_REQUEST, "no method: a request needs a method (a string)")
    if not isinstance(method, str):
        return Refusal(found, INVALID_REQUEST, "method must be a string")
    params = document.get("params")
    if "params" in document and not isinstance(params, dict):
        code = INVALID_PARAMS if isinstance(params, list) else INVALID_REQUEST
        return Refusal(found, code, "params must be an object")
    return None


def classify(item: bytes | Oversized) -> types.JSONRPCMessage | Refusal | None:
    """A line as the message to hand to the SDK, the refusal to send back, or None (nothing to do)."""
    if isinstance(item, Oversized):
        found = recover_id(item.prefix.decode("utf-8", errors="replace"))
        message = f"message of {item.size_bytes} bytes refused: the cap is {MESSAGE_CAP_BYTES} bytes (16 MiB)"
        return Refusal(found, INVALID_REQUEST, message, {"limit_bytes": MESSAGE_CAP_BYTES})
    if not item.strip():
        return None
    document = _parse(item)
    if isinstance(document, Refusal):
        return document
    if isinstance(document, list):
        return Refusal(
            None, INVALID_REQUEST, "a batch (JSON array) is not an MCP message: one object per line"
        )
    if not isinstance(document, dict):
        return Refusal(None, INVALID_REQUEST, "a message is a JSON object")
    # A notification (a method, no id) is never answered; nor is a response, which answers nothing here.
    answerable = "id" in document or not isinstance(document.get("method"), str)
    refusal = _shape(document)
    if refusal is not None:
        return refusal if answerable else None
    try:
        return types.jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError:
        request = "method" in document and "id" in document
        found = _valid_id(document.get("id"))
        return Refusal(found, INVALID_REQUEST, "not a JSON-RPC 2.0 message") if request else None
