"""The agent skill that ships inside the package: ``SKILL.md`` and the command reference it links.

``SKILL.md`` lives at the repository root (where people and agents read it) and, byte for byte, as
package data in ``gpuopt/_skill_files/`` (what a pip-installed gpuopt has); a test keeps the two equal. The
reference it links, ``references/cli.md``, is generated from the click commands on install, so an
installed skill always describes the installed CLI.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from gpuopt.errors import InputError


def text() -> str:
    """The shipped SKILL.md."""
    return resources.files("gpuopt").joinpath("_skill_files").joinpath("SKILL.md").read_text(encoding="utf-8")


def files() -> dict[str, str]:
    """Relative path -> content of every file the skill consists of."""
    from gpuopt.cli._reference import render

    return {"SKILL.md": text(), "references/cli.md": render()}


def install(directory: Path) -> list[Path]:
    """Writes the skill into ``directory`` (e.g. ``.claude/skills/gpuopt``); returns the files written."""
    written = []
    try:
        for relative, content in files().items():
            target = directory / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written.append(target)
    except OSError as exc:
        raise InputError(
            "skill_dir_unwritable",
            f"cannot write the skill into {directory}: {exc.strerror or exc}",
            path=str(directory),
        ) from exc
    return written
