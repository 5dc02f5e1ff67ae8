"""The one rendering of a ranks comparison (``gpuopt torch ranks``, ``gpuopt nsys ranks``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt.cli._output import Outcome
from gpuopt.cli._tables import render_frame, table_data, write_table

if TYPE_CHECKING:
    from gpuopt.models.envelope import FileIdentity
    from gpuopt.ranks import Ranks


def ranks_outcome(r: Ranks, inputs: list[FileIdentity], *, limit: int, out: Path | None) -> Outcome:
    """``--out`` writes the per-rank table; the envelope carries all three."""
    from gpuopt.models.ranks import RanksData

    if out is not None:
        write_table(r.ranks, out)
    data = RanksData(
        rank_source=r.rank_source,
        clock=r.clock,
        ranks=table_data("ranks", r.ranks, limit),
        collectives=table_data("rank_collectives", r.collectives, limit),
        stragglers=table_data("rank_stragglers", r.stragglers, limit),
    )

    def render() -> str:
        return "\n\n".join(
            [
                f"Ranks (rank from {r.rank_source}; clock {r.clock})\n" + render_frame(r.ranks, limit),
                "Collectives (k-th collective kernel of every rank)\n" + render_frame(r.collectives, limit),
                "Stragglers (ranks that arrived last)\n"
                + (render_frame(r.stragglers, limit) if r.stragglers.height else "(none)"),
            ]
        )

    return Outcome(data=data, render=render, inputs=inputs)
