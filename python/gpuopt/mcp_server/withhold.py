"""Errors sent over MCP name the file, the position and the expected shape, never the input's content.

The engines' messages were written for a person at a terminal, who may read the file anyway; some quote
what they found (a first line, the first bytes, a header's names, a cell). Over MCP the reader is an
agent that may not be allowed to read the file, so an error must not become a way to read it. Before an
error envelope goes out, every quoted span of its ``message``, ``expected`` and ``observed``, each
``": "``-separated part of them and the whole ``observed`` are looked for in the call's input files (its
file arguments and the error's ``path``), also unescaped (``\\n``, ``\\xNN``, ``\\u{..}``) and, for a list of
hex bytes, as those bytes; whatever occurs there becomes ``<input text withheld>``. The first
``SEARCH_CAP_BYTES`` of each file are searched. ``code``, ``path`` and positions (line, byte, counts) stay.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
from collections.abc import Iterable, Iterator
from typing import Any

SEARCH_CAP_BYTES = 64 * 1024 * 1024
PLACEHOLDER = "<input text withheld>"
_CHUNK_BYTES = 1024 * 1024
_FIELDS = ("message", "expected", "observed")
_QUOTES = ('"', "'", "`")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|[nrt0\"'\\])")
_HEX_BYTES = re.compile(r"^\[?\s*(?:0x)?[0-9a-fA-F]{2}(?:[,\s]+(?:0x)?[0-9a-fA-F]{2})*\s*\]?$")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str, raw_bytes: bool) -> bytes:
    """``text`` with Rust/Python escapes undone; ``\\xNN`` as a raw byte, or as U+00NN in UTF-8."""
    out = bytearray()
    at = 0
    for m in _ESCAPE.finditer(text):
        out += text[at : m.start()].encode("utf-8", "surrogateescape")
        code = m.group(1)
        if code[0] == "x" and raw_bytes:
            out.append(int(code[1:], 16))
        elif code[0] in "xu" and len(code) > 1:
            out += chr(int(code.strip("xu{}"), 16)).encode("utf-8", "surrogatepass")
        else:
            out += _SIMPLE[code].encode()
        at = m.end()
    return bytes(out + text[at:].encode("utf-8", "surrogateescape"))


def _variants(text: str) -> set[bytes]:
    """The byte strings ``text`` may have been made from."""
    text = text.strip().removesuffix("…").removesuffix("...").strip()
    found = {text.encode("utf-8", "surrogateescape"), _unescape(text, True), _unescape(text, False)}
    found |= {piece.encode() for piece in text.split("\ufffd") if len(piece) >= 3}
    if _HEX_BYTES.match(text) and len(text) > 2:
        with contextlib.suppress(ValueError):
            found.add(bytes.fromhex(re.sub(r"0x|[\[\],\s]", "", text)))
    return {v for v in found if v}


def _spans(text: str, whole: bool) -> Iterator[tuple[int, int]]:
    """(start, end) of each span to look for: between neighbouring quotes (quotes included), each
    ``": "``-separated part, and the whole text when ``whole``."""
    for quote in _QUOTES:
        at = [i for i, c in enumerate(text) if c == quote and (i == 0 or text[i - 1] != "\\")]
        yield from ((a, b + 1) for a, b in itertools.pairwise(at))
    start = 0
    for part in text.split(": "):
        yield start, start + len(part)
        start += len(part) + 2
    if whole:
        yield 0, len(text)


def _inner(text: str, start: int, end: int) -> str:
    span = text[start:end]
    return span[1:-1] if len(span) >= 2 and span[0] == span[-1] and span[0] in _QUOTES else span


def _regular(path: str) -> int | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    os.close(fd)
    return None


def _occurring(candidates: set[bytes], files: Iterable[str]) -> set[bytes]:
    """The candidates that occur in the first ``SEARCH_CAP_BYTES`` of any of ``files``."""
    found: set[bytes] = set()
    overlap = max((len(c) for c in candidates), default=1) - 1
    for path in dict.fromkeys(files):
        fd = _regular(path)
        if fd is None:
            continue
        with os.fdopen(fd, "rb") as f:
            tail, read = b"", 0
            while read < SEARCH_CAP_BYTES and candidates - found:
                try:
                    chunk = f.read(_CHUNK_BYTES)
                except OSError:  # /proc/self/mem and the like: "regular", yet unreadable
                    break
                if not chunk:
                    break
                read += len(chunk)
                window = tail + chunk
                found |= {c for c in candidates - found if c in window}
                tail = window[-overlap:] if overlap else b""
    return found


def _rewrite(text: str, whole: bool, found: set[bytes]) -> str:
    masked = [False] * len(text)
    for start, end in _spans(text, whole):
        if _variants(_inner(text, start, end)) & found:
            masked[start:end] = [True] * (end - start)
    out, at = [], 0
    while at < len(text):
        if not masked[at]:
            out.append(text[at])
            at += 1
            continue
        while at < len(text) and masked[at]:
            at += 1
        out.append(PLACEHOLDER)
    return "".join(out)


def withhold(errors: list[dict[str, Any]], files: list[str]) -> list[dict[str, Any]]:
    """``errors`` (envelope items) with the text that occurs in ``files`` or in an error's ``path``
    replaced by ``PLACEHOLDER``."""
    candidates: set[bytes] = set()
    paths = list(files)
    for error in errors:
        if isinstance(error.get("path"), str):
            paths.append(error["path"])
        for field in _FIELDS:
            text = error.get(field)
            if isinstance(text, str):
                for start, end in _spans(text, field == "observed"):
                    candidates |= _variants(_inner(text, start, end))
    found = _occurring(candidates, paths) if candidates else set()
    if not found:
        return errors
    out = []
    for error in errors:
        fixed = dict(error)
        for field in _FIELDS:
            if isinstance(error.get(field), str):
                fixed[field] = _rewrite(error[field], field == "observed", found)
        out.append(fixed)
    return out
