"""The ranks of one job side by side (``gpuopt torch ranks``, ``gpuopt nsys ranks``).

Three tables, computed natively (``rust/src/ranks.rs`` has the definitions):

* ``ranks``: per rank, its step count and mean/max step time, its collective kernels, their time, and
  ``collective_wait_ns`` (for each matched collective, the last arrival minus its own arrival);
* ``collectives``: per matched collective (the k-th collective kernel of every rank), the rank that
  arrived last (``latest_rank``), the ``skew_ns`` between first and last arrival and the waits it caused;
* ``stragglers``: the ranks that arrived last at least once, how often and how much waiting it caused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


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
