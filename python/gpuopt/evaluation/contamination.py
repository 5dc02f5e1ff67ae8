"""Contamination rules over recorded ticks (spec §7.2): pure functions of the ticks, the call windows and the
frozen rules, so that the same ``resources.jsonl`` always judges the same windows the same way.

A window's ticks are those inside it; a window with fewer than 2 inside also takes the nearest tick on each
side. A rule contaminates a window when at least one of its observed values matches and the matching
fraction (over the values observed, i.e. not null) is at least ``min_fraction``. A window where no tick
observed the rule's signal is *missing*: ``on_missing: invalidate`` contaminates it, ``ignore`` does not.
GPU signals are judged over the call's GPUs: a tick matches when any of them matches.

``gpu.sm_clock_drop_pct`` compares a working GPU's clock: at a tick where NVML gives ``gpu_idle`` as a clock
reason, the GPU had no work to slow down (its clock falls as a matter of power management: on an H200, from
1980 to 345 MHz while a driver imports torch), so the drop there is 0, and such ticks are left out of the
median that the drop is measured from.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuopt.models.evaluation.resources import GpuTick, ResourceTick
from gpuopt.models.evaluation.target import ContaminationRule

GAP_PERIODS = 3
"""``sampler.gap``: more than this many periods between consecutive ticks around or inside a window."""


@dataclass(frozen=True)
class Window:
    start_ns: int
    end_ns: int


@dataclass
class RuleCheck:
    """One rule over one window."""

    rule: str
    observed: int
    matched: int
    missing: bool
    fired: bool


@dataclass
class WindowJudgment:
    ticks: int
    inside: int
    checks: list[RuleCheck] = field(default_factory=list)

    @property
    def rules(self) -> list[str]:
        return [c.rule for c in self.checks if c.fired]


def window_ticks(ticks: Sequence[ResourceTick], w: Window) -> tuple[list[ResourceTick], int]:
    """The ticks judged for a window (sorted by time) and how many lie inside it."""
    times = [t.t_mono_ns for t in ticks]
    lo = bisect.bisect_left(times, w.start_ns)
    hi = bisect.bisect_right(times, w.end_ns)
    inside = list(ticks[lo:hi])
    if len(inside) >= 2:
        return inside, len(inside)
    before = [ticks[lo - 1]] if lo > 0 else []
    after = [ticks[hi]] if hi < len(ticks) else []
    return [*before, *inside, *after], len(inside)


def _gap_values(ticks: Sequence[ResourceTick], w: Window, period_ns: int) -> list[float]:
    """One value per interval between consecutive points: 1 when longer than 3 periods, else 0. The points
    run from the last tick at or before the window start (else the start) to the first tick at or after
    its end (else the end)."""
    times = [t.t_mono_ns for t in ticks]
    lo = bisect.bisect_right(times, w.start_ns)
    hi = bisect.bisect_left(times, w.end_ns)
    points = [times[lo - 1] if lo > 0 else w.start_ns, *times[lo:hi]]
    points.append(times[hi] if hi < len(times) else w.end_ns)
    limit = GAP_PERIODS * period_ns
    return [1.0 if b - a > limit else 0.0 for a, b in itertools.pairwise(points)]


def _gpu_values(tick: ResourceTick, gpus: list[str], attr: str) -> list[Any]:
    out = []
    for uuid in gpus:
        g: GpuTick | None = tick.gpus.get(uuid)
        value = None if g is None else getattr(g, attr)
        if value is not None:
            out.append(value)
    return out


_GPU_ATTR = {
    "gpu.foreign_processes": "foreign_processes",
    "gpu.util_pct": "util_pct",
    "gpu.sm_clock_mhz": "sm_clock_mhz",
    "gpu.temperature_c": "temperature_c",
    "gpu.power_w": "power_w",
    "gpu.throttle": "throttle",
    "gpu.xid": "xid",
}
_HOST_ATTR = {
    "host.foreign_cpu_pct": "foreign_cpu_pct",
    "host.cpu_pressure_pct": "cpu_pressure_pct",
    "host.mem_available_bytes": "mem_available_bytes",
}


@dataclass
class Baselines:
    """Invocation-wide references: the median SM clock per GPU over the call windows (for
    ``gpu.sm_clock_drop_pct``) and the first uncorrected-ECC count per GPU (for
    ``gpu.ecc_uncorrected_delta``)."""

    sm_median: dict[str, float]
    ecc_first: dict[str, int]


IDLE_REASON = "gpu_idle"


def _idle(tick: ResourceTick, uuid: str) -> bool:
    g = tick.gpus.get(uuid)
    return g is not None and g.throttle is not None and IDLE_REASON in g.throttle


def baselines(ticks: Sequence[ResourceTick], windows: Sequence[Window], gpus: list[str]) -> Baselines:
    in_calls: dict[int, ResourceTick] = {}
    for w in windows:
        for t in window_ticks(ticks, w)[0]:
            in_calls[t.t_mono_ns] = t
    sm: dict[str, float] = {}
    ecc: dict[str, int] = {}
    for uuid in gpus:
        clocks = [
            v for t in in_calls.values() if not _idle(t, uuid) for v in _gpu_values(t, [uuid], "sm_clock_mhz")
        ]
        if clocks:
            sm[uuid] = float(statistics.median(clocks))
        for t in ticks:
            values = _gpu_values(t, [uuid], "ecc_uncorrected")
            if values:
                ecc[uuid] = int(values[0])
                break
    return Baselines(sm_median=sm, ecc_first=ecc)


def tick_values(tick: ResourceTick, signal: str, gpus: list[str], base: Baselines) -> list[Any]:
    """The observed values of a signal at one tick (empty when missing)."""
    if signal in _HOST_ATTR:
        value = getattr(tick.host, _HOST_ATTR[signal])
        return [] if value is None else [value]
    if signal in _GPU_ATTR:
        return _gpu_values(tick, gpus, _GPU_ATTR[signal])
    if signal == "gpu.sm_clock_drop_pct":
        out = []
        for uuid in gpus:
            median = base.sm_median.get(uuid)
            for clock in _gpu_values(tick, [uuid], "sm_clock_mhz"):
                if _idle(tick, uuid):
                    out.append(0.0)
                elif median:
                    out.append(100.0 * (median - clock) / median)
        return out
    if signal == "gpu.ecc_uncorrected_delta":
        out = []
        for uuid in gpus:
            first = base.ecc_first.get(uuid)
            for count in _gpu_values(tick, [uuid], "ecc_uncorrected"):
                if first is not None:
                    out.append(float(count - first))
        return out
    raise ValueError(f"unknown signal {signal}")


def matches(rule: ContaminationRule, value: Any) -> bool:
    if rule.op == "any_of":
        wanted = rule.value if isinstance(rule.value, list) else []
        return any(reason in wanted for reason in value)
    number = float(value)
    limit = float(rule.value) if not isinstance(rule.value, list) else 0.0
    return number > limit if rule.op == "gt" else number < limit


def check(
    rule: ContaminationRule,
    ticks: Sequence[ResourceTick],
    w: Window,
    *,
    gpus: list[str],
    period_ms: int,
    base: Baselines,
) -> RuleCheck:
    if rule.signal == "sampler.gap":
        per_point = [[v] for v in _gap_values(ticks, w, period_ms * 1_000_000)]
    else:
        judged, _ = window_ticks(ticks, w)
        per_point = [tick_values(t, rule.signal, gpus, base) for t in judged]
    observed = [values for values in per_point if values]
    matched = sum(1 for values in observed if any(matches(rule, v) for v in values))
    missing = not observed
    if missing:
        fired = rule.on_missing == "invalidate"
    else:
        fired = matched >= 1 and matched / len(observed) >= rule.min_fraction
    return RuleCheck(rule=rule.id, observed=len(observed), matched=matched, missing=missing, fired=fired)


def judge(
    ticks: Sequence[ResourceTick],
    windows: dict[int, Window],
    rules: Sequence[ContaminationRule],
    *,
    gpus: list[str],
    period_ms: int,
) -> dict[int, WindowJudgment]:
    """Every window (by call index) under every rule."""
    ordered = sorted(ticks, key=lambda t: t.t_mono_ns)
    base = baselines(ordered, list(windows.values()), gpus)
    out = {}
    for key, w in windows.items():
        judged, inside = window_ticks(ordered, w)
        out[key] = WindowJudgment(
            ticks=len(judged),
            inside=inside,
            checks=[check(r, ordered, w, gpus=gpus, period_ms=period_ms, base=base) for r in rules],
        )
    return out


def process_visibility(ticks: Sequence[ResourceTick], gpus: list[str]) -> str:
    """``full`` when every tick resolved every compute process of the GPUs, ``none`` when none could,
    ``partial`` in between; ``not_applicable`` without GPUs."""
    if not gpus:
        return "not_applicable"
    states = []
    for t in ticks:
        for uuid in gpus:
            g = t.gpus.get(uuid)
            if g is None or g.processes is None:
                states.append(False)
            else:
                states.append(all(p.own is not None for p in g.processes))
    if not states or not any(states):
        return "none"
    return "full" if all(states) else "partial"
