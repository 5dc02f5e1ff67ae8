"""The per-step section of the profile pages: one bar per iteration (its span, and the GPU busy inside
it), odd rows marked with their reason, and the top kernels' totals divided by the regular iterations.
The rows are :func:`gpuopt.analyses.iterations`' (``gpuopt nsys|torch iterations``): the step marker when
the file has one, otherwise the repeat of the launch sequence; this module only chooses and draws."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuopt.html.page import Page, ms, plotly

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.analyses import Iterations

TITLE = "Iterations (per step)"


def used_rows(found: Iterations) -> pl.DataFrame:
    """The rows of the source the analyses use (the marker's when a marker was found), of the device
    with the most regular iterations; empty when nothing repeats."""
    import polars as pl

    if not found.facts or found.table.is_empty():
        return found.table.clear()
    source = found.facts[0].used
    rows = found.table.filter(
        (pl.col("source") == "detected") if source == "detected" else (pl.col("source") != "detected")
    )
    if "rank" in rows.columns:
        rows = rows.filter(pl.col("rank") == rows["rank"].min())
    regular = rows.filter(pl.col("odd").is_null())
    if regular.is_empty():
        return rows.clear()
    device = regular.group_by("device_id").len().sort(["len", "device_id"], descending=[True, False])
    return rows.filter(pl.col("device_id") == device["device_id"][0]).sort("start_ns")


def regular_count(rows: pl.DataFrame) -> int:
    """Iterations that are not odd (warm-up, prefill, stragglers and stretches outside are odd)."""
    import polars as pl

    return rows.filter(pl.col("odd").is_null()).height


def _how(found: Iterations, rows: pl.DataFrame) -> str:
    facts = found.facts[0]
    if facts.used == "detected" or facts.marker is None:
        return "detected from the repeat of the launch sequence (no step marker in the file)"
    return f"from the step marker {facts.marker.name!r} ({facts.marker.kind})"


def draw(
    page: Page,
    found: Iterations,
    *,
    window: tuple[int | None, int | None] | None = None,
    selection: str | None = None,
) -> int:
    """Adds the section and returns the number of regular iterations drawn (0: nothing repeats, and the
    page says so). ``window`` keeps the rows lying wholly inside it; ``selection`` names a range the
    rest of the page is limited to (the iterations are the whole file's, and the note says so)."""
    import polars as pl

    rows = used_rows(found)
    if window is not None:
        first, last = window
        if first is not None:
            rows = rows.filter(pl.col("start_ns") >= first)
        if last is not None:
            rows = rows.filter(pl.col("end_ns") <= last)
    n = regular_count(rows)
    if n == 0:
        page.nothing(
            "iterations",
            TITLE,
            "No repeated step"
            + (" inside the window" if window is not None else "")
            + ": no step marker and no repeat of the launch sequence "
            "(gpuopt nsys|torch iterations shows what detection found).",
        )
        return 0
    go = plotly()
    regular = rows.filter(pl.col("odd").is_null())
    labels = [
        f"{it}" if it is not None else f"row {r}"
        for it, r in zip(rows["iteration"].to_list(), rows["row"].to_list(), strict=True)
    ]
    odd = rows["odd"].to_list()
    rules = rows["odd_rule"].to_list()
    why = [o if o is None else f"{o}: {rule}" for o, rule in zip(odd, rules, strict=True)]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            name="span (completion to completion)",
            x=labels,
            y=(rows["span_ns"] / 1e6).to_list(),
            marker={"color": ["#9aa5b1" if o is not None else "#4c78a8" for o in odd]},
            hovertext=[w or "regular" for w in why],
            hovertemplate="iteration %{x}<br>span %{y:.4f} ms<br>%{hovertext}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            name="GPU busy",
            x=labels,
            y=(rows["gpu_busy_ns"] / 1e6).to_list(),
            marker={"color": "#f58518"},
            hovertemplate="iteration %{x}<br>GPU busy %{y:.4f} ms<extra></extra>",
        )
    )
    fig.update_layout(
        barmode="group",
        height=320,
        margin={"l": 10, "r": 10, "t": 10, "b": 40},
        xaxis={"title": {"text": "iteration (odd rows grey)"}, "type": "category"},
        yaxis={"title": {"text": "ms"}},
        legend={"orientation": "h"},
    )
    span = regular["span_ns"].median()
    busy = regular["gpu_busy_ns"].median()
    ops = regular["gpu_ops"].median()
    ops_text = f"{float(ops):g}" if isinstance(ops, int | float) else "n/a"
    whole = f" Iterations of the whole file, not only {selection}." if selection else ""
    note = (
        f"{n} regular iterations on device {rows['device_id'][0]}, {_how(found, rows)}; "
        f"{rows.height - n} odd rows (hover for why). Median per iteration: span {ms(span)}, "
        f"GPU busy {ms(busy)}, {ops_text} GPU operations. Columns: gpuopt schema nsys.iterations.{whole}"
    )
    page.figure("iterations", TITLE, fig, note)
    return n
