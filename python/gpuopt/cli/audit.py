"""``gpuopt audit versions A B``: single-variable software-stack comparison of two identity records."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section, table

if TYPE_CHECKING:
    from gpuopt.models.knowledge import VersionAuditData


@click.group(cls=Group)
def audit() -> None:
    """Audits of identity records."""


def _render(data: VersionAuditData) -> str:
    head = section(
        "audit versions",
        [
            ("a", f"{data.a} ({data.a_kind})"),
            ("b", f"{data.b} ({data.b_kind})"),
            ("single variable", "yes" if data.single_variable else "no"),
            ("reasons", ", ".join(data.reasons) or None),
            ("frozen checked", len(data.frozen_checked)),
            ("stack checked", len(data.stack_checked)),
        ],
    )
    out = [head]
    if data.frozen_differences:
        rows = [(c.component, c.a, c.b) for c in data.frozen_differences]
        out.append("frozen fields that differ\n" + table(["field", "a", "b"], rows))
    if data.stack_changes:
        rows = [(c.component, c.a, c.b) for c in data.stack_changes]
        out.append("stack components that changed\n" + table(["component", "a", "b"], rows))
    out.append(
        "a single-variable comparison also needs:\n" + "\n".join(f"  - {r}" for r in data.requirements)
    )
    return "\n\n".join(out)


@audit.command("versions")
@click.argument(
    "a",
    type=click.Path(path_type=Path, exists=True),
    help="The first identity record: a gpuopt doctor --json output, a target.json or an artifact root.",
)
@click.argument("b", type=click.Path(path_type=Path, exists=True), help="The second identity record, as A.")
@command("gpuopt.audit.versions/v1")
def versions(a: Path, b: Path) -> Outcome:
    """Compare two identity records: frozen fields equal and exactly one stack component changed?

    A and B: `gpuopt doctor --json` outputs, target.json files or artifact roots.

    \b
    Examples:
      gpuopt doctor --json > before.json   # ... upgrade one component ...
      gpuopt doctor --json > after.json
      gpuopt audit versions before.json after.json
      gpuopt audit versions runs/cuda12.9 runs/cuda13.0 --json
    """
    from gpuopt.knowledge.audit import versions as run
    from gpuopt.provenance import file_identity

    data = run(a, b)
    inputs = [file_identity(p) for p in (a, b) if p.is_file()]
    return Outcome(data=data, render=lambda: _render(data), inputs=inputs)
