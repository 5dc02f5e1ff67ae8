"""``gpuopt profile overview``: what is in each capture; ``gpuopt profile diff``: per-key comparison of k
captures per side, with CIs over captures.

Each command is its options and one call, :func:`gpuopt.overview.overview_document` and
:func:`gpuopt.evaluation.capture.diff.diff_document` (capture files or ``cap:`` references, and
``--cite``), rendered here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli import _views
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import FiniteFloatRange
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section
from gpuopt.cli._tables import answered, check_out, current_sort, for_people, render_frame, table_options

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.overview import FileOverview, OverviewData, OverviewTop
    from gpuopt.models.profile import Dimension, ProfileDiffData

_FILE = click.Path(path_type=Path)


@click.group("profile", cls=Group)
def profile() -> None:
    """Profiles: what is in a capture (overview); compare baseline and candidate captures key by key."""


def _ms(ns: float | None) -> str:
    return "—" if ns is None else f"{ns / 1e6:.3f} ms"


def _gpus(f: FileOverview) -> str:
    if f.identity is None or not f.identity.gpus:
        return "none recorded"
    return ", ".join(
        f"{'' if g.device is None else f'{g.device}: '}{g.name or '?'}"
        + (f" (sm {g.compute_capability})" if g.compute_capability else "")
        for g in f.identity.gpus
    )


def _render_top(title: str, top: OverviewTop | None, i: int, answer: Answer[OverviewData]) -> str | None:
    if top is None:
        return None
    frame = answer.tables[f"{i}:{top.table.name}"]
    more = f" (first {len(top.table.rows)} of {top.table.total_rows})" if top.table.truncated else ""
    return f"{title}{more} — all: {top.command}\n{render_frame(frame, 0, totals=False)}"


def _render_file(i: int, f: FileOverview, answer: Answer[OverviewData]) -> str:
    if f.error is not None:
        return f"{f.path}\n  error[{f.error.code}]: {f.error.message}"
    assert f.identity is not None and f.totals is not None  # a file read has both
    ident, t = f.identity, f.totals
    counts = [f"{t.kernels} kernels ({_ms(t.kernel_time_ns)} summed)"]
    counts += [f"{n} {what}" for n, what in ((t.memcpys, "memcpys"), (t.memsets, "memsets")) if n is not None]
    if t.graph_executions is not None:
        counts.append(f"{t.graph_executions} graph executions")
    rows: list[tuple[str, object]] = [("tool", ident.tool), ("driver", ident.driver), ("gpus", _gpus(f))]
    if f.kind == "nsys":
        rows.append(("cuda graph trace", ident.trace_mode or "not recorded"))
    rows.append(("totals", ", ".join(counts)))
    if t.span_ns is not None:
        rows.append(("span", _ms(t.span_ns)))
    rows.append(("identity, totals", ident.command))
    parts = [section(f"{f.kind} — {f.path}", rows)]
    if f.busy is not None:
        busy = [
            (
                f"device {d.device}" + ("" if d.rank is None else f" (rank {d.rank})"),
                f"busy {_ms(d.busy_ns)} of {_ms(d.span_ns)} ({d.busy_pct:.1f} %), idle {_ms(d.idle_ns)}",
            )
            for d in f.busy.devices
        ]
        parts.append(section(f"Busy/idle — all: {f.busy.command}", busy or [("devices", "no GPU activity")]))
    for title, top in (
        ("Top kernels", f.top_kernels),
        ("Top ops", f.top_ops),
        ("Top NVTX ranges", f.top_ranges),
    ):
        text = _render_top(title, top, i, answer)
        if text:
            parts.append(text)
    if f.graphs is not None:
        parts.append(
            section(
                f"CUDA graphs — all: {f.graphs.command}",
                [("graphs", f.graphs.graphs), ("executions", f.graphs.executions)],
            )
        )
    it = f.iterations
    steps = (
        [("steps", "none: no ProfilerStep#N range (--marker RANGE names another)")]
        if it is None
        else [
            ("marker", f"{it.marker}: {', '.join(it.ranges[:3])}" + (" ..." if len(it.ranges) > 3 else "")),
            ("steps", it.steps),
            ("mean host time", _ms(it.mean_host_ns)),
            ("gpu time in steps", _ms(it.gpu_time_ns)),
            ("all", it.command),
        ]
    )
    if f.kind != "ncu":
        parts.append(section("Iterations", steps))
    if f.warnings:
        parts.append(section("Warnings", [(w.code, w.message) for w in f.warnings], wrap=True))
    if f.unmodeled:
        items = ", ".join(f"{n} {kind}" for kind, n in f.unmodeled.items())
        parts.append(section("Unmodeled", [("items", f"{items} (--json lists each under unmodeled)")]))
    return "\n\n".join(parts)


def _pct(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"[{low:+.2f} %, {high:+.2f} %]"


def _render(d: ProfileDiffData) -> str:
    b, c = d.baseline, d.candidate
    m = d.method
    head = section(
        f"Profile diff ({d.kind}, by {d.by})",
        [
            ("baseline", f"{d.k_baseline} captures: {', '.join(x.path for x in b)}"),
            ("candidate", f"{d.k_candidate} captures: {', '.join(x.path for x in c)}"),
            ("uncertainty", m.uncertainty),
            ("values", m.values),
            ("multiple comparisons", m.multiple_comparisons),
            (
                "keys",
                f"{d.counts.keys} ({d.counts.both} both sides, {d.counts.new} new, {d.counts.vanished} "
                f"vanished); {d.counts.tested} tested, {d.counts.flagged} flagged",
            ),
        ],
    )
    comp = d.comparability
    rows: list[tuple[str, object]] = [
        (f.name, "same" if f.same else f"DIFFERS: baseline {f.baseline}, candidate {f.candidate}")
        for f in comp.facts
    ]
    w = comp.work
    if w.source == "unknown":
        rows.append(("steps", "unknown (no --marker, no ProfilerStep ranges)"))
    else:
        rows.append(
            (
                "steps",
                f"{', '.join(w.step_ranges)}: baseline {w.steps_baseline}, candidate {w.steps_candidate}",
            )
        )
    if all(f.kernels_per_step is not None for f in (*b, *c)):
        per_b = [round(f.kernels_per_step or 0.0, 1) for f in b]
        per_c = [round(f.kernels_per_step or 0.0, 1) for f in c]
        rows.append(("kernels per step", f"baseline {per_b}, candidate {per_c}"))
    parts = [head, section("Comparability", rows)]
    if d.warnings:
        parts.append(section("Warnings", [(w.code, w.message) for w in d.warnings]))
    return "\n\n".join(parts)


def _render_totals(d: ProfileDiffData) -> str:
    from gpuopt.cli._render import table

    rows = [
        [
            t.name,
            f"{t.baseline_mean_ns / 1e6:.4f} ms",
            f"{t.candidate_mean_ns / 1e6:.4f} ms",
            "—" if t.change_pct is None else f"{t.change_pct:+.2f} %",
            _pct(t.ci_low_pct, t.ci_high_pct),
            "—" if t.ci_level is None else f"{100 * t.ci_level:g} %",
        ]
        for t in d.totals
    ]
    head = ["total", "baseline mean", "candidate mean", "change", "interval", "level"]
    return "Totals (each its own test, not part of the key family)\n" + table(head, rows)


@profile.command("overview")
@click.argument(
    "files",
    nargs=-1,
    required=True,
    help="Captures: nsys .sqlite exports or .nsys-rep, Kineto traces or folders of rank traces, .ncu-rep "
    "(or cap: references of an artifact root).",
)
@click.option(
    "--marker",
    help="The range whose instances are steps (NVTX or record_function; its text is enough: decode_step "
    "finds :decode_step). Default: ProfilerStep#N when present.",
)
@command("gpuopt.profile.overview/v1")
def overview(files: tuple[str, ...], marker: str | None) -> Outcome:
    """What is in each capture (nsys .sqlite export or .nsys-rep, Kineto trace or folder of rank traces,
    .ncu-rep): one call instead of six.

    Per file: the profiler, driver and GPUs, the CUDA-graph trace mode (nsys), totals (kernels, summed
    kernel time, memcpys, memsets, graph executions, span), busy/idle per device, the 5 kernels with the
    most GPU time, the 5 torch ops with the most GPU time of their own or the 5 NVTX ranges with the most
    host time, CUDA graphs, steps (ProfilerStep#N or --marker) and warnings and content gpuopt does not
    model. Each section names the command that prints it whole, in the same order. A file that cannot be
    read is an entry with its error (exit 2 only when every file failed). Globs are expanded.

    \b
    Examples:
      gpuopt profile overview profile.sqlite
      gpuopt profile overview 'runs/*.sqlite' trace.json.gz kernels.ncu-rep --json
    """
    from gpuopt.overview import overview_document

    answer = overview_document(files, marker=marker)

    def render() -> str:
        return "\n\n\n".join(_render_file(i, f, answer) for i, f in enumerate(answer.data.files))

    return answered(answer, render)


@profile.command("diff")
@click.option(
    "--baseline",
    "baseline",
    multiple=True,
    required=True,
    help="A baseline capture file, or cap:INVOCATION/VARIANT[/CASE] (every capture it names) (repeat).",
)
@click.option(
    "--candidate",
    "candidate",
    multiple=True,
    required=True,
    help="A candidate capture file, or cap:INVOCATION/VARIANT[/CASE] (repeat).",
)
@click.option(
    "--root",
    type=_FILE,
    default=Path("."),
    show_default=True,
    help="The artifact root that cap: references read (gpuopt capture's root).",
)
@click.option(
    "--by",
    type=click.Choice(["kernel", "op", "nvtx", "memcpy"]),
    default="kernel",
    show_default=True,
    help="The key: kernel name, op (torch), NVTX / record_function range, memcpy kind.",
)
@click.option(
    "--min-effect",
    type=FiniteFloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Keys whose |change| is below this percent are never flagged.",
)
@click.option(
    "--paired", is_flag=True, help="Captures were interleaved in pairs: baseline i with candidate i."
)
@click.option(
    "--marker",
    help="The range that marks one step (NVTX or record_function; its text is enough: decode_step finds "
    ":decode_step): its instances count the steps of each capture. Default: ProfilerStep#N when present.",
)
@click.option(
    "--cite",
    "cite",
    metavar="INVOCATION",
    help="Record this diff (cap: inputs only) as cited by that target or final-audit result in --root; "
    "gpuopt report and handoff show it beside the verdict.",
)
@click.option("--nvtx", help="nsys: keep only the work launched inside this NVTX range.")
@click.option(
    "--fdr",
    type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Declared false-discovery rate of the flags (Benjamini-Hochberg over keys) and false-coverage "
    "rate of the key intervals; the totals' intervals are at 1 - FDR.",
)
@table_options
@command("gpuopt.profile.diff/v2")
def diff(
    baseline: tuple[str, ...],
    candidate: tuple[str, ...],
    root: Path,
    by: Dimension,
    min_effect: float,
    paired: bool,
    marker: str | None,
    cite: str | None,
    nvtx: str | None,
    fdr: float,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Compare baseline and candidate captures key by key (nsys exports, Kineto traces or ncu reports).

    Each --baseline/--candidate is one capture of its own run (the same file twice, or byte-identical
    copies, are refused); all must be of one kind and one GPU model. Per key: mean count and time per
    capture on each side, per-instance time, the change (candidate - baseline, ns and %), and with at
    least 2 captures a side a t-test p-value (Welch; --paired: the i-th baseline and candidate captures
    form a pair, automatic when both sides are cap: references to one capture invocation), a
    Benjamini-Hochberg q-value over keys, and intervals at the level the flags imply (flagged = q <= --fdr
    and |change| >= --min-effect; a flagged key's interval excludes 0, an unflagged key's does not). A
    totals row compares the whole kernel time, and the time per step when steps are known (--marker, or
    ProfilerStep#N). When captures hold different numbers of steps, per-key values are per step. One
    capture per side gives no CI ("one capture per side: no uncertainty"). The comparability block lists
    GPU, driver, tool, capture options and CUDA-graph trace mode of every capture; any difference is a
    warning. Keys: kernel names with whitespace collapsed ([CUDA graph G exec E] for graph executions of a
    graph-level nsys trace); NVTX ranges without PyTorch's ", seq = N" / ", op_id = N" and with
    ProfilerStep#N as ProfilerStep#*.

    \b
    Examples:
      gpuopt profile diff --baseline a.sqlite --candidate b.sqlite
      gpuopt profile diff --baseline a1.sqlite --baseline a2.sqlite \\
          --candidate b1.sqlite --candidate b2.sqlite
      gpuopt profile diff --baseline a1.json.gz --baseline a2.json.gz --candidate b1.json.gz \\
          --candidate b2.json.gz --paired --by op --json
      gpuopt profile diff --root root --baseline cap:inv-.../original --candidate cap:inv-.../candidate
    """
    from gpuopt.evaluation.capture import diff as lib

    if out is not None and cite is not None:
        check_out(out)  # before the citation is recorded: a diff that fails leaves no record
    answer = lib.diff_document(
        baseline,
        candidate,
        root=root,
        cite=cite,
        by=by,
        paired=paired,
        fdr=fdr,
        min_effect=min_effect,
        marker=marker,
        nvtx=nvtx,
        limit=limit,
        sort=current_sort(),
    )
    data = answer.data

    def render() -> str:
        cited = f"\n\nrecorded as {data.citation} (cited by {cite})" if data.citation else ""
        table = for_people(answer.table, _views.diff_keys(answer.table))
        return f"{_render(data)}{cited}\n\n{render_frame(table, limit)}\n\n{_render_totals(data)}"

    return answered(answer, render, out=out)
