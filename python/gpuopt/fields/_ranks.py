"""Column definitions of the ranks comparison (``gpuopt nsys ranks``, ``gpuopt torch ranks``) and of the
columns a table gains when several files are read at once (``gpuopt.many``).

Sources: ``rust/src/ranks.rs`` (one engine for both areas) and ``python/gpuopt/many.py``.
"""

from __future__ import annotations

_RANKS = {
    "rank": "The rank: distributedInfo's rank, or its position in the files given (see data.rank_source)",
    "label": "Where the rank came from (file, process, device), for people",
    "steps": "Step ranges of the rank (ProfilerStep#N in torch; instances of --step RANGE in nsys)",
    "step_mean_ns": "Mean step duration (ns, integer division); null without steps",
    "step_max_ns": "Longest step (ns); null without steps",
    "collectives": "Collective (NCCL) kernels the rank ran",
    "matched": "Collectives matched across ranks: the fewest any rank ran (the k-th of each rank is one)",
    "collective_time_ns": "Summed duration of the rank's collective kernels (ns; end - start, each counted)",
    "collective_wait_ns": "Summed wait at the matched collectives: last arrival - own arrival (ns)",
    "arrived_last": "Matched collectives at which this rank arrived last (lowest rank on a tie)",
}

_COLLECTIVES = {
    "index": "k: the k-th collective kernel of every rank, by start time",
    "name": "The first rank's kernel name for it",
    "names_agree": "Whether every rank's k-th collective kernel has that name (false: ranks may not match)",
    "latest_rank": "The rank that arrived last (its kernel started last; lowest rank on a tie)",
    "first_start_ns": "Earliest arrival (kernel start, ns on data.clock)",
    "last_start_ns": "Latest arrival (kernel start, ns on data.clock)",
    "skew_ns": "last_start_ns - first_start_ns (ns)",
    "others_wait_ns": "Sum over ranks of last arrival - own arrival (ns): the waiting the latest caused",
}

_STRAGGLERS = {
    "rank": _RANKS["rank"],
    "label": _RANKS["label"],
    "arrived_last": _RANKS["arrived_last"],
    "others_wait_ns": "Summed waiting of the other ranks at the collectives this rank arrived last to (ns)",
    "max_skew_ns": "The largest skew among those collectives (ns)",
}

TABLES: dict[str, dict[str, str]] = {
    f"{area}.{name}": columns
    for area in ("nsys", "torch")
    for name, columns in (
        ("ranks", _RANKS),
        ("rank_collectives", _COLLECTIVES),
        ("rank_stragglers", _STRAGGLERS),
    )
}

MANY: dict[str, str] = {
    "file": "The file (or folder) this row comes from, when several files or a glob were read",
    "error_code": "The typed error code when this file could not be read (its only row); null otherwise",
    "error": "That error's message; null otherwise",
}
"""Key columns every table gains when several files are read at once (``gpuopt.many.table/v1``)."""

PER_DEVICE = {"device_id": "Device (CUDA device id) this block of rows belongs to (--per-device)"}
"""The leading column of an nsys table read ``--per-device``."""
