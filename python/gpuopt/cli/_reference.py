"""Generates references/cli.md from the click commands themselves, so the agent reference cannot drift.

Run ``python -m gpuopt.cli._reference > references/cli.md``; a test compares the file with this output.
"""

from __future__ import annotations

import click

from gpuopt.cli import cli


def _walk(command: click.Command, path: list[str], parent: click.Context | None) -> list[str]:
    name = " ".join(path)
    settings = {**command.context_settings, "max_content_width": 110, "terminal_width": 110}
    ctx = click.Context(command, info_name=path[-1], parent=parent, **settings)
    out = [f"## `{name}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    if isinstance(command, click.Group):
        for sub in sorted(command.list_commands(ctx)):
            child = command.get_command(ctx, sub)
            if child is not None and not child.hidden:
                out += _walk(child, [*path, sub], ctx)
    return out


def render() -> str:
    header = [
        "# gpuopt command reference",
        "",
        "Generated from the click commands by `python -m gpuopt.cli._reference > references/cli.md`;",
        "`tests/test_reference.py` fails when this file and the commands disagree.",
        "",
    ]
    return "\n".join(header + _walk(cli, ["gpuopt"], None)).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
