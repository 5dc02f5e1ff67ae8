"""Tables for people: units scaled and labelled, key columns first, long names shortened in the middle,
wide tables of few rows transposed, a totals row where a sum means something; everything in 120 columns.

Only the terminal rendering: ``--json`` and ``--out`` carry the full, unscaled, unshortened table.
The unit of a column is the one its declaration gives (``gpuopt.fields``: ns become µs/ms/s, bytes
KB/MB/GB, bytes per second GB/s, ``pct`` a percent); a column no table declares falls back on the unit in
its name (STYLE: units in the name).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gpuopt._tables import label, split_aggregate

if TYPE_CHECKING:
    import polars as pl

WIDTH = 120
_GAP = 3  # rich's padding and separator between columns
_MAX_CELL = 40  # a long text cell is shortened to this many characters unless room is left over
_MIN_TEXT = 24  # ... and to no fewer than this to make room for more columns
_LAST_TEXT = 12  # ... or, for a text column that would be left out, to no fewer than this
_TRANSPOSE_ROWS = 3

# Columns whose sum over all rows is itself a fact (counts, sizes, total times, shares of one whole).
_ADDITIVE_NAMES = frozenset(
    {"instances", "count", "calls", "kernels", "launches", "memcpys", "memsets", "events", "bytes"}
)


def additive(column: str) -> bool:
    """Whether a column's sum is meaningful: counts, bytes, total time, share of time, durations."""
    return (
        column in _ADDITIVE_NAMES
        or column.endswith("_bytes")
        or column in ("num_calls", "total_bytes", "total_time_ns", "total_ns", "time_pct", "duration_ns")
    )


def nested(frame: pl.DataFrame) -> bool:
    """Rows that may contain each other (NVTX ranges, torch ops: inclusive vs self times) are never summed."""
    return any("inclusive" in c or c.startswith("self_") for c in frame.columns)


def shorten(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` characters (``abc…xyz``), so both ends stay readable."""
    if len(text) <= width or width < 5:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def _time(ns: float) -> str:
    a = abs(ns)
    if a < 1e3:
        return f"{ns:,.0f} ns"
    if a < 1e6:
        return f"{ns / 1e3:,.2f} µs"
    if a < 1e9:
        return f"{ns / 1e6:,.2f} ms"
    return f"{ns / 1e9:,.3f} s"


def _size(b: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(b) >= scale:
            return f"{b / scale:,.2f} {unit}"
    return f"{b:,.0f} B"


def _number(v: float) -> str:
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.0f}" if abs(v) >= 1e5 else f"{v:.4g}"


_SCALES: dict[str, Callable[[Any], str]] = {
    "ns": _time,
    "bytes": _size,
    "gbps": lambda v: f"{v:,.1f} GB/s",
    "bytes_per_s": lambda v: f"{v / 1e9:,.1f} GB/s",
    "flop_per_s": lambda v: f"{v / 1e12:,.2f} TFLOP/s",
    "flop_per_byte": lambda v: f"{v:,.3g} FLOP/B",
    "pct": lambda v: f"{v:.1f} %",
}


def _unit_in_name(column: str) -> str | None:
    """The unit a column's name carries, for columns no table declares (a table built in a command)."""
    column, _ = split_aggregate(column)
    for suffix, unit in _NAME_UNITS:
        if column.endswith(suffix):
            return unit
    return "bytes" if column == "bytes" else None


_NAME_UNITS = (
    ("_ns", "ns"),
    ("_bytes", "bytes"),
    ("_gbps", "gbps"),
    ("_bytes_per_s", "bytes_per_s"),
    ("_flop_per_s", "flop_per_s"),
    ("_flop_per_byte", "flop_per_byte"),
    ("_pct", "pct"),
    ("_pct_of_peak", "pct"),
)


def formatter(column: str) -> Callable[[Any], str]:
    """How a column's values read: by its declared unit (``gpuopt.fields``), else the unit its name
    carries."""
    from gpuopt import fields

    unit = _SCALES.get(fields.units().get(column) or _unit_in_name(column) or "", _number)

    def fmt(value: Any) -> str:
        if value is None:
            return "—"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, (int, float)):
            return unit(value)
        text = str(value)
        indent = len(text) - len(text.lstrip(" "))  # a tree's indentation (torch paths) stays
        return " " * indent + " ".join(text.split())

    return fmt


def _is_text(column: str, cells: Sequence[str], frame: pl.DataFrame) -> bool:
    import polars as pl

    return frame.schema[column] == pl.String


def _fit(
    columns: list[str], cells: dict[str, list[str]], text: set[str], width: int
) -> tuple[list[str], dict[str, int]]:
    """The columns that fit in ``width`` (in order; text columns shortened), and each one's width.

    ``cells`` holds every cell a column shows, its totals cell included.
    """
    natural = {c: max([len(label(c)), *(len(v) for v in cells[c])]) for c in columns}
    want = {c: min(natural[c], _MIN_TEXT) if c in text else natural[c] for c in columns}
    # The first text column (the name) is a key column: it is placed first, shown last.
    keys = [
        c
        for c in columns
        if c in text and ("name" in c or "function" in c or c in ("op", "kernel", "key", "range"))
    ]
    first_text = (keys or [c for c in columns if c in text])[:1]
    picked: set[str] = set()
    used = 0
    for c in [*first_text, *(c for c in columns if c not in first_text)]:
        need = max(want[c], len(label(c))) + _GAP
        room = width - used - _GAP
        if used + need > width and c in text and room >= max(len(label(c)), _LAST_TEXT):
            want[c], need = room, room + _GAP  # a text column shortened further rather than left out
        if used + need > width:
            continue
        picked.add(c)
        used += need
    shown = [c for c in columns if c in picked]
    # Room left over goes to shortened text columns, so full names show when they can.
    spare = width - used
    for c in shown:
        if c in text and natural[c] > want[c] and spare > 0:
            extra = min(spare, natural[c] - want[c])
            want[c] += extra
            spare -= extra
    return shown, want


def render(
    frame: pl.DataFrame,
    rows: int,
    columns: list[str] | None = None,
    width: int = WIDTH,
    *,
    totals: bool = True,
) -> str:
    """``frame``'s first ``rows`` rows as a table for a terminal of ``width`` characters."""
    chosen = columns or frame.columns
    head = frame.head(rows).select(chosen)
    fmts = {c: formatter(c) for c in chosen}
    cells = {c: [fmts[c](v) for v in head[c].to_list()] for c in chosen}
    text = {c for c in chosen if _is_text(c, cells[c], frame)}
    if frame.height == 0:
        return "(no rows)"
    # Name-like text columns go last, where shortening costs the least.
    ordered = [c for c in chosen if c not in text] + [c for c in chosen if c in text]
    sums = _totals(frame, chosen, fmts) if totals and frame.height > 1 and not nested(frame) else {}
    sized = {c: [*cells[c], sums.get(c, "")] for c in chosen}
    shown, widths = _fit(ordered if columns is None else list(chosen), sized, text, width)
    hidden = [c for c in chosen if c not in shown]
    if hidden and frame.height <= _TRANSPOSE_ROWS:
        return _transposed(chosen, cells, head.height, width)
    footer = [sums.get(c, "") for c in shown] if any(c in sums for c in shown) else None
    body = _rich_table(shown, cells, widths, text, footer, head.height, width)
    if any(len(cells[c][r]) > widths[c] for c in shown if c in text for r in range(head.height)):
        body += "\n(names shortened in the middle; --json or --out FILE have them whole)"
    if hidden and columns is not None:  # chosen by name, and still more than fits
        body += (
            f"\n(chosen but not shown, {width} characters are full: {shorten(', '.join(hidden), width - 60)};"
            " fewer --columns, or --json / --out FILE)"
        )
    elif hidden:
        body += (
            f"\n({len(hidden)} more columns: {shorten(', '.join(hidden), width - 40)}; --columns to choose)"
        )
    return body


# Columns that split a table into groups with shares of their own: `time_pct` sums to 100 % within each
# file of a many-file table and within each device of a --per-device one, so its sum over groups is no
# share of anything (5 files printed "500.0 %").
_GROUP_KEYS = ("file", "device_id")


def _totals(frame: pl.DataFrame, columns: list[str], fmts: dict[str, Callable[[Any], str]]) -> dict[str, str]:
    """The formatted sum over all rows (not only those shown) of each additive column; a share (``_pct``)
    is left blank where the rows belong to several files or devices."""
    groups = any(k in frame.columns and frame[k].n_unique() > 1 for k in _GROUP_KEYS)
    return {
        c: fmts[c](frame[c].sum())
        for c in columns
        if additive(c) and frame[c].dtype.is_numeric() and not (groups and c.endswith("_pct"))
    }


def _rich_table(
    shown: list[str],
    cells: dict[str, list[str]],
    widths: dict[str, int],
    text: set[str],
    totals: list[str] | None,
    rows: int,
    width: int,
) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_footer=totals is not None)
    for i, c in enumerate(shown):
        footer = totals[i] if totals is not None else ""
        if totals is not None and i == 0 and not footer:
            footer = "total" if widths[c] >= len("total") else "Σ"
        table.add_column(
            label(c),
            footer=footer,
            justify="left" if c in text else "right",
            no_wrap=True,
            width=widths[c],
            overflow="ellipsis",
        )
    for r in range(rows):
        table.add_row(*(shorten(cells[c][r], widths[c]) if c in text else cells[c][r] for c in shown))
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False, emoji=False).print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())


def _transposed(chosen: list[str], cells: dict[str, list[str]], rows: int, width: int) -> str:
    """Few rows, many columns: one ``field: value`` block per row."""
    key = max(len(c) for c in chosen)
    blocks = []
    for r in range(rows):
        lines = [f"{c.ljust(key)}  {shorten(cells[c][r], width - key - 2)}" for c in chosen]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
