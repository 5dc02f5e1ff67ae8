"""The skill ships with the package, installs into an agent's folder, and names only real commands."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from conftest import ROOT, gpuopt
from gpuopt import skill
from gpuopt.agent_tools import walk
from gpuopt.cli import cli

SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def test_shipped_skill_is_the_repository_skill() -> None:
    assert skill.text() == (ROOT / "SKILL.md").read_text(encoding="utf-8"), (
        "python/gpuopt/_skill_files/SKILL.md differs: cp SKILL.md python/gpuopt/_skill_files/SKILL.md"
    )


def test_show_prints_it() -> None:
    run = gpuopt("skill", "show")
    assert run.code == 0
    assert run.stdout.startswith("---\nname: gpuopt\n")
    assert gpuopt("skill", "show", "--json").json()["data"]["text"] == skill.text()


def test_install_writes_skill_and_reference(tmp_path: Path) -> None:
    target = tmp_path / ".claude" / "skills" / "gpuopt"
    run = gpuopt("skill", "install", str(target), "--json")
    assert run.code == 0, run.stderr
    assert run.json()["data"]["files"] == [str(target / "SKILL.md"), str(target / "references" / "cli.md")]
    assert (target / "SKILL.md").read_text(encoding="utf-8") == skill.text()
    installed = (target / "references" / "cli.md").read_text(encoding="utf-8")
    assert installed == (ROOT / "references" / "cli.md").read_text(encoding="utf-8")


def test_install_into_unwritable_place_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    run = gpuopt("skill", "install", str(blocker / "sub"), "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "skill_dir_unwritable"


def _commands() -> dict[tuple[str, ...], click.Command]:
    return {(): cli, **dict(walk(cli))}


def _options(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}


def _invocations(text: str) -> list[str]:
    return [s for s in SPAN.findall(text) if s.startswith("gpuopt ")]


def _check(span: str, commands: dict[tuple[str, ...], click.Command]) -> list[str]:
    words = span.split()[1:]
    path: tuple[str, ...] = ()
    while words and (*path, words[0]) in commands:
        path = (*path, words.pop(0))
    cmd = commands[path]
    problems = []
    if isinstance(cmd, click.Group) and words and not words[0].startswith("-") and words[0].islower():
        problems.append(f"{span!r}: no command {' '.join(['gpuopt', *path, words[0]])}")
    for word in words:
        if word == "--":
            break
        flag = word.split("=")[0]
        if flag.startswith("-") and flag not in _options(cmd) | {"--json", "-h", "--help"}:
            problems.append(f"{span!r}: gpuopt {' '.join(path)} has no option {flag}")
    return problems


def test_every_command_and_flag_in_the_skill_exists() -> None:
    text = FENCE.sub("", skill.text())
    commands = _commands()
    spans = _invocations(text)
    assert len(spans) > 30
    problems = [p for span in spans for p in _check(span, commands)]
    all_flags = {o for c in commands.values() for o in _options(c)} | {"--json"}
    bare = {s.split()[0] for s in SPAN.findall(text) if s.startswith("--")}
    problems += [f"{flag!r} is no option of any command" for flag in sorted(bare - all_flags)]
    assert problems == []


@pytest.mark.parametrize(
    "span", ["gpuopt nsys kernal FILE", "gpuopt nsys kernels FILE --sortt name", "gpuopt nosuch"]
)
def test_the_check_catches_a_wrong_name(span: str) -> None:
    assert _check(span, _commands()) != []


def test_install_twice_is_a_no_op_and_other_content_needs_force(tmp_path: Path) -> None:
    target = tmp_path / "gpuopt"
    assert gpuopt("skill", "install", str(target)).code == 0
    again = gpuopt("skill", "install", str(target), "--json").json()["data"]
    assert again["files"] == []
    assert again["unchanged"] == [str(target / "SKILL.md"), str(target / "references" / "cli.md")]
    (target / "SKILL.md").write_text("my own notes\n")
    run = gpuopt("skill", "install", str(target), "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "skill_file_exists"
    assert (target / "SKILL.md").read_text() == "my own notes\n"
    forced = gpuopt("skill", "install", str(target), "--force", "--json")
    assert forced.code == 0, forced.stderr
    assert forced.json()["data"]["files"] == [str(target / "SKILL.md")]
    assert (target / "SKILL.md").read_text(encoding="utf-8") == skill.text()


@pytest.mark.parametrize("link", ["SKILL.md", "references"])
@pytest.mark.parametrize("force", [False, True])
def test_install_never_writes_through_a_link(tmp_path: Path, link: str, force: bool) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "cli.md" if link == "references" else outside / "bashrc"
    victim.write_text("precious\n")
    target = tmp_path / "gpuopt"
    target.mkdir()
    (target / link).symlink_to(outside if link == "references" else victim)
    run = gpuopt("skill", "install", str(target), "--json", *(["--force"] if force else []))
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "skill_path_is_link"
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in outside.iterdir()) == [victim.name]


def test_the_first_page_maps_questions_to_one_command_starting_with_overview() -> None:
    """Issue 30: the skill's first section after the envelope maps each common question to the one command
    that answers it, the overview of a capture first; every command it names exists (above)."""
    text = skill.text()
    sections = [m.start() for m in re.finditer(r"^## ", text, re.M)]
    first = text[sections[0] : sections[1]]
    assert first.startswith("## One question, one command")
    rows = [line for line in first.splitlines() if line.startswith("| ") and "`gpuopt " in line]
    assert len(rows) >= 8
    assert SPAN.findall(rows[0])[0] == "gpuopt profile overview FILE..."
    assert any("rejected" in row and "`gpuopt show ROOT INVOCATION_ID`" in row for row in rows)
