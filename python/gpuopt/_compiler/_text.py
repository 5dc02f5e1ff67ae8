"""Reading small compiler reports as text, with the errors the CLI contract asks for."""

from __future__ import annotations

import os
from pathlib import Path

from gpuopt._files import read_bounded
from gpuopt.errors import FormatError
from gpuopt.models.envelope import UnmodeledItem


def read_text(path_or_text: str | os.PathLike[str] | bytes, what: str) -> tuple[str, Path | None]:
    """The report's text and its path (None for text given directly). Binary bytes are a FormatError."""
    if isinstance(path_or_text, bytes):
        data, path = path_or_text, None
    elif isinstance(path_or_text, str) and "\n" in path_or_text:
        return path_or_text, None
    else:
        path = Path(path_or_text)
        data = read_bounded(path, what)
    if b"\x00" in data:
        raise FormatError(
            "format_invalid",
            f"the {what} holds binary data",
            path=None if path is None else str(path),
            expected=f"{what} text",
        )
    try:
        return data.decode("utf-8"), path
    except UnicodeDecodeError as exc:
        raise FormatError(
            "format_invalid",
            f"the {what} is not UTF-8 text: {exc}",
            path=None if path is None else str(path),
            expected=f"{what} text",
        ) from exc


def truncation(what: str) -> UnmodeledItem:
    """The coverage flag of a listing that seems cut off: facts may be missing, none is invented."""
    return UnmodeledItem(kind="truncation", name=what, count=1)


def complete_lines(text: str) -> tuple[list[str], list[UnmodeledItem]]:
    """The lines of a tool's listing, leaving out a last line without its newline.

    Tools end every line with a newline, so a last line without one was cut off mid-way; parsing it
    would turn ``Used 22 registers`` cut to ``Used 2`` into a wrong number. It is dropped and flagged.
    """
    lines = text.splitlines()
    if not text or text.endswith(("\n", "\r")) or not lines:
        return lines, []
    cut = lines.pop()
    if not cut.strip():
        return lines, []
    return lines, [truncation(f"last line cut off (no newline): {cut.strip()[:60]}")]


# The most a count can be: a thread's registers cannot exceed an SM's register file (64 Ki 32-bit
# registers on every architecture so far; 255 per thread is today's limit), a barrier count the 16
# named barriers, byte sizes 2^48 (256 TiB, past any GPU's memory). Past these, or negative, the text
# is not the compiler's: `format_invalid`, never a number reported as read.
_MOST = {"registers": 1 << 16, "barriers": 16}
_MOST_BYTES = 1 << 48


def count(text: str, what: str) -> int:
    """A count a compiler report printed (ptxas, cuobjdump -res-usage), within what it can print
    (``_MOST``); anything else is ``format_invalid``."""
    value = int(text)
    most = _MOST.get(what, _MOST_BYTES)
    if not 0 <= value <= most:
        shown = "negative" if value < 0 else f"{len(text)} digits, above {most}"
        raise FormatError(
            "format_invalid",
            f"the report's `{what}` count is {shown}: not one a compiler prints",
            expected=f"{what} from 0 to {most}",
            observed=shown,
        )
    return value
