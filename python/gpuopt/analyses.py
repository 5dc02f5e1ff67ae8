"""Analyses over the launch and execution record of an nsys export or a Kineto trace: repeated iterations
(from step markers and from the launch sequence alone), the critical path of each step, launch queues,
and kernel sequences.

    from gpuopt import analyses, nsys, torch_trace
    report = nsys.open("profile.sqlite")
    it = analyses.iterations(report)          # .table: one row per iteration; .facts: how they were found
    cp = analyses.critical_path(report)        # .steps: per step by category; .edges: every stretch
    analyses.queue(report).table              # outstanding launches per stream, launch-bound vs host sync
    analyses.sequences(torch_trace.open("trace.json"), n=4)

The engine is Rust (``rust/src/analyses``); ``references/analyses.md`` has the definitions, the method of
iteration detection and its limits, and where HTA differs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gpuopt import _native

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.analyses import DetectedSteps, IterationFacts
    from gpuopt.nsys import Report
    from gpuopt.torch_trace import TorchTrace

    Source = Report | TorchTrace

__all__ = [
    "CriticalPath",
    "Iterations",
    "Queue",
    "critical_path",
    "detected_steps",
    "iterations",
    "queue",
    "sequences",
]


@dataclass(frozen=True)
class Iterations:
    """One row per iteration or odd stretch, of every source (marker and detected), and how they were
    found (per trace: the marker chosen, what detection found, their agreement)."""

    table: pl.DataFrame
    facts: list[IterationFacts]


@dataclass(frozen=True)
class CriticalPath:
    """Per step, the critical path's time by category (``steps``), and every stretch of every path in
    time order (``edges``)."""

    steps: pl.DataFrame
    edges: pl.DataFrame
    facts: list[IterationFacts]


@dataclass(frozen=True)
class Queue:
    """Queue facts per stream and device; ``series``: the depth over time (when asked for)."""

    table: pl.DataFrame
    series: pl.DataFrame | None


def _native_of(source: Source) -> _native.NsysReport | _native.TorchTrace:
    return source._native


def _facts(raw: bytes) -> list[IterationFacts]:
    from gpuopt.models.analyses import IterationFacts

    return [IterationFacts.model_validate(item) for item in json.loads(raw)]


def _frame(table: _native.ArrowTable) -> pl.DataFrame:
    from gpuopt._tables import to_polars

    return to_polars(table)


def iterations(source: Source, *, marker: str | None = None) -> Iterations:
    """Iterations from the step marker (``marker``: a range name or group such as ``step_*``; default:
    ProfilerStep#N, else the repeated top-level range covering the most time) and from the repetition of
    the launch sequence, with the odd ones out and the rule that made each odd."""
    table, raw = _native.analysis_iterations(_native_of(source), marker)
    return Iterations(_frame(table), _facts(raw))


def critical_path(
    source: Source, *, marker: str | None = None, using: Literal["marker", "detected"] | None = None
) -> CriticalPath:
    """The critical path of every row of the iterations (``using``: which source's rows; default the one
    the iterations use), attributed to cpu, launch, gpu_compute, gpu_memory, sync and idle."""
    steps, edges, raw = _native.analysis_critical_path(_native_of(source), marker, using)
    return CriticalPath(_frame(steps), _frame(edges), _facts(raw))


def queue(source: Source, *, series: bool = False) -> Queue:
    """Outstanding launches per stream and device: busy, launch-bound idle (nothing outstanding), queued
    idle (launched, not running), host time in synchronizing calls, depth; ``series``: the depth over
    time as stretches of constant depth."""
    table, levels = _native.analysis_queue(_native_of(source), series)
    return Queue(_frame(table), None if levels is None else _frame(levels))


def sequences(source: Source, *, n: int = 3) -> pl.DataFrame:
    """The repeating unit of each device's kernel sequence, then every kernel ``n``-gram (most instances
    first) with its GPU time and span per instance."""
    return _frame(_native.analysis_sequences(_native_of(source), n))


def detected_steps(path: str | Path) -> list[DetectedSteps]:
    """Iterations detected in a capture file (nsys export or Kineto trace) without markers: per trace,
    the device with the most iterations and their kernel time (``gpuopt profile diff``'s per-step
    normalisation when a capture has no step marker)."""
    from gpuopt._profile_sources import detect_kind
    from gpuopt.models.analyses import DetectedSteps

    path = Path(path)
    native: _native.NsysReport | _native.TorchTrace
    if detect_kind(path) == "nsys":
        from gpuopt import nsys

        native = nsys.open(path)._native
    else:
        from gpuopt import torch_trace

        native = torch_trace.open(path)._native
    return [DetectedSteps.model_validate(item) for item in json.loads(_native.analysis_detected_steps(native))]
