"""Documents of the agent surface: the shipped skill."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model


class SkillShown(Model):
    """The SKILL.md shipped in the installed package."""

    text: str = Field(description="SKILL.md, verbatim")


class SkillInstalled(Model):
    """Where ``gpuopt skill install`` wrote the skill."""

    directory: str = Field(
        description="The skill folder written to, as given (SKILL.md and its references inside)"
    )
    files: list[str] = Field(description="Every file written, SKILL.md first")
    unchanged: list[str] = Field(description="Files that already held the same content, left alone")
