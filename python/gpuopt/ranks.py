"""The ranks of one job side by side (``gpuopt torch ranks``, ``gpuopt nsys ranks``).

Three tables, computed natively (``rust/src/ranks.rs`` has the definitions):

* ``ranks``: per rank, its step count and mean/max step time, its collective kernels, their time, and
  ``collective_wait_ns`` (for each matched collective, the last arrival minus its own arrival);
* ``collectives``: per matched collective (the k-th collective kernel of every rank), the rank that
  arrived last (``latest_rank``), the ``skew_ns`` between first and last arrival and the waits it caused;
* ``stragglers``: the ranks that arrived last at least once, how often and how much waiting it caused.

:func:`document` makes them the ``gpuopt torch ranks`` / ``gpuopt nsys ranks`` document; the area modules
answer it (``gpuopt.torch_trace.ranks_document``, ``gpuopt.nsys.ranks_document``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.envelope import FileIdentity
    from gpuopt.models.ranks import RanksData


@dataclass(frozen=True)
class Ranks:
    ranks: pl.DataFrame
    collectives: pl.DataFrame
    stragglers: pl.DataFrame
    #: ``distributedInfo`` (the traces say), ``file_order`` (ranks numbered in the order given) or
    #: ``single_trace``.
    rank_source: str
    #: ``trace`` (Kineto's absolute timestamps), ``utc`` (nsys session start) or ``file`` (each file's clock).
    clock: str


def document(
    r: Ranks, inputs: list[FileIdentity], *, limit: int = 50, sort: str | None = None
) -> Answer[RanksData]:
    """The three tables as one document, each in ``sort`` order (``COLUMN[:asc]``, a column every table
    has) with its first ``limit`` rows (0: all); the per-rank table is the answer's main table."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.ranks import RanksData

    tables = {
        "ranks": sorted_by(r.ranks, sort),
        "rank_collectives": sorted_by(r.collectives, sort),
        "rank_stragglers": sorted_by(r.stragglers, sort),
    }
    data = RanksData(
        rank_source=r.rank_source,
        clock=r.clock,
        ranks=table_data("ranks", tables["ranks"], limit),
        collectives=table_data("rank_collectives", tables["rank_collectives"], limit),
        stragglers=table_data("rank_stragglers", tables["rank_stragglers"], limit),
    )
    return Answer(data, inputs, tables=tables)
