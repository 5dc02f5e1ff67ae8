"""The pages of a profile: an nsys export (``gpuopt nsys report``) and a PyTorch trace (``gpuopt torch
report``). Every number comes from the engines (``gpuopt.nsys``, ``gpuopt.torch_trace``); this module
only chooses columns and draws. :func:`nsys_report_document` and :func:`torch_report_document` answer
what the commands print (the page written, as a :class:`gpuopt.answer.Answer`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import analyses, nsys, torch_trace
from gpuopt.html import iterations, timeline
from gpuopt.html.page import Page, ms, plotly, prepare

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.html import HtmlReportData

TOP = 20
NO_NVTX = "No NVTX range with GPU work in the selection (none captured, or none launched GPU work)."
NO_OPS = "No operator launched GPU work in this trace."


def declared(key: str, column: str) -> tuple[str, str]:
    """The axis title and the caption of bars of one declared ns column (``gpuopt.fields``): the
    column's name in ms, and what it means."""
    from gpuopt import fields

    meaning = fields.TABLES[key][column]
    return (
        f"{column.removesuffix('_ns').replace('_', ' ')} (ms)",
        f"Bars: {column}, {meaning[:1].lower()}{meaning[1:]}",
    )


def top_bars(
    page: Page,
    name: str,
    title: str,
    frame: pl.DataFrame,
    value: str,
    column: tuple[str, str],
    empty: str,
    note: str = "",
    colour: str | None = None,
) -> None:
    """A horizontal bar per row (the ``TOP`` largest ``value``), longest on top; full names on hover;
    ``column`` is (table, column) of the declared column the values are (axis and caption say which).
    ``colour`` names a column holding each row's kind (``kernel``, ``graph``: the timeline's colours);
    without it every bar is a kernel's colour."""
    import polars as pl

    label, caption = declared(*column)
    frame = frame.filter(pl.col(value).is_not_null() & (pl.col(value) > 0))
    if frame.is_empty():
        page.nothing(name, title, empty)
        return
    go = plotly()
    top = frame.sort(value, descending=True).head(TOP)
    names = top["name"].to_list()
    kinds = top[colour].to_list() if colour else ["kernel"] * top.height
    shown = [timeline._short(n)[:60] + ("…" if len(timeline._short(n)) > 60 else "") for n in names]
    # Equal short labels would merge into one bar: number them.
    labels = [f"{i + 1}. {s}" for i, s in enumerate(shown)]
    fig = go.Figure(
        go.Bar(
            orientation="h",
            y=labels,
            x=(top[value] / 1e6).to_list(),
            hovertext=names,
            hovertemplate="%{hovertext}<br>%{x:.4f} ms<extra></extra>",
            marker={"color": [timeline.COLORS[k] for k in kinds]},
        )
    )
    fig.update_layout(
        height=80 + 24 * len(labels),
        margin={"l": 10, "r": 10, "t": 10, "b": 40},
        xaxis={"title": {"text": label}},
        yaxis={"autorange": "reversed", "automargin": True},
    )
    more = f" (the {TOP} largest of {frame.height})" if frame.height > TOP else ""
    page.figure(name, title, fig, f"{caption}{more}; hover for the full name.{note}")


def _kernels_and_graphs(
    report: nsys.Report, window: nsys.Window | None, nvtx_range: str | None
) -> tuple[pl.DataFrame, str]:
    """The kernel table (name, total, kind) and, in a graph-level trace, one row per CUDA graph: the
    summed GPU time of its executions, whose kernels the export does not record one by one (a
    node-level trace lists them as kernels already). The note says what the graph rows are; empty
    when there are none."""
    import polars as pl

    kernels = report.kernels(window=window, nvtx=nvtx_range).select(
        "name", total="total_time_ns", kind=pl.lit("kernel")
    )
    graphs = [g for g in report.graphs(window=window, nvtx=nvtx_range).graphs if g.graph_id is not None]
    if not graphs:
        return kernels, ""
    rows = pl.DataFrame(
        {
            "name": [
                f"CUDA graph {g.graph_id} (exec {g.graph_exec_id}), {g.executions} executions" for g in graphs
            ],
            "total": [g.gpu_time.total_ns for g in graphs],
            "kind": ["graph"] * len(graphs),
        },
        schema=kernels.schema,
    )
    executions = sum(g.executions for g in graphs)
    total = sum(g.gpu_time.total_ns for g in graphs)
    note = (
        f" Graph-level trace: {executions} CUDA-graph executions ({ms(total)}) are drawn as one bar per "
        "graph (green), the summed GPU time of its executions; the kernels inside them are not in the export."
    )
    return pl.concat([kernels, rows]), note


def nsys_page(
    report: nsys.Report, out: Path, *, window: nsys.Window | None, nvtx_range: str | None
) -> HtmlReportData:
    import polars as pl

    page = Page(title=f"nsys report — {Path(report.path).name}")
    info = report.info()
    tool = " ".join(str(x) for x in (info.export.product_name, info.export.product_version) if x)
    page.facts.append(f"{report.path} — {tool or 'exporting tool not recorded'}")
    page.facts += [f"GPU {g.id}: {g.name}" for g in info.gpus]
    if window is not None:
        page.facts.append(f"window {window[0]}:{window[1]} ns")
    if nvtx_range:
        page.facts.append(f"work launched in NVTX range {nvtx_range!r}")
    facts = report.timeline(window=window, nvtx=nvtx_range)
    for d in facts.devices:
        page.facts.append(
            f"GPU {d.device_id}: {d.kernels} kernels, {d.memcpys} memcpys, {d.memsets} memsets, "
            f"{d.graph_executions} graph executions; busy {d.busy_pct:.1f} % of {ms(d.span_ns)}"
        )
    ops = report.operations(window=window, nvtx=nvtx_range)

    def gaps() -> pl.DataFrame:
        return report.gaps(window=window, nvtx=nvtx_range).filter(pl.col("stream_id").is_not_null())

    def ranges() -> pl.DataFrame:
        instances = report.nvtx(per_instance=True, window=window, nvtx=nvtx_range)
        return instances.filter(pl.col("gpu_start_ns").is_not_null()).select(
            lane=pl.format("NVTX depth {} (GPU projection)", pl.col("depth")),
            name=pl.col("range"),
            start_ns=pl.col("gpu_start_ns"),
            end_ns=pl.col("gpu_end_ns"),
        )

    missing = ", ".join(report.not_captured("timeline")) or "nothing"
    timeline.draw(
        page,
        ops,
        gaps=gaps,
        ranges=ranges,
        empty=f"This export has no GPU operations in the selection (not captured: {missing}).",
    )
    selection = f"NVTX range {nvtx_range!r}" if nvtx_range else None
    iterations.draw(page, analyses.iterations(report), window=window, selection=selection)
    kernels, graph_note = _kernels_and_graphs(report, window, nvtx_range)
    top_bars(
        page,
        "kernels",
        "Top kernels and CUDA-graph executions by total GPU time"
        if graph_note
        else "Top kernels by total GPU time",
        kernels,
        "total",
        ("nsys.cuda_gpu_kern_sum", "total_time_ns"),
        "No kernels or CUDA-graph executions in the selection."
        if graph_note
        else "No kernels in the selection.",
        graph_note,
        colour="kind",
    )
    by_range = report.nvtx(window=window, nvtx=nvtx_range).rename({"range": "name"})
    top_bars(
        page,
        "nvtx",
        "NVTX ranges by GPU time (projection)",
        by_range,
        "gpu_projected_ns",
        ("nsys.nvtx_ranges", "gpu_projected_ns"),
        NO_NVTX,
    )
    return page.write(out)


def _torch_lanes(frame: pl.DataFrame, several_ranks: bool) -> pl.DataFrame:
    """device_id/stream_id/lane of a torch table (rank, device, stream): one lane per rank's stream."""
    import polars as pl

    lane = (
        pl.format("rank {} · GPU {} · stream {}", pl.col("rank"), pl.col("device"), pl.col("stream"))
        if several_ranks
        else pl.format("GPU {} · stream {}", pl.col("device"), pl.col("stream"))
    )
    return frame.with_columns(
        device_id=pl.col("rank") * 1_000_000 + pl.col("device"), stream_id=pl.col("stream"), lane=lane
    )


def torch_page(trace: torch_trace.TorchTrace, out: Path) -> HtmlReportData:
    import polars as pl

    page = Page(title=f"PyTorch trace report — {trace.path.name}")
    for o in trace.overview():
        page.facts.append(f"rank {o.global_rank}: {o.path} ({o.format}, platform {o.platform})")
    launches = trace.launches()
    several = launches["rank"].n_unique() > 1
    ops = _torch_lanes(launches, several).with_columns(end_ns=pl.col("start_ns") + pl.col("duration_ns"))

    def gaps() -> pl.DataFrame:
        return _torch_lanes(trace.gaps(), several)

    def ranges() -> pl.DataFrame:
        steps = trace.steps().filter(pl.col("gpu_start_ns").is_not_null())
        return steps.select(
            lane=pl.lit("steps (GPU span)"), name="name", start_ns="gpu_start_ns", end_ns="gpu_end_ns"
        )

    absent = "; ".join(trace.not_present()) or "no rank says why"
    timeline.draw(
        page,
        ops,
        gaps=gaps,
        ranges=ranges,
        empty=f"This trace has no GPU events (kernels, memcpys, memsets): {absent}.",
    )
    iterations.draw(page, analyses.iterations(trace))
    kernels = trace.kernels().rename({"total_ns": "total"})
    top_bars(
        page,
        "kernels",
        "Top kernels by total GPU time",
        kernels,
        "total",
        ("torch.kernels", "total_ns"),
        "No GPU kernels in this trace.",
    )
    top_bars(
        page,
        "ops",
        "Top operators by GPU time of their kernels",
        trace.ops(),
        "gpu_time_ns",
        ("torch.ops", "gpu_time_ns"),
        NO_OPS,
    )
    return page.write(out)


def nsys_report_document(
    path: str | Path, out: Path, *, window: str | nsys.Window | None = None, nvtx: str | None = None
) -> Answer[HtmlReportData]:
    """``gpuopt nsys report``: the page of an export (``window``: ``(start_ns, end_ns)`` or ``--window``
    text; ``nvtx``: work launched in that range) written to ``out``; plotly absent is exit 3 before the
    export is read."""
    from gpuopt.answer import Answer
    from gpuopt.provenance import file_identity, identify_in_background

    prepare(out)
    parsed = nsys.parse_window(window) if isinstance(window, str) else window
    identify_in_background(path)  # hashing (on a cache miss) overlaps the engine's work
    data = nsys_page(nsys.open(path), out, window=parsed, nvtx_range=nvtx)
    return Answer(data, [file_identity(path)])


def torch_report_document(
    path: str | Path, out: Path, *, steps: str | None = None, window: str | None = None
) -> Answer[HtmlReportData]:
    """``gpuopt torch report``: the page of a trace (or folder of rank traces), restricted to ``steps``
    or ``window`` (:func:`gpuopt.torch_trace.scope`), written to ``out``."""
    from gpuopt.answer import Answer
    from gpuopt.provenance import identify_in_background

    prepare(out)
    chosen = torch_trace.scope(steps=steps, window=window)
    identify_in_background(path)  # hashing (on a cache miss) overlaps parsing; a folder is hashed after
    trace = torch_trace.open(path)
    if chosen is not None:
        trace = trace.scoped(steps=chosen.steps, window=chosen.window)
    data = torch_page(trace, out)
    return Answer(data, trace.inputs())
