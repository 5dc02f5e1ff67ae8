"""Analyses over the launch and execution record of an nsys export or a Kineto trace: repeated iterations
(from step markers and from the launch sequence alone), the critical path of each step, launch queues,
and kernel sequences.

    from gpuopt import analyses, nsys, torch_trace
    report = nsys.open("profile.sqlite")
    it = analyses.iterations(report)          # .table: one row per iteration; .facts: how they were found
    cp = analyses.critical_path(report)        # .steps: per step by category; .edges: every stretch
    analyses.queue(report).table              # outstanding launches per stream, launch-bound vs host sync
    analyses.sequences(torch_trace.open("trace.json"), n=4)

The ``*_document`` functions (``iterations_document("profile.sqlite", area="nsys")``, ...) return the
:class:`gpuopt.answer.Answer` that ``gpuopt nsys|torch iterations|critical-path|queue|sequences --json``
prints: the document, its whole tables and the identity of the files read.

The engine is Rust (``rust/src/analyses``); ``references/analyses.md`` has the definitions, the method of
iteration detection and its limits, and where HTA differs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gpuopt import _native
from gpuopt.errors import InputError

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.analyses import (
        CriticalPathData,
        DetectedSteps,
        IterationFacts,
        IterationsData,
        QueueData,
        SequencesData,
    )
    from gpuopt.models.envelope import FileIdentity
    from gpuopt.nsys import Report
    from gpuopt.torch_trace import TorchTrace

    Source = Report | TorchTrace

__all__ = [
    "CriticalPath",
    "Iterations",
    "Queue",
    "critical_path",
    "critical_path_document",
    "detected_steps",
    "iterations",
    "iterations_document",
    "queue",
    "queue_document",
    "sequences",
    "sequences_document",
]

#: The areas whose files the analyses read: an nsys export, or a Kineto trace (a file or a folder of ranks).
Area = Literal["nsys", "torch"]


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
    ProfilerStep#N, else the repeated top-level range covering the most time among those that are half
    their threads' top-level ranges or time) and from the repetition of
    the launch sequence, with the odd ones out and the rule that made each odd."""
    table, raw = _native.analysis_iterations(_native_of(source), marker)
    return Iterations(_frame(table), _facts(raw))


def critical_path(
    source: Source, *, marker: str | None = None, using: Literal["marker", "detected"] | None = None
) -> CriticalPath:
    """The critical path of every row of the iterations (``using``: which source's rows; default the one
    the iterations use), attributed to cpu, launch, gpu_compute, gpu_memory, sync and idle."""
    steps, edges, _, raw = _native.analysis_critical_path(_native_of(source), marker, using)
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


def detected_steps(source: Source) -> list[DetectedSteps]:
    """Iterations detected in an opened capture (nsys export or Kineto trace) from its launch sequence
    alone, markers ignored: per trace, the device with the most iterations and their kernel time
    (``gpuopt profile diff``'s per-step normalisation when a capture has no step marker)."""
    from gpuopt.models.analyses import DetectedSteps

    raw = _native.analysis_detected_steps(_native_of(source))
    return [DetectedSteps.model_validate(item) for item in json.loads(raw)]


# --- documents: what `gpuopt nsys|torch iterations|critical-path|queue|sequences` prints under `data` ---


@dataclass(frozen=True)
class _Opened:
    source: Any  # gpuopt.nsys.Report | gpuopt.torch_trace.TorchTrace
    inputs: list[FileIdentity]

    def answer(self, data: Any, tables: dict[str, pl.DataFrame]) -> Answer[Any]:
        from gpuopt.answer import Answer

        return Answer(data, self.inputs, self.source.unmodeled(), tables=tables, source=self.source)


def _opened(area: Area, path: str | Path) -> _Opened:
    """``path`` opened as ``area``'s input (an nsys export; a Kineto trace or folder of ranks), with the
    identity of the files read."""
    from gpuopt.provenance import file_identity, identify_in_background

    path = Path(path)
    identify_in_background(path)  # hashing (on a cache miss) overlaps the engine's work
    if area == "nsys":
        from gpuopt import nsys

        return _Opened(nsys.open(path), [file_identity(path)])
    if area == "torch":
        from gpuopt import torch_trace

        trace = torch_trace.open(path)
        return _Opened(trace, trace.inputs())
    raise ValueError(f"area must be 'nsys' or 'torch', not {area!r}")


def _sorted(frame: pl.DataFrame, sort: str | None) -> pl.DataFrame:
    from gpuopt._tables import sorted_by

    return sorted_by(frame, sort)


def iterations_document(
    path: str | Path,
    *,
    area: Area,
    marker: str | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[IterationsData]:
    """``gpuopt nsys|torch iterations``: :func:`iterations` of ``path`` as the document (the first
    ``limit`` rows, 0: all, in ``sort`` order) and how each trace's iterations were found."""
    from gpuopt._tables import table_data
    from gpuopt.models.analyses import IterationsData

    opened = _opened(area, path)
    result = iterations(opened.source, marker=marker)
    frame = _sorted(result.table, sort)
    data = IterationsData(path=str(path), traces=result.facts, table=table_data("iterations", frame, limit))
    return opened.answer(data, {"iterations": frame})


def critical_path_document(
    path: str | Path,
    *,
    area: Area,
    marker: str | None = None,
    using: Literal["marker", "detected"] | None = None,
    step: int | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[CriticalPathData]:
    """``gpuopt nsys|torch critical-path``: :func:`critical_path` of ``path``: per step (``sort``,
    ``limit`` as for every table) and the first ``limit`` stretches of the paths, or (``step``) every
    stretch of the steps whose ``row`` it is. The answer's ``critical_path_edges`` holds the stretches
    the document carries: a path has a few per operation on it, millions in a large capture
    (:func:`critical_path` has them all)."""
    from gpuopt._tables import table_data
    from gpuopt.models.analyses import CriticalPathData

    opened = _opened(area, path)
    raw_steps, raw_edges, total, raw = _native.analysis_critical_path(
        _native_of(opened.source), marker, using, step, None if step is not None or limit == 0 else limit
    )
    steps = _sorted(_frame(raw_steps), sort)
    if step is not None and step not in set(steps["row"].to_list()):
        rows = sorted({r for r in steps["row"].to_list() if r is not None})
        raise InputError(
            "analysis_step_unknown",
            f"--step {step}: no step of the capture has that row",
            path="--step",
            expected=f"a row of the critical_path table ({rows[0]}..{rows[-1]})"
            if rows
            else "a capture with steps",
            observed=str(step),
        )
    edges = _frame(raw_edges)
    if step is None and limit:
        edges = edges.head(limit)  # the first `limit` of the first traces (each trace gave `limit`)
    data = CriticalPathData(
        path=str(path),
        source=using,
        step=step,
        traces=_facts(raw),
        table=table_data("critical_path", steps, limit),
        edges=table_data(
            "critical_path_edges", edges, 0, total_rows=edges.height if step is not None else total
        ),
    )
    return opened.answer(data, {"critical_path": steps, "critical_path_edges": edges})


def queue_document(
    path: str | Path,
    *,
    area: Area,
    series: bool = False,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[QueueData]:
    """``gpuopt nsys|torch queue``: :func:`queue` of ``path``, per stream and device, or (``series``)
    the depth over time."""
    from gpuopt._tables import table_data
    from gpuopt.models.analyses import QueueData

    opened = _opened(area, path)
    result = queue(opened.source, series=series)
    name = "queue_series" if series else "queue"
    frame = _sorted(result.series if series and result.series is not None else result.table, sort)
    data = QueueData(path=str(path), series=series, table=table_data(name, frame, limit))
    return opened.answer(data, {name: frame})


def sequences_document(
    path: str | Path,
    *,
    area: Area,
    n: int = 3,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[SequencesData]:
    """``gpuopt nsys|torch sequences``: :func:`sequences` of ``path`` (kernel ``n``-grams)."""
    from gpuopt._tables import table_data
    from gpuopt.models.analyses import SequencesData

    opened = _opened(area, path)
    frame = _sorted(sequences(opened.source, n=n), sort)
    data = SequencesData(path=str(path), n=n, table=table_data("sequences", frame, limit))
    return opened.answer(data, {"sequences": frame})
