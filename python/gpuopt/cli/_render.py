"""Plain-text rendering helpers for people (``--json`` is the format for programs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuopt.models.flops import PerfettoExport


def section(title: str, rows: Iterable[tuple[str, object]], *, wrap: bool = False) -> str:
    """A titled block of ``key: value`` lines, aligned; None shows as an em dash. ``wrap``: long values
    wrap at spaces under their own column, so the block stays in 120 characters (not for values meant to
    be copied whole, such as a reference)."""
    import textwrap

    pairs = [(k, "—" if v is None else str(v)) for k, v in rows]
    width = max((len(k) for k, _ in pairs), default=0)
    lines = [title]
    for k, v in pairs:
        if not wrap or "\n" in v:
            lines.append(f"  {k.ljust(width)}  {v}")
            continue
        parts = textwrap.wrap(v, 120 - width - 4, break_long_words=False, break_on_hyphens=False) or [""]
        lines.append(f"  {k.ljust(width)}  {parts[0]}")
        lines += [" " * (width + 4) + p for p in parts[1:]]
    return "\n".join(lines)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A left-aligned text table."""
    cells = [["—" if c is None else str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells]
    return "\n".join(out)


def render_export(data: PerfettoExport) -> str:
    """``gpuopt nsys|torch export perfetto``: the file written and what it holds."""
    return (
        f"wrote {data.out}: {data.tracks} tracks, {data.slices} slices, {data.flows} flows, "
        f"{data.bytes} bytes (open it in https://ui.perfetto.dev)"
    )
