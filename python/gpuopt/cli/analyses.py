"""``gpuopt nsys|torch iterations|critical-path|queue|sequences``: analyses of the launch and execution
record (parse → one library call, :mod:`gpuopt.analyses` → render). ``cli/nsys.py`` and
``cli/torch_trace.py`` add :func:`commands` of their area to their group."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import NSYS_FILE, TORCH_PATH, count
from gpuopt.cli._tables import answered, current_sort, render_frame, table_options

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.analyses import IterationFacts

Area = Literal["nsys", "torch"]

_WHAT = {
    "nsys": "FILE (an nsys SQLite export or .nsys-rep)",
    "torch": "PATH (a Kineto trace or a folder of ranks)",
}
_EXAMPLE = {"nsys": "profile.sqlite", "torch": "trace.json.gz"}


def _facts_lines(facts: list[IterationFacts]) -> list[str]:
    """How the iterations were found, one line per fact, for people."""
    lines = []
    for f in facts:
        rank = f"rank {f.rank}: " if f.rank is not None else ""
        if f.marker:
            m = f.marker
            lines.append(
                f"{rank}marker {m.name!r} ({m.kind}, {m.instances} ranges, chosen by {m.chosen_by}); "
                f"{m.unattributed_ops} operations launched between its rows"
            )
        else:
            lines.append(f"{rank}no marker: no top-level range repeats")
        for d in f.detection:
            if d.period_ops is None:
                lines.append(f"{rank}device {d.device_id}: {d.operations} operations, no repeating unit")
            else:
                lines.append(
                    f"{rank}device {d.device_id}: unit of {d.period_ops} operations, {d.iterations} "
                    f"iterations in {d.regions} region(s); an iteration starts at unit position {d.phase} "
                    f"(median {d.pause_clock} pause {d.phase_pause_ns} ns before it)"
                )
        for a in f.agreement:
            diff = "n/a" if a.max_span_diff_pct is None else f"{a.max_span_diff_pct:.3f}%"
            lines.append(
                f"{rank}device {a.device_id}: marker {a.marker_iterations} vs detected "
                f"{a.detected_iterations} iterations; {a.paired_rows} rows paired, largest span difference "
                f"{diff}, {a.kernel_count_differs} with other kernel counts"
            )
        lines.append(f"{rank}the other analyses use the {f.used} rows")
    return lines


def _render(header: list[str], answer: Answer[Any], limit: int) -> Callable[[], str]:
    def render() -> str:
        frame = answer.table
        body = render_frame(frame, limit, totals=False) if frame.height else "(no rows)"
        return "\n".join([*header, body])

    return render


def _path_argument(area: Area) -> Callable[[Any], Any]:
    if area == "nsys":
        return click.argument(
            "path", metavar="FILE", type=click.Path(path_type=Path, dir_okay=False), help=NSYS_FILE
        )
    return click.argument("path", metavar="PATH", type=click.Path(path_type=Path), help=TORCH_PATH)


def _marker_option(fn: Any) -> Any:
    return click.option(
        "--marker",
        metavar="NAME",
        help="The range that marks steps (a name, or a group such as step_*); default: ProfilerStep#N, "
        "else the repeated top-level range covering the most time among those that are half their "
        "threads' top-level ranges or time.",
    )(fn)


def _iterations(area: Area) -> click.Command:
    def iterations(path: Path, marker: str | None, limit: int, out: Path | None) -> Outcome:
        from gpuopt import analyses

        answer = analyses.iterations_document(
            path, area=area, marker=marker, limit=limit, sort=current_sort()
        )
        render = _render(_facts_lines(answer.data.traces), answer, limit)
        return answered(answer, render, out=out)

    iterations.__doc__ = f"""Repeated steps, from step markers and from the launch sequence alone.

    One row per iteration (and per stretch of work outside them) of every source: the marker's ranges
    (ProfilerStep#N, else the repeated top-level range covering the most time that tiles its thread,
    or --marker) and the
    repeating unit of the launch sequence (`source` detected). Per row: start, span (completion to
    completion), GPU busy, kernel count; odd rows name the rule that made them odd (warm-up, straggler,
    prefill before the first repeat, ...). The header says which source the other analyses use and how
    the two agree. {_WHAT[area]}.

    \b
    Examples:
      gpuopt {area} iterations {_EXAMPLE[area]}
      gpuopt {area} iterations {_EXAMPLE[area]} --marker step_* --json
    """
    fn = command(f"gpuopt.{area}.iterations/v1")(iterations)
    fn = table_options(fn)
    fn = _marker_option(fn)
    fn = _path_argument(area)(fn)
    return click.command("iterations")(fn)


def _critical_path(area: Area) -> click.Command:
    def critical_path(
        path: Path,
        marker: str | None,
        using: Literal["marker", "detected"] | None,
        step: int | None,
        limit: int,
        out: Path | None,
    ) -> Outcome:
        from gpuopt import analyses

        answer = analyses.critical_path_document(
            path, area=area, marker=marker, using=using, step=step, limit=limit, sort=current_sort()
        )

        def render() -> str:
            parts = [*_facts_lines(answer.data.traces), render_frame(answer.table, limit, totals=False)]
            if step is not None:
                edges = answer.tables["critical_path_edges"]
                parts += [
                    f"\nstep row {step}: its path, stretch by stretch",
                    render_frame(edges, 0, totals=False),
                ]
            return "\n".join(parts)

        return answered(answer, render, out=out)

    critical_path.__doc__ = f"""Per step, the critical path through host calls and GPU work, by category.

    The chain of dependencies that ends when the step's last event ends, walked back from it: host call
    order on a thread, launch -> GPU operation, stream order, and sync waits (a synchronizing call ends
    after the operation it waited for). Its time is split into cpu, launch, gpu_compute, gpu_memory,
    sync and idle (they sum to the step's span). Steps are the iterations' rows (--source). The JSON
    carries every stretch with its edge (`edges`); --step ROW prints one step's stretches. --out
    writes the per-step table. {_WHAT[area]}.

    \b
    Examples:
      gpuopt {area} critical-path {_EXAMPLE[area]}
      gpuopt {area} critical-path {_EXAMPLE[area]} --step 3
      gpuopt {area} critical-path {_EXAMPLE[area]} --source detected --json
    """
    fn = command(f"gpuopt.{area}.critical-path/v1")(critical_path)
    fn = table_options(fn)
    fn = click.option(
        "--step",
        type=count(0),
        metavar="ROW",
        help="Show (and put in the JSON) the stretches of this step's path only (its `row`).",
    )(fn)
    fn = click.option(
        "--source",
        "using",
        type=click.Choice(["marker", "detected"]),
        help="Which iterations are the steps (default: the marker's when there is one).",
    )(fn)
    fn = _marker_option(fn)
    fn = _path_argument(area)(fn)
    return click.command("critical-path")(fn)


def _queue(area: Area) -> click.Command:
    def queue(path: Path, series: bool, limit: int, out: Path | None) -> Outcome:
        from gpuopt import analyses

        answer = analyses.queue_document(path, area=area, series=series, limit=limit, sort=current_sort())
        header = [
            "launch-bound idle: nothing running and nothing launched; queued idle: launched, not running;"
            " host sync: a synchronizing call waiting (stream_id — : the whole device)"
        ]
        return answered(answer, _render(header, answer, limit), out=out)

    queue.__doc__ = f"""Outstanding launches per stream over time, and who waited for whom.

    An operation is outstanding from its launch call's start to its end on the GPU. Per stream and
    per device (stream_id empty): busy, launch-bound idle (nothing running, nothing queued: the GPU
    waited for work), queued idle (launched but not running), host sync (a synchronizing call waited
    for the GPU), their shares of the window, and the queue's depth (max, time-weighted mean).
    --series gives the depth over time instead. {_WHAT[area]}.

    \b
    Examples:
      gpuopt {area} queue {_EXAMPLE[area]}
      gpuopt {area} queue {_EXAMPLE[area]} --series --out depth.parquet
    """
    fn = command(f"gpuopt.{area}.queue/v1")(queue)
    fn = table_options(fn)
    fn = click.option(
        "--series",
        is_flag=True,
        help="The depth over time (stretches of constant depth) instead of the summary.",
    )(fn)
    fn = _path_argument(area)(fn)
    return click.command("queue")(fn)


def _sequences(area: Area) -> click.Command:
    def sequences(path: Path, n: int, limit: int, out: Path | None) -> Outcome:
        from gpuopt import analyses

        answer = analyses.sequences_document(path, area=area, n=n, limit=limit, sort=current_sort())
        header = [f"kernel sequences in launch order per device: the repeating unit, then {n}-grams"]
        return answered(answer, _render(header, answer, limit), out=out)

    sequences.__doc__ = f"""The most frequent kernel n-grams and the repeating unit, with counts and time.

    Per device, kernels (and CUDA-graph executions) in launch order: every window of N kernels is one
    instance (windows overlap); per n-gram the instances, their GPU time in total and per instance, and
    their span per instance. The first row of each device is the repeating unit iteration detection
    finds (its instances: the full units). {_WHAT[area]}.

    \b
    Examples:
      gpuopt {area} sequences {_EXAMPLE[area]}
      gpuopt {area} sequences {_EXAMPLE[area]} --n 5 --limit 10
    """
    fn = command(f"gpuopt.{area}.sequences/v1")(sequences)
    fn = table_options(fn)
    fn = click.option(
        "--n", "n", type=click.IntRange(1, 64), default=3, show_default=True, help="Kernels per n-gram."
    )(fn)
    fn = _path_argument(area)(fn)
    return click.command("sequences")(fn)


def commands(area: Area) -> list[click.Command]:
    """The four analysis commands of ``gpuopt nsys`` or ``gpuopt torch``."""
    return [_iterations(area), _critical_path(area), _queue(area), _sequences(area)]
