"""The one rendering of a ranks comparison (``gpuopt torch ranks``, ``gpuopt nsys ranks``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuopt.cli._tables import render_frame

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.ranks import RanksData


def render_ranks(answer: Answer[RanksData], limit: int) -> str:
    """The three tables of :func:`gpuopt.ranks.document` for people."""
    d, t = answer.data, answer.tables
    stragglers = t["rank_stragglers"]
    return "\n\n".join(
        [
            f"Ranks (rank from {d.rank_source}; clock {d.clock})\n" + render_frame(t["ranks"], limit),
            "Collectives (k-th collective kernel of every rank)\n"
            + render_frame(t["rank_collectives"], limit),
            "Stragglers (ranks that arrived last)\n"
            + (render_frame(stragglers, limit) if stragglers.height else "(none)"),
        ]
    )
