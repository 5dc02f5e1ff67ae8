"""The GPU timeline of a report: one lane per (device, stream), time in ms from the first operation.

The rule for large inputs (stated on the page and in references/reports.md): up to ``RAW_LIMIT``
operations every operation is one bar (and every idle gap between them a grey bar); above it the span
is cut into ``BINS`` equal bins and each lane's cell shows the fraction of the bin its operations
covered (their time inside the bin summed, capped at the bin: operations of one stream do not overlap),
with the operations counted per kind in the hover. Nothing is sampled away: every operation counts in
its bins. The file then grows with lanes times bins, not with operations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpuopt.html.page import Page, plotly

if TYPE_CHECKING:
    import polars as pl

RAW_LIMIT = 5_000
BINS = 1_000
COLORS = {
    "kernel": "#4C78A8",
    "memcpy": "#F58518",
    "memset": "#E45756",
    "graph": "#54A24B",
    "gap": "#D3D3D3",
    "range": "#B279A2",
}
NAME_CHARS = 120
KINDS = ("kernel", "memcpy", "memset", "graph")


def rule_text(operations: int) -> str:
    if operations <= RAW_LIMIT:
        return (
            f"{operations:,} operations, each drawn (up to {RAW_LIMIT:,}); grey bars are idle gaps "
            "between operations of a stream. Time in ms from the first operation."
        )
    return (
        f"{operations:,} operations: more than {RAW_LIMIT:,}, so the span is cut into {BINS:,} equal bins "
        "and each cell shows the fraction of the bin the stream was busy (operation time inside the bin, "
        "capped at the bin); the hover counts the operations per kind. Time in ms from the first operation."
    )


def _short(name: str) -> str:
    if len(name) <= NAME_CHARS:
        return name
    half = (NAME_CHARS - 1) // 2
    return name[:half] + "…" + name[-half:]


def _lanes(ops: pl.DataFrame) -> pl.DataFrame:
    import polars as pl

    if "lane" in ops.columns:
        return ops
    return ops.with_columns(
        lane=pl.format("GPU {} · stream {}", pl.col("device_id"), pl.col("stream_id")),
    )


def _lane_order(ops: pl.DataFrame, ranges: pl.DataFrame | None) -> list[str]:
    gpu = ops.select("device_id", "stream_id", "lane").unique().sort("device_id", "stream_id")
    top = [] if ranges is None or ranges.is_empty() else ranges["lane"].unique(maintain_order=True).to_list()
    return [*top, *gpu["lane"].unique(maintain_order=True).to_list()]


def _bars(go: Any, frame: pl.DataFrame, t0: int, kind: str, label: str, width: float = 0.7) -> Any:
    start_ms = ((frame["start_ns"] - t0) / 1e6).to_list()
    dur_ms = ((frame["end_ns"] - frame["start_ns"]) / 1e6).to_list()
    names = [_short(n) for n in frame["name"].to_list()]
    return go.Bar(
        orientation="h",
        y=frame["lane"].to_list(),
        x=dur_ms,
        base=start_ms,
        name=label,
        width=width,
        marker={"color": COLORS[kind], "line": {"width": 0}},
        hovertext=names,
        hovertemplate="%{hovertext}<br>start %{base:.4f} ms, %{x:.4f} ms<extra>" + label + "</extra>",
    )


def _raw(go: Any, ops: pl.DataFrame, gaps: pl.DataFrame | None, ranges: pl.DataFrame | None, t0: int) -> Any:
    import polars as pl

    traces = []
    if gaps is not None and not gaps.is_empty():
        idle = _lanes(gaps).with_columns(name=pl.lit("idle"))
        traces.append(_bars(go, idle, t0, "gap", "idle gap", width=0.3))
    if ranges is not None and not ranges.is_empty():
        traces.append(_bars(go, ranges, t0, "range", "range"))
    for kind in KINDS:
        part = ops.filter(pl.col("kind") == kind)
        if not part.is_empty():
            traces.append(_bars(go, part, t0, kind, kind))
    return traces


def busy_cells(ops: pl.DataFrame, t0: int, t1: int) -> tuple[pl.DataFrame, int]:
    """Per (lane, bin) of ``BINS`` equal bins over [t0, t1): ``busy`` (operation ns inside the bin) and
    the operations per kind that start in it; and the bin width in ns."""
    import polars as pl

    width = max(1, -(-(t1 - t0) // BINS))
    first = (pl.col("start_ns") - t0) // width
    last = pl.max_horizontal(first, (pl.col("end_ns") - 1 - t0) // width)
    spread = (
        ops.select("lane", "kind", "start_ns", "end_ns")
        .with_columns(bin=pl.int_ranges(first, last + 1))
        .explode("bin")
    )
    lo = pl.max_horizontal(pl.col("start_ns"), t0 + pl.col("bin") * width)
    hi = pl.min_horizontal(pl.col("end_ns"), t0 + (pl.col("bin") + 1) * width)
    starts_here = (pl.col("start_ns") - t0) // width == pl.col("bin")
    per_kind = [(pl.col("starts") & (pl.col("kind") == k)).sum().alias(k) for k in KINDS]
    cells = (
        spread.with_columns(busy=pl.max_horizontal(hi - lo, 0), starts=starts_here)
        .group_by("lane", "bin")
        .agg(pl.col("busy").sum(), *per_kind)
        .sort("lane", "bin")
    )
    return cells, width


def _binned(go: Any, ops: pl.DataFrame, t0: int, t1: int, order: list[str]) -> Any:
    cells, width = busy_cells(ops, t0, t1)
    present = set(cells["lane"].to_list())
    lanes = [lane for lane in order if lane in present]
    index = {lane: i for i, lane in enumerate(lanes)}
    z: list[list[float | None]] = [[None] * BINS for _ in lanes]
    text: list[list[str]] = [[""] * BINS for _ in lanes]
    for row in cells.iter_rows(named=True):
        i, b = index[row["lane"]], int(row["bin"])
        if 0 <= b < BINS:
            z[i][b] = min(1.0, row["busy"] / width)
            counts = ", ".join(f"{row[k]} {k}" for k in KINDS if row[k])
            text[i][b] = counts or "no operation starts here"
    x = [(b + 0.5) * width / 1e6 for b in range(BINS)]
    return [
        go.Heatmap(
            z=z,
            x=x,
            y=lanes,
            text=text,
            zmin=0,
            zmax=1,
            colorscale=[[0, "#F2F5FA"], [1, COLORS["kernel"]]],
            colorbar={"title": {"text": "busy"}, "tickformat": ".0%"},
            hovertemplate="%{y}<br>%{x:.3f} ms: busy %{z:.1%}<br>%{text}<extra></extra>",
            xgap=0,
            ygap=2,
        )
    ]


Frame = Callable[[], "pl.DataFrame"]


def figure(ops: pl.DataFrame, *, gaps: Frame | None, ranges: Frame | None) -> tuple[Any, str]:
    """The timeline figure of a non-empty ``ops`` and the sentence stating the rule it followed. ``gaps``
    and ``ranges`` are asked for only when operations are drawn one by one."""
    go = plotly()
    ops = _lanes(ops)
    t0, t1 = int(ops["start_ns"].min()), int(ops["end_ns"].max())  # type: ignore[arg-type]
    raw = ops.height <= RAW_LIMIT
    all_ranges = ranges() if raw and ranges is not None else None
    shown_ranges = all_ranges if all_ranges is not None and all_ranges.height <= RAW_LIMIT else None
    order = _lane_order(ops, shown_ranges)
    if raw:
        traces = _raw(go, ops, None if gaps is None else gaps(), shown_ranges, t0)
    else:
        traces = _binned(go, ops, t0, t1, order)
    fig = go.Figure(traces)
    fig.update_layout(
        barmode="overlay",
        height=max(260, 60 + 34 * len(order)),
        margin={"l": 10, "r": 10, "t": 10, "b": 40},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        xaxis={"title": {"text": "ms from the first operation"}},
        yaxis={"categoryorder": "array", "categoryarray": order, "autorange": "reversed"},
    )
    note = rule_text(ops.height)
    if all_ranges is not None and shown_ranges is None:
        note += f" The {all_ranges.height:,} ranges are more than {RAW_LIMIT:,} and are not drawn here."
    return fig, note


def draw(
    page: Page,
    ops: pl.DataFrame,
    *,
    gaps: Frame | None,
    ranges: Frame | None,
    empty: str,
) -> None:
    """Adds the timeline section. ``ops``: device_id, stream_id, kind, start_ns, end_ns, name;
    ``gaps`` makes device_id, stream_id, start_ns, end_ns (per-stream gaps); ``ranges`` makes lane, name,
    start_ns, end_ns (NVTX ranges or steps, drawn above the streams when operations are drawn)."""
    title = "GPU timeline per device and stream"
    if ops.is_empty():
        page.nothing("timeline", title, empty)
        return
    fig, note = figure(ops, gaps=gaps, ranges=ranges)
    page.figure("timeline", title, fig, note)
