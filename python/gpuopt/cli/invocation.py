"""``gpuopt status`` and ``gpuopt cancel``: derived from files and OS facts only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import ROOT_ARGUMENT
from gpuopt.cli._render import section, table

if TYPE_CHECKING:
    from gpuopt.models.evaluation.cli import StatusReport
    from gpuopt.models.evaluation.status import InvocationStatus


def _render_one(st: InvocationStatus) -> str:
    rows: list[tuple[str, object]] = [
        ("invocation", st.invocation_id),
        ("operation", st.operation),
        ("state", st.state),
        ("phase", st.phase),
        ("heartbeat age s", None if st.heartbeat_age_s is None else round(st.heartbeat_age_s, 1)),
        ("unresponsive", st.unresponsive),
        (
            "calls",
            f"{st.calls.completed}/{st.calls.planned}"
            + (f" (call {st.calls.current} running)" if st.calls.current is not None else ""),
        ),
        ("gpu seconds", round(st.gpu_seconds, 3)),
        ("cleanup", st.cleanup_status),
        ("cancel requested", st.cancel_requested),
    ]
    if st.result_ref is not None:
        rows.append(("result sha256", st.result_ref.sha256))
        ref = {"invocation_id": st.invocation_id, "sha256": st.result_ref.sha256}
        rows.append(("reference", json.dumps(ref)))  # ready to paste into the next request
    if st.summary:
        rows += list(st.summary.items())
    return section("Invocation", rows)


def _render(report: StatusReport) -> str:
    if report.invocation is not None:
        return _render_one(report.invocation)
    assert report.root is not None
    r = report.root
    champion = r.champion if isinstance(r.champion, str) else r.champion.id
    head = section("Root", [("root", r.root), ("target", r.target.id), ("champion", champion)])
    rows = [
        [s.invocation_id, s.operation, s.state, f"{s.calls.completed}/{s.calls.planned}", s.cleanup_status]
        for s in r.invocations
    ]
    return (
        head + "\n\nNot completed\n" + table(["invocation", "operation", "state", "calls", "cleanup"], rows)
    )


@click.command()
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.argument(
    "invocation_id",
    required=False,
    help="The invocation (inv-<32hex>, -r<N> for a retry); without it, the root's Target, Champion and "
    "unfinished invocations.",
)
@command("gpuopt.status/v1")
def status(root: Path, invocation_id: str | None) -> Outcome:
    """Show an invocation's state (starting, running, completed, lost), or every pending one of a root.

    Reads files and OS facts (supervisor pid and start token) only; never writes.

    \b
    Examples:
      gpuopt status ./root
      gpuopt status ./root inv-0123456789abcdef0123456789abcdef --json
    """
    from gpuopt.evaluation import invocation
    from gpuopt.models.evaluation.cli import StatusReport

    if invocation_id is None:
        report = StatusReport(invocation=None, root=invocation.root_status(root))
    else:
        report = StatusReport(invocation=invocation.status(root, invocation_id), root=None)
    return Outcome(data=report, render=lambda: _render(report))


@click.command()
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.argument("invocation_id", help="The invocation to cancel (inv-<32hex>, -r<N> for a retry).")
@command("gpuopt.cancel/v1")
def cancel(root: Path, invocation_id: str) -> Outcome:
    """Cancel an invocation: its supervisor terminates the running call; an orphaned call is killed here.

    Idempotent; on a completed invocation with confirmed cleanup it only reports.

    \b
    Examples:
      gpuopt cancel ./root inv-0123456789abcdef0123456789abcdef
    """
    from gpuopt.evaluation import invocation

    st = invocation.cancel(root, invocation_id)
    return Outcome(data=st, render=lambda: _render_one(st))
