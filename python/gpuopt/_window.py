"""The one grammar of ``--window``: ``START:END`` where each side is an integer number of ns or a number with
a unit (``ns``, ``us``, ``ms``, ``s``), e.g. ``7230419477:7232068021`` or ``7.2s:7.3s``. Each area keeps
its own stable error code (``nsys_window_invalid``, ``window_invalid``) and says whether a side may be
left open."""

from __future__ import annotations

import re
from fractions import Fraction

from gpuopt.errors import InputError

_UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*(-?\d+(?:\.\d*)?)\s*(ns|us|ms|s)?\s*$")
GRAMMAR = "START:END, e.g. 7230419477:7232068021 or 7.2s:7.3s"


def parse_time(text: str, *, code: str) -> int:
    """``"7230419477"``, ``"7.23s"``, ``"150ms"`` -> integer ns (the file's clock)."""
    match = _TIME.match(text)
    if not match:
        raise InputError(
            code,
            f"cannot read {text!r} as a time",
            path="window",
            expected="an integer number of ns, or a number with ns, us, ms or s",
            observed=text,
        )
    value, unit = match.group(1), match.group(2) or "ns"
    ns = round(Fraction(value) * _UNITS_NS[unit])  # exact: no float overflow or rounding drift
    if not -(2**63) <= ns < 2**63:
        raise InputError(
            code,
            f"{text!r} is outside the file's 64-bit ns clock",
            path="window",
            expected="a time between -2^63 and 2^63 - 1 ns",
            observed=text,
        )
    return ns


def parse_window(text: str, *, code: str, open_ends: bool) -> tuple[int | None, int | None]:
    """``"START:END"`` -> ``(start_ns, end_ns)``; with ``open_ends`` either side may be empty (None)."""
    sides = text.split(":")
    if len(sides) != 2 or (not open_ends and not all(s.strip() for s in sides)):
        either = " (either side may be empty)" if open_ends else ""
        raise InputError(
            code, f"cannot read {text!r} as a window", path="window", expected=GRAMMAR + either, observed=text
        )
    start, end = (s.strip() for s in sides)
    return (parse_time(start, code=code) if start else None, parse_time(end, code=code) if end else None)


def parse_closed_window(text: str, *, code: str) -> tuple[int, int]:
    """A window with both ends, ``0 <= START < END``."""
    start, end = parse_window(text, code=code, open_ends=False)
    if start is None or end is None or not 0 <= start < end:
        raise InputError(
            code,
            "the window needs 0 <= START < END",
            path="window",
            expected="0 <= START < END",
            observed=text,
        )
    return start, end
