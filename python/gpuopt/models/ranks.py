"""The data of ``gpuopt torch ranks`` and ``gpuopt nsys ranks`` (definitions: ``gpuopt.ranks``)."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData


class RanksData(Model):
    rank_source: str = Field(
        description="distributedInfo (the traces name their rank), file_order (numbered in the order "
        "given, then by process id in an nsys export) or single_trace"
    )
    clock: str = Field(description="trace (Kineto timestamps), utc (nsys session start) or file")
    ranks: TableData = Field(description="Per rank: steps, step time, collectives, collective wait")
    collectives: TableData = Field(description="Per matched collective: latest rank, skew, waits caused")
    stragglers: TableData = Field(description="Ranks that arrived last at least once, and the wait caused")
