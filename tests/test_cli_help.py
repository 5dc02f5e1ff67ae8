"""Help that teaches (issue 30): every command's ``--help`` holds an example command line of that command
and names the schema of what ``--json`` prints; a close misspelling of a command or an option is a usage
error (exit 2) that names the right one."""

from __future__ import annotations

import click
import pytest

from cli_inproc import run_main
from gpuopt.cli import cli

Leaf = tuple[list[str], click.Command, click.Context]


def _leaves(group: click.Group, ctx: click.Context, path: list[str]) -> list[Leaf]:
    """Every leaf command with a context under its parents' (so its help has the root's -h, --help: click
    keeps the help option a command first made, and references/cli.md prints it)."""
    out = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        child = click.Context(command, info_name=name, parent=ctx)
        if isinstance(command, click.Group):
            out += _leaves(command, child, [*path, name])
        else:
            out.append(([*path, name], command, child))
    return out


ROOT = click.Context(cli, info_name="gpuopt", **cli.context_settings)
COMMANDS = _leaves(cli, ROOT, [])


def test_the_tree_is_walked() -> None:
    names = {" ".join(p) for p, _, _ in COMMANDS}
    assert {"profile overview", "nsys kernels", "show", "knowledge query", "example run"} <= names
    assert len(names) > 60


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=[" ".join(p) for p, _, _ in COMMANDS])
def test_every_command_has_an_example_and_names_its_output(
    path: list[str], command: click.Command, ctx: click.Context
) -> None:
    text = command.get_help(ctx)
    assert "-h, --help" in text
    lines = [line.strip() for line in text.splitlines()]
    start = next((i for i, line in enumerate(lines) if line in ("Example:", "Examples:")), None)
    assert start is not None, f"gpuopt {' '.join(path)} --help has no Examples: block"
    invocation = "gpuopt " + " ".join(path)
    examples = [line for line in lines[start + 1 :] if line.startswith("gpuopt ")]
    assert any(line == invocation or line.startswith(invocation + " ") for line in examples), examples
    if path == ["mcp"]:
        return  # an MCP server speaks JSON-RPC on stdio: it prints no envelope
    schema = getattr(command.callback, "gpuopt_schema", None)
    assert schema is not None, f"gpuopt {' '.join(path)} states no output schema"
    assert f"one {schema} envelope" in " ".join(lines), text


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["profil", "overview", "x"], "Did you mean 'profile'?"),
        (["profile", "overveiw", "x"], "Did you mean 'overview'?"),
        (["nsys", "kernals", "x"], "Did you mean 'kernels'?"),
        (["knowledge", "query", "--limt", "3"], "Did you mean '--limit'?"),
        (["nsys", "kernels", "x.sqlite", "--jsn"], "Did you mean '--json'?"),
    ],
)
def test_a_close_misspelling_names_the_right_word_and_exits_2(args: list[str], suggestion: str) -> None:
    run = run_main(*args)
    assert run.code == 2 and suggestion in run.stderr, run.stderr
    as_json = run_main(*args, "--json")
    assert as_json.code == 2 and suggestion in as_json.json()["errors"][0]["message"]


def test_a_word_close_to_nothing_lists_the_commands() -> None:
    run = run_main("profile", "zzzz")
    assert run.code == 2 and "No such command 'zzzz'. Commands: diff, overview." in run.stderr
