"""``gpuopt skill ...`` and ``gpuopt mcp``: gpuopt for agents (the shipped skill, an MCP server)."""

from __future__ import annotations

from pathlib import Path

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._registry import Group
from gpuopt.errors import AbsentError


@click.group(cls=Group)
def skill() -> None:
    """The agent skill shipped with this package: SKILL.md and the command reference it links.

    \b
    Examples:
      gpuopt skill show
      gpuopt skill install .claude/skills/gpuopt
    """


@skill.command("show")
@command("gpuopt.skill.show/v1")
def skill_show() -> Outcome:
    """Print SKILL.md (what an agent should read first).

    \b
    Example:
      gpuopt skill show
    """
    from gpuopt import skill as lib
    from gpuopt.models.agent import SkillShown

    shown = SkillShown(text=lib.text())
    return Outcome(data=shown, render=lambda: shown.text.rstrip("\n"))


@skill.command("install")
@click.argument(
    "directory",
    type=click.Path(file_okay=False),
    help="The skill folder to write SKILL.md and references/cli.md into (e.g. .claude/skills/gpuopt).",
)
@click.option("--force", is_flag=True, help="Overwrite files with other content (never a symbolic link).")
@command("gpuopt.skill.install/v1")
def skill_install(directory: str, force: bool) -> Outcome:
    """Write SKILL.md and references/cli.md into DIRECTORY (e.g. .claude/skills/gpuopt).

    A file that already holds the same content is left alone; one with other content is refused
    (skill_file_exists) unless --force; nothing is written through a symbolic link below DIRECTORY
    (skill_path_is_link).

    \b
    Examples:
      gpuopt skill install .claude/skills/gpuopt
      gpuopt skill install .claude/skills/gpuopt --force     # replace an older skill
    """
    from gpuopt import skill as lib
    from gpuopt.models.agent import SkillInstalled

    if not directory.strip():
        # Path("") is the current folder: an empty argument wrote the skill wherever the shell stood.
        raise click.BadParameter("an empty path names no folder", param_hint="DIRECTORY")
    done = lib.install(Path(directory), force=force)
    data = SkillInstalled(
        directory=directory,
        files=[str(p) for p in done.written],
        unchanged=[str(p) for p in done.unchanged],
    )
    lines = [f"wrote {p}" for p in data.files] + [f"unchanged {p}" for p in data.unchanged]
    return Outcome(data=data, render=lambda: "\n".join(lines))


@click.command("mcp")
def mcp() -> None:
    """Serve gpuopt's commands as MCP tools over stdio (needs the `mcp` extra: pip install 'gpuopt[mcp]').

    One tool per command, named after it (`nsys_kernels` is `gpuopt nsys kernels`), its input schema
    generated from the command's options; each call returns the command's JSON envelope, and long calls
    report progress. Register it with an MCP client as the command `gpuopt mcp`.

    \b
    Examples:
      gpuopt mcp
      claude mcp add gpuopt -- gpuopt mcp
    """
    import asyncio
    import sys

    try:
        from gpuopt.mcp_server import serve_stdio
    except ImportError as exc:
        error = AbsentError(
            "tool_absent",
            f"the MCP server needs the Python package 'mcp' ({exc.name} is not installed)",
            expected="pip install 'gpuopt[mcp]'",
        )
        click.echo(f"error[{error.code}]: {error.message}\n  expected: {error.expected}", err=True)
        sys.exit(error.exit_code)
    try:
        asyncio.run(serve_stdio())
    except Exception as exc:  # stderr is the client's log: one line, never a traceback
        click.echo(f"error[internal_error]: gpuopt mcp stopped: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)
