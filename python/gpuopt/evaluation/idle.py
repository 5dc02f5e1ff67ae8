"""The idle check of spec §7.4: is anything else running on these GPUs?

``busy`` if a foreign compute process is visible or utilization exceeds ``max_util_pct`` in more than 10 % of
the ticks; ``idle`` if the process list was readable (every pid resolved) in every tick without a foreign
process and utilization stayed at or below the threshold in at least 90 % of them; ``unknown`` otherwise (an
empty process list or low memory alone proves nothing). The classification is a pure function of the ticks.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from gpuopt.evaluation.sampler import Sampler
from gpuopt.models.evaluation.resources import IdleGpu, IdleReport, IdleStatus, ResourceTick

BUSY_FRACTION = 0.10
IDLE_FRACTION = 0.90


def classify_gpu(ticks: Sequence[ResourceTick], uuid: str, max_util_pct: float) -> IdleGpu:
    busy_util = low_util = 0
    readable = bool(ticks)
    foreign: set[int] = set()
    for t in ticks:
        g = t.gpus.get(uuid)
        if g is None:
            readable = False
            continue
        if g.util_pct is not None:
            if g.util_pct > max_util_pct:
                busy_util += 1
            else:
                low_util += 1
        if g.processes is None or any(p.own is None for p in g.processes):
            readable = False
        else:
            foreign.update(p.pid for p in g.processes if p.own is False)
    n = len(ticks)
    status: IdleStatus
    if foreign or (n and busy_util > BUSY_FRACTION * n):
        status = "busy"
    elif readable and n and low_util >= IDLE_FRACTION * n:
        status = "idle"
    else:
        status = "unknown"
    return IdleGpu(
        uuid=uuid,
        ticks=n,
        busy_util_ticks=busy_util,
        low_util_ticks=low_util,
        process_list_readable=readable,
        foreign_processes=sorted(foreign),
        status=status,
    )


def combine(per_gpu: Sequence[IdleGpu]) -> IdleStatus:
    statuses = {g.status for g in per_gpu}
    if "busy" in statuses:
        return "busy"
    if statuses == {"idle"}:
        return "idle"
    return "unknown"


def detail(per_gpu: Sequence[IdleGpu], max_util_pct: float) -> str:
    parts = []
    for g in per_gpu:
        why = []
        if g.foreign_processes:
            why.append(f"foreign compute processes {g.foreign_processes[:10]}")
        why.append(f"utilization > {max_util_pct:g} % in {g.busy_util_ticks} of {g.ticks} ticks")
        if not g.process_list_readable:
            why.append("process list not readable (or pids not visible here)")
        parts.append(f"{g.uuid}: {g.status} ({'; '.join(why)})")
    return "; ".join(parts)[:4000]


def report(
    ticks: Sequence[ResourceTick],
    gpus: list[str],
    *,
    source: str,
    version: str,
    window_s: float,
    max_util_pct: float,
    period_ms: int,
) -> IdleReport:
    per_gpu = [classify_gpu(ticks, uuid, max_util_pct) for uuid in gpus]
    return IdleReport(
        status=combine(per_gpu),
        detail=detail(per_gpu, max_util_pct),
        source=source,
        version=version,
        window_s=window_s,
        max_util_pct=max_util_pct,
        period_ms=period_ms,
        gpus=per_gpu,
        ticks=list(ticks),
    )


def run(
    gpus: list[str], *, window_s: float, max_util_pct: float, sampler: str = "nvml", period_ms: int = 250
) -> IdleReport:
    """Samples the GPUs for ``window_s`` (own tree: this process) and classifies; ``sampler_unavailable`` or
    ``gpu_not_found`` (exit 3) without NVML or the GPU."""

    with tempfile.TemporaryDirectory(prefix="gpuopt-idle-") as tmp:
        s = Sampler(Path(tmp) / "resources.jsonl", kind=sampler, gpus=gpus, period_ms=period_ms)
        s.start()
        time.sleep(window_s)
        s.stop()
        ticks = s.snapshot()
    return report(
        ticks,
        gpus,
        source=s.source,
        version=s.version,
        window_s=window_s,
        max_util_pct=max_util_pct,
        period_ms=period_ms,
    )


def check(gpus: list[str], *, window_s: float | None = None, root: str | Path | None = None) -> IdleReport:
    """``gpuopt idle-check``: :func:`run` with the Target's thresholds when ``root`` is given (its
    contamination sampler, period, utilization limit and window), else NVML every 250 ms for 5 s with a
    5 % limit; ``window_s`` overrides the window."""
    from gpuopt.evaluation import target as targets
    from gpuopt.evaluation.store import Store

    sampler, period_ms, max_util, window = "nvml", 250, 5.0, 5.0
    if root is not None:
        target = targets.optimizable(targets.load(Store.open(root))[0])
        c = target.contamination
        if c.sampler != "disabled":
            sampler, period_ms = c.sampler, c.period_ms
        max_util, window = c.idle.max_util_pct, c.idle.window_s
    return run(
        gpus,
        window_s=window if window_s is None else window_s,
        max_util_pct=max_util,
        sampler=sampler,
        period_ms=period_ms,
    )
