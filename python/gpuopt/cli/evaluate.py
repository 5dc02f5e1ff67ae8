"""The evaluation verbs' commands: every supervised verb of the operations registry with a request
(``gpuopt baseline``, ``noise``, ``screen``, ``target``, ``final-audit``, ``capture``: generated from its
entry by :func:`generated`) and ``gpuopt experiment``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from gpuopt.cli._output import Outcome, command, with_output
from gpuopt.cli._params import FiniteFloatRange, RequestFile, RequestSource, output_path
from gpuopt.cli._render import section, table
from gpuopt.errors import InputError
from gpuopt.evaluation import registry
from gpuopt.evaluation.registry import Verb

if TYPE_CHECKING:
    from gpuopt.models.evaluation.experiment import ExperimentOutcome
    from gpuopt.models.evaluation.skeleton import RequestSkeleton
    from gpuopt.models.evaluation.status import SubmitOutcome


class _Submitted(Protocol):
    """What a supervised verb's command data holds (``EvaluationData``, ``CaptureData``)."""

    @property
    def dry_run(self) -> object: ...
    @property
    def submission(self) -> SubmitOutcome | None: ...
    @property
    def summary(self) -> list[str]: ...


def _render(name: str, data: _Submitted) -> str:
    if data.dry_run is not None:
        return f"{name} (dry run: nothing written)\n" + "\n".join(f"  {line}" for line in data.summary)
    return name + "\n" + "\n".join(f"  {line}" for line in data.summary)


def generated(verb: Verb) -> click.Command:
    """The command of a supervised verb the operations registry generates: its help, its envelope, the
    request file and the submission options; it calls the verb's entry point."""

    @click.command(verb.command[-1], help=with_output(verb.help or "", verb.envelope))
    @click.option(
        "--request",
        "request_file",
        required=True,
        type=RequestFile(),
        help="The request JSON ('-' = stdin); relative paths are relative to the current folder.",
    )
    @click.option(
        "--wait",
        is_flag=True,
        help="Wait for the result (else return the invocation status at once); "
        "an invocation that ends lost exits 2 (invocation_lost).",
    )
    @click.option(
        "--timeout-s",
        type=FiniteFloatRange(min=0, min_open=True),
        help="With --wait: stop waiting after this many seconds (default: operation timeout + 120 s).",
    )
    @click.option(
        "--dry-run", is_flag=True, help="Print the plan, dedupe decision and estimate; write nothing."
    )
    @command(verb.envelope)
    def submit(request_file: RequestSource, wait: bool, timeout_s: float | None, dry_run: bool) -> Outcome:
        data: Any = verb.entry()(
            request_file.read(), cwd=Path.cwd(), dry_run=dry_run, wait=wait, timeout_s=timeout_s
        )
        name = " ".join(verb.command)
        return Outcome(
            data=data, render=lambda: _render(name, data), failure=lost(data.submission) if wait else None
        )

    return submit


def lost(sub: SubmitOutcome | None) -> InputError | None:
    """``--wait`` that ends on a lost invocation (its supervisor gone, no result) is a failure, not data."""
    if sub is None or sub.status.state != "lost":
        return None
    return InputError(
        "invocation_lost",
        f"{sub.invocation_id} was lost: its supervisor is gone and it left no result "
        f"(cleanup {sub.status.cleanup_status}); `gpuopt cancel` ends what it left, then retry with retry_of",
        path=sub.invocation_id,
    )


def _render_experiment(o: ExperimentOutcome) -> str:
    c = o.opportunity
    rows: list[tuple[str, object]] = [
        ("experiment", o.experiment.id),
        ("sha256", o.experiment.sha256),
        ("created", o.created),
        ("mechanism", o.mechanism),
        ("candidate", o.candidate.digest),
        ("reference", o.reference.variant.digest),
        ("reference selection", None if o.reference.selection is None else o.reference.selection.id),
        ("f (coverage)", c.f),
        ("r (local saving)", None if c.r is None else round(c.r, 6)),
        ("Amdahl ceiling %", None if c.ceiling_pct is None else round(c.ceiling_pct, 6)),
        ("required saving", None if c.required_saving is None else round(c.required_saving, 6)),
        ("ceiling vs minimum", c.ceiling_vs_minimum),
    ]
    head = "Experiment (dry run: nothing written)" if o.dry_run else "Experiment"
    if o.dry_run:
        rows[2] = ("would create", o.created)
    return section(head, rows) + "\n\n" + table(["changed path"], [[p] for p in o.changed_paths])


def _render_skeleton(s: RequestSkeleton) -> str:
    notes = "\n".join(
        ["filled from the root:", *(f"  {line}" for line in s.filled), "fill in (then check with --dry-run):"]
        + [f"  {p}" for p in s.placeholders]
    )
    if s.out is None:  # stdout stays pasteable JSON; the notes go to stderr
        click.echo(notes, err=True)
        return json.dumps(s.request, indent=2)
    return f"wrote {s.out}\n{notes}\nthen: gpuopt experiment --request {s.out} --dry-run"


@click.command("experiment")
@click.argument(
    "action",
    required=False,
    type=click.Choice(["init"]),
    help="init: write a request skeleton for ROOT instead of creating an Experiment.",
)
@click.argument("root", required=False, help="With init: the artifact root whose Target fills the skeleton.")
@click.option(
    "--request",
    "request_file",
    type=RequestFile(),
    help="The request JSON ('-' = stdin); required unless `init`.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check the request and compute the Experiment id, hashing the candidate without storing it; "
    "write nothing.",
)
@click.option(
    "--out",
    type=output_path(),
    help="With `init`: write the skeleton to this file (never overwritten) instead of stdout.",
)
@command(registry.get("experiment").envelope)
def experiment(
    action: str | None, root: str | None, request_file: RequestSource | None, dry_run: bool, out: Path | None
) -> Outcome:
    """Freeze a candidate against the current Champion (or the original) with its comparison contract,
    screen design, opportunity claim and premises.

    Checks the change scope, the contract, and the opportunity claim's arithmetic (coverage f, local saving
    r, the Amdahl ceiling, the required saving) and explicit contradictions; it never ranks candidates or
    judges whether the claim is worth pursuing. Creating the same Experiment twice returns it (created:
    false).

    `gpuopt experiment init ROOT` writes a request skeleton filled from the root's Target (root, Target
    reference, newest passed baseline, claim layer, a contract its driver supports) with `<FILL: ...>`
    strings where only you can answer (envelope gpuopt.experiment-init/v1); a request still holding one is
    refused (placeholder_unfilled).

    \b
    Examples:
      gpuopt experiment init root --out experiment.json   # skeleton; edit the <FILL: ...> values
      gpuopt experiment --request experiment.json --dry-run   # check it, write nothing
      gpuopt experiment --request experiment.json
      gpuopt schema gpuopt.request.experiment/v1
    """
    if action == "init":
        return _init(root, out)
    if root is not None or out is not None:
        raise InputError("argument_invalid", "ROOT and --out go with `gpuopt experiment init`", path="root")
    if request_file is None:
        raise InputError(
            "request_required",
            "--request FILE is required (or `gpuopt experiment init ROOT`)",
            path="--request",
        )
    done: ExperimentOutcome = registry.get("experiment").entry()(
        request_file.read(), cwd=Path.cwd(), dry_run=dry_run
    )
    return Outcome(data=done, render=lambda: _render_experiment(done))


def _init(root: str | None, out: Path | None) -> Outcome:
    from gpuopt.evaluation import skeleton

    if root is None:
        raise InputError("root_required", "gpuopt experiment init ROOT: name the artifact root", path="root")
    made = skeleton.experiment(root, cwd=Path.cwd())
    if out is not None:
        try:
            with open(out, "x", encoding="utf-8") as f:
                f.write(json.dumps(made.request, indent=2) + "\n")
        except FileExistsError:
            raise InputError(
                "destination_exists", f"{out} already exists; nothing was written", path=str(out)
            ) from None
        except OSError as exc:
            raise InputError("destination_unwritable", f"{out}: {exc.strerror}", path=str(out)) from None
        made = made.model_copy(update={"out": str(out)})
    return Outcome(data=made, render=lambda: _render_skeleton(made), schema="gpuopt.experiment-init/v1")
