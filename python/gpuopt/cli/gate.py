"""``gpuopt gate``: a regression gate for CI (saved baselines, checks with documented exit codes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import FiniteFloatRange, count, output_path
from gpuopt.cli._render import section, table

if TYPE_CHECKING:
    from gpuopt.models.gate import GateCheckData, GateListData, GateShowData, GateTransferData

ROOT = click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="The artifact root (the Target's store).",
)
EXIT_TEXT = """\b
Exit codes (a check that ran):
  0   pass: a regression as large as the Target's minimum effect is excluded
  0   improvement: an improvement at least that large is shown
  10  regression: a regression at least that large is shown (or a constraint,
      guardrail or per-key gate failed)
  11  identity_mismatch: the runtime (GPU model, driver, toolkit, libraries)
      differs from the baseline's; nothing is judged
  12  inconclusive (0 with --inconclusive pass)
  13  invalid: the measurement could not be judged (contamination beyond the
      retry budget, a failed or timed-out call)
  14  correctness_failed: the current code failed the Target's correctness rules
A check that could not run exits 2 (bad input), 3 (tool or GPU absent) or 1."""


@click.group("gate")
def gate() -> None:
    """A regression gate for CI: saved baselines, checks with exit codes, reports where CI shows them."""


@gate.command("save")
@click.argument("name", help="The name to save the baseline under (gates/names/<name>.json).")
@ROOT
@click.option(
    "--from",
    "sources",
    multiple=True,
    help="An evaluation result (INVOCATION id) whose calls of one variant to save; repeat for more "
    "sessions (blocks of an unpaired check).",
)
@click.option(
    "--role",
    type=click.Choice(["original", "reference", "candidate"]),
    help="Whose calls (default: original of a baseline, reference of a noise, candidate otherwise).",
)
@click.option(
    "--capture",
    "captures",
    multiple=True,
    help="A capture file or cap:INVOCATION/VARIANT[/CASE] reference to save (k of them).",
)
@click.option("--replace", is_flag=True, help="Point an existing name at the new baseline.")
@command("gpuopt.gate.save/v1")
def save(
    name: str,
    root: Path,
    sources: tuple[str, ...],
    role: str | None,
    captures: tuple[str, ...],
    replace: bool,
) -> Outcome:
    """Save a baseline: the calls of one variant from evaluation results and/or k captures.

    The record (gates/baselines/gb-<64hex>.json, content-addressed) is bound to the root's Target and to
    the runtime facts it was measured under; NAME points at it (--replace to move an existing name).

    \b
    Examples:
      gpuopt gate save main --root root --from inv-0123...            # a gate, noise or target result
      gpuopt gate save main --root root --from inv-a... --from inv-b...  # two sessions
      gpuopt gate save decode --root root --capture b1.sqlite --capture b2.sqlite --capture b3.sqlite
    """
    from gpuopt.evaluation.gate import baselines

    data = baselines.save(
        root,
        name,
        sources_=list(sources),
        role=role,  # type: ignore[arg-type]
        captures=list(captures),
        replace=replace,
    )
    return Outcome(data=data, render=lambda: "gate save\n" + "\n".join(f"  {x}" for x in data.summary))


def _render_list(data: GateListData) -> str:
    rows = [
        (b.name, b.baseline.id[:19], b.kind, b.calls, b.sessions, b.captures, (b.variant_digest or "")[:12])
        for b in data.baselines
    ]
    head = ["name", "baseline", "kind", "calls", "sessions", "captures", "variant"]
    return table(head, rows) if rows else f"no gate baselines in {data.root}"


@gate.command("list")
@ROOT
@command("gpuopt.gate.list/v1")
def list_(root: Path) -> Outcome:
    """List the saved baselines: name, record, what it holds.

    \b
    Examples:
      gpuopt gate list --root root
      gpuopt gate list --root root --json
    """
    from gpuopt.evaluation.gate import baselines

    data = baselines.listing(root)
    return Outcome(data=data, render=lambda: _render_list(data))


def _render_show(data: GateShowData) -> str:
    b = data.baseline
    rows: list[tuple[str, object]] = [
        ("baseline", f"{data.name.baseline.id} (sha256 {data.name.baseline.sha256})"),
        ("target", b.target.id),
        ("previous", None if data.name.previous is None else data.name.previous.id),
        ("trees present", "yes" if data.objects_present else "no (import its bundle to rerun it paired)"),
    ]
    if b.samples is not None:
        s = b.samples
        rows += [
            ("variant", f"{s.variant.digest} ({s.role})"),
            ("calls", f"{len(s.calls)} from {', '.join(r.invocation_id for r in s.sources)}"),
            (
                "plan",
                f"{', '.join(s.plan.case_ids)}; {s.plan.pairs} per case; {s.plan.samples_per_call} "
                f"samples, {s.plan.warmup_per_call} warmup; {s.plan.lifecycle}",
            ),
        ]
    if b.captures is not None:
        rows.append(("captures", f"{len(b.captures.files)} {b.captures.kind}"))
    rows += [(f"runtime {k}", v) for k, v in sorted(b.runtime.items())]
    return section(f"gate baseline {data.name.name}", rows)


@gate.command("show")
@click.argument("name", help="The saved baseline's name.")
@ROOT
@command("gpuopt.gate.show/v1")
def show(name: str, root: Path) -> Outcome:
    """Show a saved baseline, verified against its name's sha256 and its id.

    \b
    Examples:
      gpuopt gate show main --root root
    """
    from gpuopt.evaluation.gate import baselines

    data = baselines.show(root, name)
    return Outcome(data=data, render=lambda: _render_show(data))


@gate.command("delete")
@click.argument("name", help="The name to delete.")
@ROOT
@command("gpuopt.gate.delete/v1")
def delete(name: str, root: Path) -> Outcome:
    """Delete a name, and its record when no other name points at it (frozen trees stay).

    \b
    Examples:
      gpuopt gate delete main --root root
    """
    from gpuopt.evaluation.gate import baselines

    data = baselines.delete(root, name)
    return Outcome(
        data=data,
        render=lambda: (
            f"deleted {data.name} ({data.baseline.id}; record "
            f"{'removed' if data.record_removed else 'kept: another name points at it'})"
        ),
    )


def _render_transfer(verb: str, data: GateTransferData) -> str:
    return section(
        f"gate {verb}",
        [
            ("name", data.name),
            ("file", f"{data.file} ({data.size_bytes} bytes, sha256 {data.file_sha256})"),
            ("baseline", data.baseline.id),
            ("carried", f"{data.objects} trees, {data.blobs} blobs"),
            ("record", None if data.created is None else "new" if data.created else "already here"),
        ],
    )


@gate.command("export")
@click.argument("name", help="The saved baseline's name.")
@ROOT
@click.option("--out", type=output_path(), required=True, help="The bundle file.")
@command("gpuopt.gate.export/v1")
def export(name: str, root: Path, out: Path) -> Outcome:
    """Export a baseline as one file: its record and the frozen trees it names (a POSIX tar).

    Cache it or upload it as an artifact; `gpuopt gate import` restores it into a root of the same Target.

    \b
    Examples:
      gpuopt gate export main --root root --out main.gate.tar
    """
    from gpuopt.evaluation.gate import bundle

    data = bundle.export(root, name, out)
    return Outcome(data=data, render=lambda: _render_transfer("export", data))


@gate.command("import")
@click.argument(
    "file", type=click.Path(path_type=Path, dir_okay=False), help="A bundle written by gpuopt gate export."
)
@ROOT
@click.option("--name", help="The name to save it under (default: the name it was exported under).")
@click.option("--replace", is_flag=True, help="Point an existing name at the imported baseline.")
@command("gpuopt.gate.import/v1")
def import_(file: Path, root: Path, name: str | None, replace: bool) -> Outcome:
    """Import a baseline bundle into a root of the same Target (every member verified first).

    \b
    Examples:
      gpuopt gate import main.gate.tar --root root
      gpuopt gate import main.gate.tar --root root --name main --replace
    """
    from gpuopt.evaluation.gate import bundle

    data = bundle.import_(root, file, name=name, replace=replace)
    return Outcome(data=data, render=lambda: _render_transfer("import", data))


def _render_check(data: GateCheckData) -> str:
    return "\n".join(data.summary)


@gate.command("check", epilog=EXIT_TEXT)
@click.argument(
    "name", required=False, help="The saved baseline to check against; not with --against champion."
)
@ROOT
@click.option(
    "--against",
    type=click.Choice(["baseline", "champion"]),
    default="baseline",
    show_default=True,
    help="Compare with the baseline NAME, or rerun the current Champion.",
)
@click.option(
    "--source",
    type=click.Path(path_type=Path, exists=True),
    help="The current code (a tree or file, frozen with the Target's source rules).",
)
@click.option(
    "--mode",
    type=click.Choice(["auto", "paired", "unpaired"]),
    default="auto",
    show_default=True,
    help="auto: paired when the baseline's variant is in the store, else unpaired.",
)
@click.option("--pairs", type=count(1), help="Pairs (unpaired: calls) per case; default: the baseline's.")
@click.option("--seed", type=click.IntRange(min=0, max=2**53 - 1), help="Plan seed (default: the Target's).")
@click.option(
    "--retries",
    type=click.IntRange(min=0, max=20),
    default=2,
    show_default=True,
    help="Reruns of a measurement that contamination (or a failed sampler) made invalid.",
)
@click.option(
    "--inconclusive",
    type=click.Choice(["fail", "pass"]),
    default="fail",
    show_default=True,
    help="Exit status of an inconclusive outcome: 12 (fail) or 0 (pass).",
)
@click.option(
    "--capture", "captures", multiple=True, help="A current capture (file or cap: reference); k of them."
)
@click.option(
    "--keys",
    type=click.Choice(["kernel", "op", "nvtx", "memcpy"]),
    help="Per-key gates over the captures' keys (Benjamini-Hochberg at --fdr).",
)
@click.option(
    "--fdr",
    type=FiniteFloatRange(min=0, max=1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Captures: false-discovery rate of the per-key gates; the whole-capture interval is at 1 - FDR.",
)
@click.option("--marker", help="Captures: the NVTX / record_function range that counts steps.")
@click.option("--markdown", type=output_path(), help="Write the Markdown summary here.")
@click.option("--junit", type=output_path(), help="Write JUnit XML here.")
@click.option(
    "--timeout-s",
    type=FiniteFloatRange(min=0, min_open=True),
    help="Stop waiting for a measurement after this.",
)
@command("gpuopt.gate.check/v1")
def check(
    name: str | None,
    root: Path,
    against: str,
    source: Path | None,
    mode: str,
    pairs: int | None,
    seed: int | None,
    retries: int,
    inconclusive: str,
    captures: tuple[str, ...],
    keys: str | None,
    fdr: float,
    marker: str | None,
    markdown: Path | None,
    junit: Path | None,
    timeout_s: float | None,
) -> Outcome:
    """Check the current code (or current captures) against a saved baseline or the Champion.

    Measures the current code through the Target's driver in a supervised gate invocation: paired and
    interleaved with the baseline's variant when it can be rerun (its tree is in the store), else unpaired
    against the saved calls with the dependence rules. Judged with the final audit's statistics against the
    Target's minimum effect: pass, improvement, regression or inconclusive; a runtime that differs from
    the baseline's is identity_mismatch, a measurement contamination voided (after --retries reruns) is
    invalid. With $GITHUB_STEP_SUMMARY set, the Markdown summary is appended to it.

    \b
    Examples:
      gpuopt gate check main --root root --source src --junit gate.xml --markdown gate.md
      gpuopt gate check --against champion --root root --source src
      gpuopt gate check decode --root root --keys kernel \
          --capture c1.sqlite --capture c2.sqlite --capture c3.sqlite
    """
    from gpuopt.evaluation.gate.check import CheckRequest
    from gpuopt.evaluation.gate.check import check as run

    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    data = run(
        CheckRequest(
            root=root,
            name=name,
            against=against,  # type: ignore[arg-type]
            source=source,
            mode=mode,  # type: ignore[arg-type]
            pairs=pairs,
            seed=seed,
            retries=retries,
            inconclusive=inconclusive,  # type: ignore[arg-type]
            captures=list(captures),
            keys=keys,  # type: ignore[arg-type]
            fdr=fdr,
            marker=marker,
            timeout_s=timeout_s,
            markdown=markdown,
            junit=junit,
            step_summary=Path(summary) if summary else None,
        )
    )
    return Outcome(data=data, render=lambda: _render_check(data), exit_code=data.exit_code)
