"""``gpuopt example run``: the whole evaluation loop on the bundled example."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._registry import Group
from gpuopt.cli._render import table

if TYPE_CHECKING:
    from gpuopt.models.example import ExampleRun


@click.group(cls=Group)
def example() -> None:
    """The bundled example: a small real workload with an original, a faster, a wrong and a no-effect
    candidate, and its driver."""


def _render(run: ExampleRun) -> str:
    rows = []
    for s in run.steps:
        ci = ""
        if s.estimate_pct is not None:
            ci = f"{s.estimate_pct:+.1f} % [{s.ci_low_pct or 0:+.1f}, {s.ci_high_pct or 0:+.1f}]"
        rows.append([s.step, s.subject, s.verdict, s.primary_verdict, ci, s.prediction_status, s.detail])
    headers = ["step", "subject", "verdict", "primary", "effect [95 % CI]", "prediction", "facts"]
    predictions = [
        f"Prediction check, {s.step} {s.subject}: {s.prediction_status}: {s.prediction}."
        for s in run.steps
        if s.prediction is not None
    ]
    lines = [
        f"gpuopt example ({run.workload}) in {run.directory} — {run.elapsed_s:.0f} s",
        "",
        table(headers, rows),
        "",
        *predictions,
        *([""] if predictions else []),
        f"Note: {run.acting_as_user}.",
        f"Artifact root: {run.root}   (try: gpuopt ls {run.root}; gpuopt report {run.root})",
        f"Handoff draft: {run.handoff}",
        f"Requests (rerunnable): {run.directory}/requests/",
    ]
    return "\n".join(lines)


@example.command("run")
@click.argument(
    "directory",
    required=False,
    default="gpuopt-example",
    type=click.Path(path_type=Path),
    help="A new folder the example project is copied into and run in.",
)
@click.option("--gpu", is_flag=True, help="Use the small torch workload on a CUDA GPU (needs torch + CUDA).")
@command("gpuopt.example-run/v1")
def run(directory: Path, gpu: bool) -> Outcome:
    """Run the whole loop on the bundled example in a new DIRECTORY (default ./gpuopt-example):
    readiness, baseline, noise, three Experiments, their screens, two targets (the wrong candidate's is
    refused by its rejected screen), the Champion selection, the final audit and the handoff draft.

    Progress goes to stderr; the verdicts with their confidence intervals to stdout. gpuopt never selects a
    Champion by itself: the example acts as the user for that one explicit choice, and says so.

    \b
    Examples:
      gpuopt example run
      gpuopt example run /tmp/demo --json
      gpuopt example run --gpu          # torch on the first CUDA GPU
    """
    from gpuopt.example import runner

    out = runner.run(directory, gpu=gpu, progress=lambda line: click.echo(line, err=True))
    return Outcome(data=out, render=lambda: _render(out))
