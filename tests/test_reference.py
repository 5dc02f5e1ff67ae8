"""Generated references stay in step with the code they describe."""

from __future__ import annotations

from pathlib import Path

from gpuopt.cli import _reference

ROOT = Path(__file__).resolve().parent.parent


def test_cli_reference_matches_the_commands() -> None:
    expected = _reference.render()
    actual = (ROOT / "references" / "cli.md").read_text(encoding="utf-8")
    assert actual == expected, (
        "references/cli.md is stale: python -m gpuopt.cli._reference > references/cli.md"
    )


def test_skill_names_only_real_commands() -> None:
    """Every `gpuopt <group> <verb>` SKILL.md mentions exists in the CLI."""
    import re

    import click

    from gpuopt.cli import cli

    text = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    ctx = click.Context(cli)
    for group, verb in set(re.findall(r"`gpuopt ([a-z-]+)(?: ([a-z-]+))?", text)):
        command = cli.get_command(ctx, group)
        assert command is not None, group
        if verb and isinstance(command, click.Group):
            assert command.get_command(ctx, verb) is not None, f"{group} {verb}"
