"""Human rendering of the nsys documents: summary, tables, timeline, graph and coverage facts (the JSON
carries the same)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from gpuopt.cli._render import section, table
from gpuopt.cli._tables import render_frame

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.nsys import (
        Coverage,
        Distribution,
        Graphs,
        NsysGraphsData,
        NsysSelection,
        NsysSummaryData,
        NsysTableData,
        NsysTimelineData,
        Timeline,
    )


def _window(sel: NsysSelection) -> str | None:
    """``window START:END`` in ns, an open side left empty as in ``--window 1:``; None without one."""
    if sel.window_start_ns is None and sel.window_end_ns is None:
        return None
    start, end = ("" if v is None else str(v) for v in (sel.window_start_ns, sel.window_end_ns))
    return f"window {start}:{end}"


def header(path: str, name: str, sel: NsysSelection, missing: list[str]) -> str:
    parts = [f"{name} — {path}"]
    if window := _window(sel):
        parts.append(window)
    if sel.nvtx:
        parts.append(f"launched in NVTX range {sel.nvtx!r}")
    text = ", ".join(parts)
    if missing:
        text += f"\nnot captured: {', '.join(missing)}"
    return text


# Tables whose rows are of two levels that overlap in time: no totals row (a sum would count twice).
_LEVELS = {
    "gaps": [
        "stream_id —: the whole device was idle; a stream id: that stream was idle (others may have run);",
        "one interval can show at both levels, so no total is given (--level device: only the device's)",
    ]
}


def render_table(answer: Answer[Any], limit: int) -> str:
    """One export's table: what it covers, the table, and the GPU activity it leaves out."""
    d: NsysTableData = answer.data
    body = render_frame(answer.table, limit, totals=d.report not in _LEVELS)
    text = "\n".join(
        [header(d.path, d.report, d.selection, d.not_captured), *_LEVELS.get(d.report, []), body]
    )
    return text + ("\n\n" + render_coverage(d.coverage) if d.coverage else "")


def render_summary(d: NsysSummaryData) -> str:
    info, e = d.info, d.info.export
    parts = [
        section(
            f"nsys export — {d.path}",
            [
                ("schema", f"{e.schema_version} ({e.metadata_table})"),
                ("product", f"{e.product_name or 'nsys'} {e.product_version or '?'}"),
                ("exported by", d.source.nsys_version if d.source else None),
                ("gpus", ", ".join(f"{g.id}: {g.name or '?'}" for g in info.gpus) or "none recorded"),
                ("nvtx ranges", f"{info.nvtx_ranges} ({info.nvtx_open_ranges} open)"),
                ("cuda graph trace", info.graph_trace_mode or "not recorded (no option, no graph rows)"),
            ],
        ),
        "Sources\n"
        + table(
            ["table", "in file", "rows"],
            [[s.table, s.actual or "not captured", s.rows] for s in info.sources],
        ),
        render_timeline(d.timeline, d.selection),
    ]
    if d.graphs.executions:
        parts.append(render_graphs(d.graphs))
    return "\n\n".join(parts)


def render_timeline_data(d: NsysTimelineData) -> str:
    text = render_timeline(d.timeline, d.selection, d.path)
    if d.streams_left_out:
        text += f"\n\n({d.streams_left_out} less busy streams left out; --limit 0 shows all)"
    return text


def render_graphs_data(d: NsysGraphsData) -> str:
    text = header(d.path, "graphs", d.selection, []) + "\n" + render_graphs(d.graphs)
    return text + ("\n\n" + render_coverage(d.coverage) if d.coverage else "")


def _ms(ns: int | float | None) -> str:
    return "—" if ns is None else f"{ns / 1e6:.3f} ms"


def render_timeline(t: Timeline, sel: NsysSelection, path: str | None = None) -> str:
    scope = []
    if window := _window(sel):
        scope.append(window)
    if sel.nvtx:
        scope.append(f"NVTX range {sel.nvtx!r}")
    title = "Timeline" + (f" — {path}" if path else "") + (f" ({', '.join(scope)})" if scope else "")
    rows = []
    for d in t.devices:
        for label, b in [(f"{d.device_id}", d), *[(f"{d.device_id}/s{s.stream_id}", s) for s in d.streams]]:
            rows.append(
                [
                    label,
                    b.kernels,
                    b.graph_executions,
                    b.memcpys + b.memsets,
                    _ms(b.span_ns),
                    _ms(b.busy_ns),
                    f"{b.busy_pct:.1f}",
                    b.gaps.count,
                    _ms(b.gaps.median_ns),
                    _ms(b.compute_copy_overlap_ns),
                    b.concurrency.max_kernels,
                    f"{b.concurrency.mean_kernels_when_busy:.2f}",
                ]
            )
    parts = [
        title
        + "\n"
        + table(
            [
                "device/stream",
                "kernels",
                "graph execs",
                "copies",
                "span",
                "busy",
                "busy %",
                "gaps",
                "gap med",
                "overlap",
                "max conc",
                "mean conc",
            ],
            rows,
        )
    ]
    if t.launch:
        parts.append(
            "Launch (kernels launched one by one: start vs. their API call)\n"
            + table(
                [
                    "device",
                    "kernels",
                    "graph kernels",
                    "matched",
                    "kernel med",
                    "api med",
                    "queue med",
                    "queue<0",
                    "latency med",
                    "latency p90",
                ],
                [
                    [
                        x.device_id,
                        x.kernels,
                        x.graph_kernels,
                        x.matched,
                        _ms(x.kernel_time.median_ns),
                        _ms(x.api_time.median_ns),
                        _ms(x.queue_delay.median_ns),
                        x.negative_queue_delays,
                        _ms(x.launch_latency.median_ns),
                        _ms(x.launch_latency.p90_ns),
                    ]
                    for x in t.launch
                ],
            )
        )
    if t.graph_launch:
        parts.append(
            "Graph launch (whole CUDA graphs, measured apart)\n"
            + table(
                [
                    "device",
                    "executions",
                    "matched",
                    "latency med",
                    "latency p90",
                    "node kernels",
                    "node gap med",
                ],
                [
                    [
                        x.device_id,
                        x.executions,
                        x.matched,
                        _ms(x.launch_latency.median_ns),
                        _ms(x.launch_latency.p90_ns),
                        x.node_kernels,
                        _ms(x.node_gap.median_ns),
                    ]
                    for x in t.graph_launch
                ],
            )
        )
    if t.synchronization:
        parts.append(
            "Synchronization\n"
            + table(
                ["device", "context", "stream", "type", "api", "count", "total", "max"],
                [
                    [
                        s.device_id,
                        s.context_id,
                        s.stream_id,
                        s.sync_type,
                        s.api_name or "(no call in export)",
                        s.count,
                        _ms(s.total_ns),
                        _ms(s.max_ns),
                    ]
                    for s in t.synchronization
                ],
            )
        )
    if t.host_sync:
        parts.append(
            "Host blocked in synchronizing calls (synchronizing APIs, and calls CUPTI recorded a "
            "synchronization for)\n"
            + table(
                [
                    "device",
                    "api",
                    "calls",
                    "sync recorded",
                    "blocked",
                    "profiler overhead",
                    "blocked excl. overhead",
                ],
                [
                    [
                        h.device_id,
                        h.api_name,
                        h.calls,
                        h.recorded_calls,
                        _ms(h.blocked_ns),
                        _ms(h.profiler_overhead_ns),
                        _ms(h.blocked_excl_overhead_ns),
                    ]
                    for h in t.host_sync
                ],
            )
        )
    o = t.profiler_overhead
    parts.append(
        f"Profiler overhead (attributed to the profiler, subtracted above): "
        f"{'recorded' if o.recorded else 'not recorded'}, {o.intervals} intervals, {_ms(o.total_ns)}"
    )
    if t.cuda_overhead:
        parts.append(
            "CUDA overhead (CUDA's own stalls: not subtracted)\n"
            + table(
                ["type", "intervals", "total"],
                [[c.overhead_type, c.intervals, _ms(c.total_ns)] for c in t.cuda_overhead],
            )
        )
    if t.coverage:
        parts.append(render_coverage(t.coverage))
    return "\n\n".join(parts)


def render_coverage(coverage: list[Coverage]) -> str:
    """The coverage flags: GPU activity in the export that the facts above leave out."""
    lines = ["INCOMPLETE: GPU activity these facts leave out"]
    lines += [f"  {c.table} ({c.rows} rows): {c.note}" for c in coverage]
    return "\n".join(lines)


def _dist(d: Distribution | None, field: str) -> str:
    return "—" if d is None else _ms(getattr(d, field))


# What recorded the graph executions, in words (Graphs.trace_mode).
_TRACE_MODES = {
    "graph": "graph-level trace",
    "node": "node-level trace",
    "graph+node": "graph-level and node-level rows",
}


def render_graphs(g: Graphs) -> str:
    """One row per graph, and the notes on how the trace mode measured them."""
    if g.trace_mode not in _TRACE_MODES:
        return (
            "CUDA graphs: no CUDA graph executions in the selection (no CUPTI_ACTIVITY_KIND_GRAPH_TRACE "
            "rows, no kernels with a graphNodeId)"
        )
    head = (
        f"CUDA graphs ({_TRACE_MODES[g.trace_mode]}): {len(g.graphs)} graphs, {g.executions} executions"
        f", {g.unlinked_executions} without a launch call"
    )
    rows = [
        [
            f.device_id,
            f.graph_id,
            f.graph_exec_id,
            f.first_node_id,
            f.launches,
            f.executions,
            _ms(f.gpu_time.total_ns),
            _dist(f.gpu_time, "median_ns"),
            _dist(f.gpu_time, "p90_ns"),
            _dist(f.gpu_time, "max_ns"),
            f.kernels_per_execution.median if f.kernels_per_execution else None,
            _dist(f.host_time, "median_ns"),
            _dist(f.launch_latency, "median_ns"),
        ]
        for f in g.graphs
    ]
    headers = ["device", "graph", "exec", "first node", "launches", "executions", "gpu total"]
    headers += ["gpu med", "gpu p90", "gpu max", "kernels/exec", "host med", "latency med"]
    notes = "".join("\n" + textwrap.fill(f"note: {n}", 120, subsequent_indent="  ") for n in g.notes)
    return head + ("\n" + table(headers, rows) if rows else "") + notes
