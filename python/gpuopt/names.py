"""Names as users see them: one matching rule for every option that names a range, kernel or op.

A given name matches a known name when, after collapsing whitespace, it is
- the whole name (``:decode_step``, ``NCCL:allreduce``, ``aten::mm``), or
- the text of an NVTX tag without its domain: nsys prints a range of the default domain as ``:TEXT`` and
  one of domain D as ``D:TEXT``, so ``decode_step`` finds ``:decode_step`` and ``allreduce`` finds
  ``NCCL:allreduce`` (``aten::mm`` has no domain: its ``::`` is part of the text), or
- ``ProfilerStep`` / ``ProfilerStep#*`` for every ``ProfilerStep#N``.

A name that matches nothing is an error listing the closest known names (exit 2), never an empty answer;
one that matches tags of several domains is an error naming them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from gpuopt.errors import InputError

_SPACES = re.compile(r"\s+")
_STEP = re.compile(r"^ProfilerStep#(\d+|\*)$")


def _clean(name: str) -> str:
    return _SPACES.sub(" ", name).strip()


def _text(name: str) -> str | None:
    """The text of a ``DOMAIN:TEXT`` tag (``:TEXT`` for the default domain); None when it has no domain."""
    domain, sep, text = name.partition(":")
    if not sep or text.startswith(":") or not text:
        return None
    return text if ":" not in domain else None


def matches(given: str, name: str) -> bool:
    """Whether ``given`` names ``name`` under the rule above."""
    given, name = _clean(given), _clean(name)
    if given == name or _text(name) == given:
        return True
    return given in ("ProfilerStep", "ProfilerStep#*") and _STEP.match(name) is not None


def closest(given: str, names: Iterable[str], n: int = 5) -> list[str]:
    """Up to ``n`` known names nearest to ``given`` (by difflib's ratio, also against tag texts)."""
    known = sorted({_clean(x) for x in names})
    scored = []
    for name in known:
        texts = [name, _text(name) or name]
        ratio = max(difflib.SequenceMatcher(None, given.lower(), t.lower()).ratio() for t in texts)
        scored.append((-ratio, name))
    scored.sort()
    return [name for _, name in scored[:n]]


def resolve(given: str, names: Iterable[str], *, option: str, what: str) -> list[str]:
    """The known names ``given`` matches (one exact name, or the tags of one text in one domain);
    a typed error when it matches nothing or several domains."""
    known = sorted({_clean(x) for x in names})
    exact = [n for n in known if n == _clean(given)]
    if exact:
        return exact
    found = [n for n in known if matches(given, n)]
    steps = [n for n in found if _STEP.match(n)]
    if steps and len(steps) == len(found):
        return found
    if len(found) == 1:
        return found
    if found:
        raise InputError(
            "name_ambiguous",
            f"{option} {given!r} matches {len(found)} {what}s: {', '.join(found[:8])}",
            path=option,
            expected="one of them in full (DOMAIN:TEXT)",
            observed=", ".join(found[:8]),
        )
    raise unknown(given, known, option=option, what=what)


def unknown(
    given: str, names: Iterable[str], *, option: str, what: str, expected: str | None = None
) -> InputError:
    """The error of a filter that matched nothing: exit 2, the closest known names first."""
    near = closest(given, names)
    return InputError(
        "name_unknown",
        f"{option} {given!r} matches no {what}"
        + (f"; closest: {', '.join(near)}" if near else f"; there are no {what}s"),
        path=option,
        expected=expected or f"a {what} name as gpuopt prints it, or an NVTX range's text without its domain",
        observed=", ".join(near) if near else f"no {what}s",
    )
