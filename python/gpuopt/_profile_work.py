"""How comparable the captures of a ``gpuopt profile diff`` are: the steps each holds (``--marker`` or
ProfilerStep#N ranges) and the identity facts (GPU, driver, tool, capture options, CUDA-graph trace
mode) compared capture by capture, with the warnings a difference gives."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal

from gpuopt._profile_sources import Capture
from gpuopt.models.profile import Comparability, ComparabilityFact, DiffWarning, Work
from gpuopt.names import matches, resolve


def work(baseline: Sequence[Capture], candidate: Sequence[Capture], marker: str | None) -> Work:
    """Steps per capture: instances of the --marker range (matched by :mod:`gpuopt.names`; a name that
    matches no range is an error), else of ProfilerStep#N, else the iterations detected from each
    capture's launch sequence (when every capture has some), else unknown."""
    import polars as pl

    captures = [*baseline, *candidate]
    names = {str(n) for c in captures for n in c.ranges["name"].to_list()}
    if marker is not None:
        wanted = resolve(marker, names, option="--marker", what="NVTX range")
        source: Literal["marker", "profiler_step", "detected", "unknown"] = "marker"
    else:
        wanted = [n for n in names if matches("ProfilerStep", n)]
        source = "profiler_step" if wanted else "unknown"
    if source == "unknown":
        found = _detected(captures)
        if found is not None:
            per_iteration = [c.facts.kernels / n for c, n in zip(captures, found, strict=True) if n]
            same_unit = max(per_iteration) <= 1.1 * min(per_iteration)
            return _steps_work(
                "detected", [], found[: len(baseline)], found[len(baseline) :], same_unit=same_unit
            )

    def steps(c: Capture) -> int | None:
        if not wanted:
            return None
        return int(c.ranges.filter(pl.col("name").is_in(wanted))["count"].sum())

    counts = [steps(c) for c in captures]
    return _steps_work(source, sorted(wanted), counts[: len(baseline)], counts[len(baseline) :])


def _steps_work(
    source: Literal["marker", "profiler_step", "detected", "unknown"],
    ranges: list[str],
    baseline: list[int | None],
    candidate: list[int | None],
    *,
    same_unit: bool = True,
) -> Work:
    """Per step when every capture's steps are known, none is 0 and the counts differ. Detected iterations
    count only when every capture repeats the same unit, as far as kernels per iteration (within 10 %)
    tell: what detection finds follows the launch sequence, which is what a candidate changes (a fused
    softmax repeats a short unit twice where the original repeats a 6-kernel unit 512 times), and dividing
    by units that differ compares different things; their counts then stay facts, with a warning."""
    counts = [*baseline, *candidate]
    known = [n for n in counts if n is not None]
    per_step = (
        same_unit and bool(known) and len(known) == len(counts) and min(known) > 0 and len(set(known)) > 1
    )
    return Work(
        source=source,
        step_ranges=ranges,
        steps_baseline=baseline,
        steps_candidate=candidate,
        per_step=per_step,
        same_unit=same_unit,
    )


def _detected(captures: Sequence[Capture]) -> list[int | None] | None:
    """Iterations detected in each capture, or None unless every capture has at least one (a kind without
    a launch sequence, an --nvtx restriction or a capture where nothing repeats leaves the work unknown)."""
    counts: list[int | None] = []
    for c in captures:
        if c.detect is None:
            return None
        steps = c.detect().steps
        if steps == 0:
            return None
        counts.append(steps)
    return counts


#: Capture options that identify one run rather than how it was captured (never compared): the session's
#: identity and duration, and the launched process's command line, working folder, user and pid (what ran is
#: the workload's identity, which a capture through the Target binds by variant; a per-call path in the
#: driver's arguments is not a capture setting).
_PER_RUN_OPTIONS = re.compile(
    r"(^|:)(PROFILING_SESSION_UUID|PROFILING_SESSION_ID|RUN_DURATION_MS|APPLICATION_PID|PID"
    r"|COMMAND|ARGUMENT_\d+|WORKING_DIR|USER_NAME)$"
)


def _settings(options: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in options.items() if not _PER_RUN_OPTIONS.search(k)}


def _option_differences(captures: Sequence[Capture]) -> str:
    """``NAME: [values]`` for each capture setting that is not the same in every capture."""
    names = sorted({k for c in captures for k in _settings(c.facts.options)})
    out = []
    for name in names:
        values = [c.facts.options.get(name) for c in captures]
        if len(set(values)) > 1:
            out.append(f"{name}: {values}")
    return "; ".join(out[:8]) + (f"; and {len(out) - 8} more" if len(out) > 8 else "")


def _fact(name: str, b: list[str | None], c: list[str | None]) -> ComparabilityFact:
    return ComparabilityFact(name=name, baseline=b, candidate=c, same=len(set(b) | set(c)) <= 1)


#: What a difference in how CUDA graphs were traced does to the numbers (measured on the fixtures'
#: graph_graph/graph_node exports and on the GPU host; references/profile-diff.md).
_GRAPH_TRACE_NOTE = (
    "node-level tracing lists each graph's kernels but inflates the host time of cudaGraphLaunch (about 4x "
    "on an H100/H200 decode step); graph-level tracing shows one row per graph execution and hides its "
    "kernels, so kernel keys differ between the sides for that reason alone"
)


def comparability(
    baseline: Sequence[Capture], candidate: Sequence[Capture], work: Work
) -> tuple[Comparability, list[DiffWarning]]:
    def values(side: Sequence[Capture], get: str) -> list[str | None]:
        out: list[str | None] = []
        for c in side:
            value = getattr(c.facts, get)
            out.append(", ".join(value) or None if isinstance(value, list) else value)
        return out

    def options(side: Sequence[Capture]) -> list[str | None]:
        return [json.dumps(_settings(c.facts.options), sort_keys=True) for c in side]

    facts = [
        _fact("gpu", values(baseline, "gpus"), values(candidate, "gpus")),
        _fact("driver", values(baseline, "driver"), values(candidate, "driver")),
        _fact("tool", values(baseline, "tool"), values(candidate, "tool")),
        _fact("capture_options", options(baseline), options(candidate)),
        _fact(
            "cuda_graph_trace", values(baseline, "cuda_graph_trace"), values(candidate, "cuda_graph_trace")
        ),
    ]

    def message(f: ComparabilityFact) -> str:
        text = f"{f.name} differs between captures (baseline, then candidate captures): "
        if f.name == "capture_options":
            return text + _option_differences([*baseline, *candidate])
        text += f"baseline {f.baseline}, candidate {f.candidate}"
        return f"{text}; {_GRAPH_TRACE_NOTE}" if f.name == "cuda_graph_trace" else text

    warnings = [DiffWarning(code=f"{f.name}_differs", message=message(f)) for f in facts if not f.same]
    warnings.extend(_work_warnings(work, baseline, candidate))
    return Comparability(facts=facts, work=work), warnings


def _work_warnings(
    work: Work, baseline: Sequence[Capture], candidate: Sequence[Capture]
) -> list[DiffWarning]:
    steps = [*work.steps_baseline, *work.steps_candidate]
    if work.source == "unknown":
        kb = [c.facts.kernels for c in baseline]
        kc = [c.facts.kernels for c in candidate]
        return [
            DiffWarning(
                code="work_unknown",
                message="no --marker, no ProfilerStep ranges and no iterations detected in every capture: "
                "each capture is assumed to hold the same "
                f"work (give --marker RANGE to count steps); kernels per capture: baseline {kb}, "
                f"candidate {kc} (fewer kernels can be the optimisation itself, e.g. a fusion)",
            )
        ]
    if work.per_step and work.source == "detected":
        return [
            DiffWarning(
                code="steps_differ",
                message="captures hold different numbers of iterations detected from their launch sequences "
                f"(no marker, no ProfilerStep; baseline {work.steps_baseline}, candidate "
                f"{work.steps_candidate}; about the same kernels per iteration): per-key values are per "
                "iteration",
            )
        ]
    if work.source == "detected" and len(set(steps)) > 1:
        return [
            DiffWarning(
                code="steps_differ",
                message="captures hold different numbers of iterations detected from their launch sequences "
                f"(no marker, no ProfilerStep; baseline {work.steps_baseline}, candidate "
                f"{work.steps_candidate}) of different lengths (kernels per iteration differ by more "
                "than 10 %): values are per capture, not per iteration, because a change to the launch "
                "sequence (the optimisation itself) changes what detection finds; give --marker RANGE to "
                "count steps",
            )
        ]
    if any(n == 0 for n in steps):
        return [
            DiffWarning(
                code="work_differs",
                message=f"{', '.join(work.step_ranges)!r} has no instance in some captures (baseline "
                f"{work.steps_baseline}, candidate {work.steps_candidate} steps): values cannot be "
                "normalised per step, and per-key totals compare different amounts of work",
            )
        ]
    if work.per_step:
        return [
            DiffWarning(
                code="steps_differ",
                message=f"captures hold different numbers of {', '.join(work.step_ranges)!r} steps (baseline "
                f"{work.steps_baseline}, candidate {work.steps_candidate}): per-key values are per step",
            )
        ]
    return []
