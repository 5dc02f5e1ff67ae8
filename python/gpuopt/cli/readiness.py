"""``gpuopt readiness check`` and ``gpuopt readiness smoke``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import ROOT_ARGUMENT, FiniteFloatRange, RequestFile, RequestSource, count
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section, table
from gpuopt.evaluation import registry

if TYPE_CHECKING:
    from gpuopt.models.evaluation.readiness import ReadinessPlan, ReadinessResult
    from gpuopt.models.evaluation.status import SubmitOutcome


@click.group(cls=Group)
def readiness() -> None:
    """Freeze a Target (readiness check) and re-run its smoke as a supervised invocation."""


def _render(r: ReadinessResult) -> str:
    rows: list[tuple[str, object]] = [
        ("status", r.status),
        ("root", r.root),
        ("target", r.target.id),
        ("target sha256", r.target.sha256),
        ("mode", r.mode),
        ("claim layer", r.claim_layer),
        ("attribution scope", r.attribution_scope),
    ]
    if r.smoke is not None:
        rows.append(
            (
                "smoke",
                f"{r.smoke.elapsed_s:.3f} s, correctness "
                + ("passed" if all(c.passed for c in r.smoke.correctness) else "failed"),
            )
        )
    out = section("Target frozen", rows)
    if r.identity_notes:
        out += "\n  notes:\n" + "\n".join(f"    - {n}" for n in r.identity_notes)
    if r.unavailable:
        out += "\n  unavailable (diagnostic Target): " + ", ".join(r.unavailable)
    return out + "\n\n" + table(["object", "digest"], sorted(r.objects.items()))


def _render_plan(p: ReadinessPlan) -> str:
    rows: list[tuple[str, object]] = [("root", p.root), ("mode", p.mode), ("claim layer", p.claim_layer)]
    out = section("Readiness check (dry run: nothing written)", rows)
    out += "\n  would:\n" + "\n".join(f"    - {s}" for s in p.steps)
    return out + "\n\n" + table(["input", "digest"], sorted(p.objects.items()))


@readiness.command("check")
@click.option(
    "--request", "request_file", required=True, type=RequestFile(), help="The request JSON ('-' = stdin)."
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Validate the request, probe the storage and hash the inputs; run and write nothing "
    "(envelope gpuopt.readiness-plan/v1).",
)
@command(registry.get("readiness_check").envelope)
def check(request_file: RequestSource, dry_run: bool) -> Outcome:
    """Freeze a Target into a new artifact root after a 2-sample smoke call through its driver.

    The request names `root` (which must not exist), the original, test set, accuracy rules, metrics,
    objective, driver, GPUs and statistics settings; relative paths are relative to the current folder.
    On failure nothing is created at the root and the attempt is kept under <parent>/.gpuopt-readiness/.

    \b
    Examples:
      gpuopt readiness check --request target.json
      gpuopt readiness check --request target.json --dry-run   # validate, write nothing
      gpuopt schema gpuopt.request.readiness-check/v1   # what the request may hold
    """
    from gpuopt.evaluation import readiness as lib

    if dry_run:
        plan = lib.plan(request_file.read(), cwd=Path.cwd())
        return Outcome(data=plan, render=lambda: _render_plan(plan), schema="gpuopt.readiness-plan/v1")
    result: ReadinessResult = registry.get("readiness_check").entry()(request_file.read(), cwd=Path.cwd())
    return Outcome(data=result, render=lambda: _render(result))


def _render_submit(s: SubmitOutcome) -> str:
    st = s.status
    rows: list[tuple[str, object]] = [
        ("invocation", s.invocation_id),
        ("deduplicated", s.deduplicated),
        ("state", st.state),
        ("calls", f"{st.calls.completed}/{st.calls.planned}"),
        ("cleanup", st.cleanup_status),
    ]
    if st.summary:
        rows += list(st.summary.items())
    return section("Smoke invocation", rows)


@readiness.command("smoke")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.option("--case", "cases", multiple=True, help="A test case to run (repeatable; default: every case).")
@click.option("--samples", default=2, show_default=True, type=count(1), help="Samples per metric.")
@click.option(
    "--command-timeout-s", type=FiniteFloatRange(min=0, min_open=True), help="Per call (default 600)."
)
@click.option("--retry-of", help="The failed attempt this one retries.")
@click.option("--keep-workspace", is_flag=True, help="Keep the materialized subjects after the run.")
@click.option(
    "--wait", "wait_s", type=FiniteFloatRange(min=0), help="Wait up to this many seconds for the end."
)
@command(registry.get("readiness_smoke").envelope)
def smoke(
    root: Path,
    cases: tuple[str, ...],
    samples: int,
    command_timeout_s: float | None,
    retry_of: str | None,
    keep_workspace: bool,
    wait_s: float | None,
) -> Outcome:
    """Re-run the smoke of a published Target as a supervised invocation (gates and correctness, no stats).

    Identical requests return the existing result; a failed one needs --retry-of.

    \b
    Examples:
      gpuopt readiness smoke ./root --wait 120
      gpuopt status ./root inv-0123...
    """
    from gpuopt.evaluation import invocation
    from gpuopt.models.evaluation.invocation import Limits

    limits = Limits() if command_timeout_s is None else Limits(command_timeout_s=command_timeout_s)
    out: SubmitOutcome = registry.get("readiness_smoke").entry()(
        root,
        case_ids=list(cases) or None,
        samples_per_call=samples,
        limits=limits,
        retry_of=retry_of,
        keep_workspace=keep_workspace,
    )
    if wait_s is not None:
        out = out.model_copy(update={"status": invocation.wait(root, out.invocation_id, timeout_s=wait_s)})
    return Outcome(data=out, render=lambda: _render_submit(out))
