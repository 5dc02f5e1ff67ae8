"""``gpuopt ls | show | report | handoff``: read-only views of an artifact root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli import _views
from gpuopt.cli._html import html_option
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import ROOT_ARGUMENT, output_path
from gpuopt.cli._render import section
from gpuopt.cli._tables import answered, current_sort, for_people, render_frame, table_options

if TYPE_CHECKING:
    from gpuopt.models.evaluation.views import HandoffData, ReportData, ShowData

HUMAN_COLUMNS = {
    "invocations": [
        "id", "operation", "mechanism", "state", "verdict", "stop_reason", "primary_verdict",
        "estimate_pct", "ci_low_pct", "ci_high_pct", "pairs_valid",
    ],
    "experiments": ["id", "mechanism", "claim_layer", "rejection_scope", "screen_verdict", "target_verdict"],
}  # fmt: skip
"""The columns shown to a person (``--json`` and ``--out`` carry them all)."""


@click.command("ls")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.argument(
    "kind",
    required=False,
    help="What to list: invocations, experiments, selections, maps or objects.",
    default="invocations",
    type=click.Choice(["invocations", "experiments", "selections", "maps", "objects"]),
)
@click.option("--operation", help="Only this operation (baseline, noise, screen, target, final_audit).")
@click.option("--experiment", help="Only this Experiment id.")
@click.option("--mechanism", help="Only this mechanism.")
@click.option("--verdict", help="Only this verdict.")
@click.option("--status", help="Only this state (starting, running, completed, lost).")
@table_options
@command("gpuopt.ls/v2")
def ls(
    root: Path,
    kind: str,
    operation: str | None,
    experiment: str | None,
    mechanism: str | None,
    verdict: str | None,
    status: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """List records from the ledger (plus the live state of unfinished invocations): id, operation,
    Experiment, mechanism, verdict, primary estimate and CI, valid/invalid pairs, GPU-seconds, time.

    \b
    Examples:
      gpuopt ls ./root
      gpuopt ls ./root experiments
      gpuopt ls ./root --operation target --verdict passed --json
    """
    from gpuopt.evaluation.views import listing

    answer = listing.ls_document(
        root,
        kind,
        limit=limit,
        sort=current_sort(),
        operation=operation,
        experiment=experiment,
        mechanism=mechanism,
        verdict=verdict,
        status=status,
    )
    frame = answer.table
    shown = [c for c in HUMAN_COLUMNS.get(kind, frame.columns) if c in frame.columns]
    narrow = for_people(frame, _views.columns(frame, shown) if shown else frame)
    return answered(
        answer,
        lambda: (
            render_frame(narrow, limit)
            + ("\n(more columns with --json or --out FILE)" if narrow.width < frame.width else "")
        ),
        out=out,
    )


def _render_show(data: ShowData, text: str | None) -> str:
    rows: list[tuple[str, object]] = [
        ("kind", data.kind),
        ("id", data.id),
        ("path", data.path),
        ("sha256", data.sha256),
        ("verified", data.verified),
    ]
    if data.status is not None:
        rows += [("state", data.status.state), ("cleanup", data.status.cleanup_status)]
    from gpuopt.evaluation.outcome import outcome_lines

    head = section("Record", rows)
    if text is not None:
        return head + "\n\n" + text
    why = "\n".join(line for o in data.outcomes for line in outcome_lines(o))
    return head + ("\n\nOutcome\n" + why if why else "") + "\n\n" + json.dumps(data.record, indent=2)


@click.command("show")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.argument("record_id", help="The record's id: tgt-, exp-, inv-, sel- or map- followed by hex.")
@click.option(
    "--part",
    type=click.Choice(["pairs", "samples", "calls", "events", "resources"]),
    help="Show one table of an invocation instead of the record.",
)
@table_options
@command("gpuopt.show/v1")
def show(root: Path, record_id: str, part: str | None, limit: int, out: Path | None) -> Outcome:
    """Show one record (Target, Experiment, invocation, Selection) verified against its ledger hash, with
    the derived status of an invocation; or one table of an invocation (--part pairs|samples|calls|events).

    \b
    Examples:
      gpuopt show ./root inv-0123456789abcdef0123456789abcdef
      gpuopt show ./root inv-0123456789abcdef0123456789abcdef --part pairs --out pairs.parquet
    """
    from gpuopt.evaluation.views import listing

    answer = listing.show_document(root, record_id, part=part, limit=limit, sort=current_sort())
    text = render_frame(answer.table, limit) if answer.tables else None
    return answered(answer, lambda: _render_show(answer.data, text), out=out)


@click.command("report")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.argument("invocation_id", required=False, help="One invocation to report; without it, the whole root.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json"]),
    default="md",
    show_default=True,
    help="md: Markdown for people; json: the report's structure (the HTML page is --html).",
)
@click.option("--out", type=output_path(), help="Write the report to this file.")
@html_option(required=False)
@command("gpuopt.report/v1")
def report(
    root: Path, invocation_id: str | None, fmt: str, out: Path | None, html_out: Path | None
) -> Outcome:
    """A report of a root (invocations, Experiments by mechanism, Champion history, totals) or of one
    invocation (plan, statistics with CIs, per-case effects, pairs, resolution, contamination,
    GPU-seconds). Reports are views, never evidence.

    \b
    Examples:
      gpuopt report ./root
      gpuopt report ./root inv-0123456789abcdef0123456789abcdef --out report.md
      gpuopt report ./root --html root.html

    --html OUT writes one page: plots of the effects with their CIs against the minimum-effect band, the A/A
    noise's MDE and per-case effects, with the report's tables below them.
    """
    from gpuopt.evaluation.views import report as lib

    if html_out is not None:
        return _html_report(root, invocation_id, html_out)

    data: ReportData = lib.report(root, invocation_id, fmt=fmt, out=out)

    def render() -> str:
        if data.out is not None:
            return f"report written to {data.out}"
        if data.text is not None:
            return data.text
        return json.dumps(data.report, indent=2)

    return Outcome(data=data, render=render)


def _html_report(root: Path, invocation_id: str | None, out: Path) -> Outcome:
    from gpuopt.html import evaluation, page
    from gpuopt.models.evaluation.views import ReportData

    page.prepare(out)
    if invocation_id is None:
        evaluation.root_page(root, out)
    else:
        evaluation.invocation_page(root, invocation_id, out)
    data = ReportData(format="html", scope=invocation_id or str(root), out=str(out), text=None, report=None)
    return Outcome(data=data, render=lambda: f"HTML report written to {out}")


@click.command("handoff")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.option(
    "--out",
    type=output_path(),
    help="Where to write (default ROOT/handoff.draft.md).",
)
@command("gpuopt.handoff/v1")
def handoff(root: Path, out: Path | None) -> Outcome:
    """Draft the handoff notes from the records: Target, Champion (or original) with its justifying result
    and final-audit status, Experiments by mechanism, scoped local results, noise, contamination,
    unfinished invocations, GPU-seconds. Marked as a draft; every fact cites its record; conclusion, stop
    reason, open risks and next directions are left TO COMPLETE.

    \b
    Examples:
      gpuopt handoff ./root
    """
    from gpuopt.evaluation.views import handoff as lib

    data: HandoffData = lib.write(root, out)
    return Outcome(
        data=data,
        render=lambda: (
            f"DRAFT written to {data.path}: {data.facts} cited facts, "
            f"{len(data.placeholders)} sections TO COMPLETE ({', '.join(data.placeholders)})"
        ),
    )
