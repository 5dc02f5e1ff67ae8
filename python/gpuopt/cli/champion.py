"""``gpuopt champion show | select | restore-original | history``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import ROOT_ARGUMENT, RequestFile, RequestSource
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section, table
from gpuopt.evaluation import registry

if TYPE_CHECKING:
    from gpuopt.models.evaluation.champion import ChampionHistory, ChampionState, SelectOutcome


@click.group(cls=Group)
def champion() -> None:
    """The Champion: the variant currently selected (the original until an explicit select).

    gpuopt never selects or restores by itself: each change is an explicit request, checked for eligibility
    and applied with compare-and-swap; history is append-only.
    """


def _render_state(s: ChampionState) -> str:
    return section(
        "Champion",
        [
            ("decision", s.decision),
            ("variant", s.variant.digest),
            ("selection", None if s.selection is None else s.selection.id),
            ("selection sha256", None if s.selection is None else s.selection.sha256),
            ("experiment", None if s.experiment is None else s.experiment.id),
            ("target", s.target.id),
        ],
    )


@champion.command("show")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@command("gpuopt.champion-show/v1")
def show(root: Path) -> Outcome:
    """Show the current Champion (creates nothing).

    \b
    Examples:
      gpuopt champion show ./root
    """
    from gpuopt.evaluation import champion as lib

    state = lib.show(root)
    return Outcome(data=state, render=lambda: _render_state(state))


def _render_select(o: SelectOutcome) -> str:
    return section(
        "Selection",
        [
            ("selection", o.selection.id),
            ("sha256", o.selection.sha256),
            ("created", o.created),
            ("decision", o.decision),
            ("variant", o.variant.digest),
            ("previous", None if o.previous is None else o.previous.id),
        ],
    )


@champion.command("select")
@click.option(
    "--request", "request_file", required=True, type=RequestFile(), help="The request JSON ('-' = stdin)."
)
@command(registry.get("champion_select").envelope)
def select(request_file: RequestSource) -> Outcome:
    """Select the candidate of a target result that passed against the current Champion.

    The request names the result ({invocation_id, sha256}) and the expected current Champion (a selection
    ref or "original"); if the Champion moved, it fails with stale_reference. Repeating an identical select
    returns the same Selection.

    \b
    Examples:
      gpuopt champion select --request select.json
      gpuopt schema gpuopt.request.champion-select/v1
    """
    out: SelectOutcome = registry.get("champion_select").entry()(request_file.read(), cwd=Path.cwd())
    return Outcome(data=out, render=lambda: _render_select(out))


@champion.command("restore-original")
@click.option(
    "--request", "request_file", required=True, type=RequestFile(), help="The request JSON ('-' = stdin)."
)
@command(registry.get("champion_restore").envelope)
def restore_original(request_file: RequestSource) -> Outcome:
    """Restore the original, justified by a final audit of the current Champion that was rejected with
    restore_supported: true.

    \b
    Examples:
      gpuopt champion restore-original --request restore.json
    """
    out: SelectOutcome = registry.get("champion_restore").entry()(request_file.read(), cwd=Path.cwd())
    return Outcome(data=out, render=lambda: _render_select(out))


def _render_history(h: ChampionHistory) -> str:
    rows = [
        [
            e.selection.id,
            e.decision,
            e.variant.digest[:16],
            e.result.invocation_id,
            e.verdict,
            None if e.estimate_pct is None else f"{e.estimate_pct:+.2f} %",
            None if e.ci_low_pct is None else f"[{e.ci_low_pct:+.2f}, {e.ci_high_pct or 0:+.2f}]",
            e.mechanism,
            e.orphan,
        ]
        for e in h.entries
    ]
    head = "Champion history (newest first)" + ("" if h.entries else ": the original, nothing selected")
    return (
        head
        + "\n"
        + table(
            [
                "selection",
                "decision",
                "variant",
                "result",
                "verdict",
                "estimate",
                "CI",
                "mechanism",
                "orphan",
            ],
            rows,
        )
    )


@champion.command("history")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.option("--all", "include_orphans", is_flag=True, help="Also list Selections never pointed to.")
@command("gpuopt.champion-history/v1")
def history(root: Path, include_orphans: bool) -> Outcome:
    """The Selections from the current pointer back along `previous`, with their justifying results.

    \b
    Examples:
      gpuopt champion history ./root --all
    """
    from gpuopt.evaluation import champion as lib

    h = lib.history(root, include_orphans=include_orphans)
    return Outcome(data=h, render=lambda: _render_history(h))
