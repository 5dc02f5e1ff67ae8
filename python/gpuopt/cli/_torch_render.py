"""Human rendering of the ``gpuopt torch`` documents: the summary and one trace's tables (the JSON carries
the same)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuopt.cli import _views
from gpuopt.cli._render import section, table
from gpuopt.cli._tables import for_people, render_frame

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.flops import TorchFlopsData
    from gpuopt.models.torch_trace import TorchSummary, TorchTable, TraceSummary

_FLOPS_COLUMNS = (
    "rank",
    "name",
    "class",
    "precision",
    "counted",
    "instances",
    "flop",
    "bytes",
    "gpu_time_ns",
    "achieved_tflop_per_s",
    "achieved_gb_per_s",
    "flop_pct_of_peak",
    "bandwidth_pct_of_peak",
)


def render_table(answer: Answer[Any], limit: int) -> str:
    """One trace's table, with its scope and why GPU facts are absent where they are."""
    d: TorchTable = answer.data
    body = render_frame(answer.table, limit) if answer.table.height else "(no rows)"
    return "\n".join([*([f"scope: {d.scope}"] if d.scope else []), *d.not_present, body])


def render_paths(answer: Answer[Any], limit: int) -> str:
    """``gpuopt torch paths``: the call paths as a tree (each name indented by its depth)."""
    d: TorchTable = answer.data
    frame = answer.table
    lines = [f"scope: {d.scope}"] if d.scope else []
    return "\n".join([*lines, render_frame(for_people(frame, _views.path_tree(frame)), limit)])


def render_flops(answer: Answer[Any], limit: int) -> str:
    """``gpuopt torch flops``: the peaks used per rank, the per-op table and the per-step MFU."""
    d: TorchFlopsData = answer.data
    lines = [f"scope: {d.scope}"] if d.scope else []
    for g in d.gpus:
        peak = f"{g.label} ({g.key}, NVIDIA datasheet {g.date}: gpuopt.flops.peaks())" if g.key else "none"
        lines.append(f"rank {g.rank}: peaks from {peak} [{g.how}]")
    ops = _views.columns(answer.tables["flops"], _FLOPS_COLUMNS)
    steps = answer.tables["flops_steps"]
    lines.append(render_frame(ops, limit) if ops.height else "(no ops)")
    lines.append("Steps (model FLOPs: counted GEMM, convolution and attention work)")
    lines.append(render_frame(steps, limit) if steps.height else "(no steps)")
    return "\n".join(lines)


def _ms(ns: int | None) -> str | None:
    return None if ns is None else f"{ns / 1e6:.3f} ms"


def _render_trace(t: TraceSummary) -> str:
    h, c = t.header, t.counts
    calls = c.runtime_calls + c.driver_calls
    device_names = ", ".join(d.name or "?" for d in h.devices) or None
    parts = [
        section(
            f"Trace {t.path} (rank {t.global_rank}, {t.global_rank_source})",
            [
                ("platform", t.platform),
                ("format", f"{t.format}, schema {h.schema_version}"),
                ("devices", device_names),
                ("CUPTI / CUDA runtime", f"{h.cupti_version} / {h.cuda_runtime_version}"),
                ("duration", _ms(t.duration_ns)),
                (
                    "events",
                    f"{c.events} ({c.cpu_ops} cpu_op, {calls} runtime/driver, {c.kernels} kernel,"
                    f" {c.memcpys} memcpy, {c.memsets} memset)",
                ),
                ("record_function ranges", f"{t.record_functions} ({t.profiler_steps} ProfilerStep)"),
                (
                    "links",
                    f"{t.links.gpu_linked_to_runtime}/{t.links.gpu_events} GPU events to a runtime call,"
                    f" {t.links.gpu_linked_to_op} to an op; {t.links.gpu_unlinked} unlinked",
                ),
            ],
        )
    ]
    if t.gpu is None:
        parts.append(f"GPU\n  {t.gpu_absent}")
        return "\n\n".join(parts)
    for d in t.gpu.devices:
        tb, idle = d.temporal, d.idle_by_cause
        parts.append(
            section(
                f"GPU {d.device} ({d.streams} streams)",
                [
                    ("window", _ms(tb.window_ns)),
                    ("compute", _ms(tb.compute_ns)),
                    ("communication", _ms(tb.communication_ns)),
                    ("memory", _ms(tb.memory_ns)),
                    ("idle", _ms(tb.idle_ns)),
                    ("  host wait", _ms(idle.host_wait_ns)),
                    (
                        "  kernel wait",
                        f"{_ms(idle.kernel_wait_ns)} (gaps < {idle.kernel_wait_threshold_ns} ns)",
                    ),
                    ("  other", _ms(idle.other_ns)),
                ],
            )
        )
        parts.append(
            table(
                ["kernel type", "time", "% of busy"],
                [[k.kind, _ms(k.time_ns), f"{k.busy_pct:.1f}"] for k in d.kernel_types],
            )
        )
    if t.gpu.launch_latency is not None:
        lat = t.gpu.launch_latency
        parts.append(
            table(
                ["launch latency (ns)", "n", "min", "p50", "p90", "p99", "max"],
                [
                    [label, x.count, x.min_ns, x.p50_ns, x.p90_ns, x.p99_ns, x.max_ns]
                    for label, x in (
                        ("from call start", lat.from_call_start),
                        ("from call end", lat.from_call_end),
                        ("graph: execution from call start", lat.graph.launch_latency if lat.graph else None),
                        ("graph: kernel after previous kernel", lat.graph.node_gap if lat.graph else None),
                    )
                    if x is not None
                ],
            )
        )
    if t.gpu.transfers:
        parts.append(
            table(
                ["transfer", "count", "bytes", "time", "GB/s"],
                [
                    [
                        x.name,
                        x.count,
                        x.bytes,
                        _ms(x.duration_ns),
                        None if x.bandwidth_gbps is None else f"{x.bandwidth_gbps:.1f}",
                    ]
                    for x in t.gpu.transfers
                ],
            )
        )
    if t.gpu.collectives is not None:
        coll = t.gpu.collectives
        parts.append(
            section(
                "Collectives",
                [
                    ("kernels", coll.kernels),
                    ("busy", _ms(coll.busy_ns)),
                    ("overlapping compute", _ms(coll.compute_overlap_ns)),
                ],
            )
        )
    return "\n\n".join(parts)


def render_summary(doc: TorchSummary) -> str:
    head = [f"scope: {doc.scope} (every fact below is restricted to it)"] if doc.scope else []
    return "\n\n".join([*head, *(_render_trace(t) for t in doc.traces)])
