"""The one grammar and the one error code of ``--window``: ``START:END`` where each side is an integer
number of ns or a number with a unit (``ns``, ``us``, ``ms``, ``s``), e.g. ``7230419477:7232068021`` or
``7.2s:7.3s``. ``gpuopt nsys`` and ``gpuopt map`` both read it here, so the same text gets the same code
(``window_invalid``) and the same message; an area only says whether a side may be left open (nsys) or
the window must start at or after 0 (map)."""

from __future__ import annotations

import re
from fractions import Fraction

from gpuopt.errors import InputError

CODE = "window_invalid"
_TIME_EXPECTED = "an integer number of ns, or a number with ns, us, ms or s"
_UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# ASCII only: `\d` alone also matches other scripts' digits (full-width U+FF10..), which Fraction reads.
_TIME = re.compile(r"^\s*(-?\d+(?:\.\d*)?)\s*(ns|us|ms|s)?\s*$", re.ASCII)
GRAMMAR = "START:END, e.g. 7230419477:7232068021 or 7.2s:7.3s"


def _error(message: str, expected: str, observed: str) -> InputError:
    return InputError(CODE, message, path="window", expected=expected, observed=observed)


def parse_time(text: str) -> int:
    """``"7230419477"``, ``"7.23s"``, ``"150ms"`` -> integer ns (the file's clock)."""
    match = _TIME.match(text)
    if not match:
        raise _error(
            f"cannot read {text!r} as a time",
            "an integer number of ns, or a number with ns, us, ms or s",
            text,
        )
    value, unit = match.group(1), match.group(2) or "ns"
    ns = round(Fraction(value) * _UNITS_NS[unit])  # exact: no float overflow or rounding drift
    if not -(2**63) <= ns < 2**63:
        raise _error(
            f"{text!r} is outside the file's 64-bit ns clock", "a time between -2^63 and 2^63 - 1 ns", text
        )
    return ns


def parse_window(text: str, *, open_ends: bool) -> tuple[int | None, int | None]:
    """``"START:END"`` -> ``(start_ns, end_ns)``, START < END when both are given; with ``open_ends``
    either side may be empty (None)."""
    sides = text.split(":")
    if len(sides) != 2 or (not open_ends and not all(s.strip() for s in sides)):
        raise _error(f"cannot read {text!r} as a window", GRAMMAR, text)
    start_text, end_text = (s.strip() for s in sides)
    start = parse_time(start_text) if start_text else None
    end = parse_time(end_text) if end_text else None
    if start is not None and end is not None and end <= start:
        raise _error(f"the window {text} is empty", "START < END", text)
    return start, end


def check_closed(start: int, end: int, observed: str) -> None:
    """``0 <= START < END`` (the map's windows), with the messages :func:`parse_window` gives."""
    if end <= start:
        raise _error(f"the window {observed} is empty", "START < END", observed)
    if start < 0:
        raise _error(f"the window {observed} starts before 0", "0 <= START < END", observed)


def parse_closed_window(text: str) -> tuple[int, int]:
    """A window with both ends, ``0 <= START < END``."""
    start, end = parse_window(text, open_ends=False)
    if start is None or end is None:  # parse_window(open_ends=False) returns both ends
        raise _error(f"cannot read {text!r} as a window", GRAMMAR, text)
    check_closed(start, end, text)
    return start, end
