"""``gpuopt ncu``: Nsight Compute reports as per-launch facts, comparisons, roofline points, collection.

Every command is its options and one call to :mod:`gpuopt.ncu` (a ``*_document`` function; ``ncu table``
through :func:`gpuopt.cli._table_command.table_command`), rendered here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpuopt.cli import _views
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import NCU_FILE, FiniteFloatRange, count
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section
from gpuopt.cli._table_command import table_command
from gpuopt.cli._tables import answered, current_sort, for_people, render_frame, table_options

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.ncu import NcuReportInfo
    from gpuopt.ncu import Reader

_PATH = click.Path(path_type=Path, dir_okay=False)
_READERS = click.Choice(["auto", "ncu-report", "ncu"])
# gpuopt.ncu.TABLES, written out: the group's --help must not import the library.
_TABLES = ("kernels", "warp_stalls", "instruction_mix", "rules", "sections", "metrics")
_LAUNCH_COLUMNS = (
    "launch_id",
    "kernel_function",
    "grid_x",
    "block_x",
    "registers_per_thread",
    "duration_ns",
    "sm_throughput_pct",
    "memory_throughput_pct",
    "dram_throughput_pct",
    "achieved_occupancy_pct",
    "dram_bytes",
    "local_store_bytes",
    "tensor_pipe_active_pct",
)


def _source_options(fn: click.decorators.FC) -> click.decorators.FC:
    fn = click.option(
        "--reader",
        type=_READERS,
        default="auto",
        show_default=True,
        help=".ncu-rep reader: the ncu-report package, ncu --import, or whichever is present.",
    )(fn)
    fn = click.option(
        "--details", type=_PATH, help="The --page details export of the same report (adds rules, sections)."
    )(fn)
    fn = click.option(
        "--session", type=_PATH, help="The --page session export of the same report (adds ncu version)."
    )(fn)
    return fn


@click.group(cls=Group)
def ncu() -> None:
    """Nsight Compute: per-launch facts from .ncu-rep files and ncu --csv exports, and collection.

    \b
    Examples:
      gpuopt ncu summary kernels_full.ncu-rep
      gpuopt ncu launches kernels_full.raw.csv --session kernels_full.session.csv --json
      gpuopt ncu roofline kernels_full.ncu-rep --peak-flops fp32=6.0e13
      gpuopt ncu compare before.ncu-rep after.ncu-rep
      gpuopt ncu collect --out runs/1 --kernel 'gemm' --launch-count 3 -- ./app --n 4096
    """


@ncu.command()
@click.argument("path", type=_PATH, help=NCU_FILE)
@_source_options
@table_options
@command("gpuopt.ncu.summary/v1")
def summary(
    path: Path, session: Path | None, details: Path | None, reader: Reader, limit: int, out: Path | None
) -> Outcome:
    """What a report is, how it was read, where each fact comes from, and per-kernel aggregates.

    Aggregates are per (kernel, grid, block) and state how many launches they cover; launches of
    different kernels are never averaged together.

    \b
    Example:
      gpuopt ncu summary kernels_full.ncu-rep
    """
    from gpuopt import ncu as lib

    answer = lib.summary_document(
        path, session=session, details=details, reader=reader, limit=limit, sort=current_sort()
    )

    def render() -> str:
        i = answer.data.report
        absent = [s.fact for s in i.fact_sources if s.source is None]
        head = section(
            f"Nsight Compute report {i.path}",
            [
                ("format", f"{i.source_format} (read by {i.reader})"),
                ("ncu", i.tool.version_text or i.tool.version or "not recorded in this export"),
                ("command", i.tool.command_line),
                (
                    "clocks, caches",
                    None
                    if i.clock_control is None or i.cache_control is None
                    else f"--clock-control {i.clock_control.value} ({i.clock_control.source}), "
                    f"--cache-control {i.cache_control.value} ({i.cache_control.source})",
                ),
                ("devices", ", ".join(i.devices) or None),
                ("archs", ", ".join(i.archs) or None),
                ("launches", f"{i.launches} in {i.kernels} kernel configurations"),
                ("metrics", i.metrics),
                (
                    "alias table",
                    f"{i.alias_table} (verified for this version/arch: {i.alias_table_verified})",
                ),
                ("facts absent", f"{', '.join(absent)}: {_why_absent(i)}" if absent else "none"),
                ("rules/sections", f"{i.rules} rule results, {i.sections} sections"),
            ],
            wrap=True,
        )
        kernels = answer.table
        shown = for_people(kernels, _views.without(kernels, "kernel_name", "launch_ids"))
        return head + "\n\nKernels (means over the launches counted)\n" + render_frame(shown, limit)

    return answered(answer, render, out=out)


@ncu.command()
@click.argument("path", type=_PATH, help=NCU_FILE)
@_source_options
@click.option("--kernel", "kernel_regex", help="Only launches whose kernel name matches this regex.")
@click.option("--all-columns", is_flag=True, help="Show every fact column (the JSON always has all).")
@table_options
@command("gpuopt.ncu.launches/v2")
def launches(
    path: Path,
    session: Path | None,
    details: Path | None,
    reader: Reader,
    kernel_regex: str | None,
    all_columns: bool,
    limit: int,
    out: Path | None,
) -> Outcome:
    """One row per profiled launch: identity, configuration and every fact, in base units.

    \b
    Example:
      gpuopt ncu launches kernels_full.ncu-rep --kernel gemm
    """
    from gpuopt import ncu as lib

    answer = lib.launches_document(
        path,
        kernel=kernel_regex,
        session=session,
        details=details,
        reader=reader,
        limit=limit,
        sort=current_sort(),
    )
    frame = answer.table
    shown = frame if all_columns else for_people(frame, _views.columns(frame, _LAUNCH_COLUMNS))
    absent = _absent_facts(answer.source.info, frame)
    return answered(answer, lambda: "\n".join([render_frame(shown, limit), *absent]), out=out)


def _absent_facts(info: NcuReportInfo, frame: pl.DataFrame) -> list[str]:
    """Why a fact column is empty: its metric is not in the report (the section was not collected)."""
    missing = [s.fact for s in info.fact_sources if s.source is None and s.fact in frame.columns]
    if not missing:
        return []
    import textwrap

    text = f"absent: {', '.join(missing)}: {_why_absent(info)}; `gpuopt ncu summary --json` names each metric"
    return textwrap.wrap(text, width=120, subsequent_indent="  ")


def _why_absent(info: NcuReportInfo) -> str:
    """Why a fact's metric is not in a report, in words (the JSON says it as ``source: null``)."""
    if info.source_format == "ncu-csv-details":
        return (
            "their metrics are not on this details page, which shows only what its sections display; "
            "the raw page (ncu --import R --page raw --csv) or the .ncu-rep holds every metric collected"
        )
    return (
        "their metrics are not in this report (the sections holding them were not collected; see --set full)"
    )


@ncu.command(name="table")
@click.argument("path", type=_PATH, help=NCU_FILE)
@click.argument("name", type=click.Choice(_TABLES), help="The table to print.")
@_source_options
@table_options
@command("gpuopt.ncu.table/v2")
def table_cmd(path: Path, name: str, **options: Any) -> Outcome:
    """Another table of a report: kernels, warp_stalls, instruction_mix, rules, sections or metrics.

    Rule results are ncu's own text, reported verbatim.

    \b
    Example:
      gpuopt ncu table kernels_full.ncu-rep warp_stalls --limit 10
    """
    return table_command("ncu", name, path, **options)


@ncu.command()
@click.argument("path", type=_PATH, help=NCU_FILE)
@_source_options
@click.option(
    "--peak-flops",
    multiple=True,
    metavar="PRECISION=FLOP_PER_S",
    help="A measured ceiling for fp64, fp32, fp16 or a tensor_* path (repeatable); default: the report's.",
)
@click.option(
    "--peak-dram-bytes-per-s",
    type=FiniteFloatRange(min=0, min_open=True),
    help="A measured DRAM ceiling; default: the report's.",
)
@table_options
@command("gpuopt.ncu.roofline/v2")
def roofline(
    path: Path,
    session: Path | None,
    details: Path | None,
    reader: Reader,
    peak_flops: tuple[str, ...],
    peak_dram_bytes_per_s: float | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Achieved FLOP/s (SASS thread-instruction counters), DRAM bytes/s and arithmetic intensity per
    launch x precision, against the device's peaks from the report or the ceilings given.

    A point states where a launch sits under these assumptions; it predicts nothing.

    \b
    Example:
      gpuopt ncu roofline kernels_full.ncu-rep
    """
    from gpuopt import ncu as lib

    answer = lib.roofline_document(
        path,
        peak_flop_per_s=lib.parse_peaks(peak_flops),
        peak_dram_bytes_per_s=peak_dram_bytes_per_s,
        session=session,
        details=details,
        reader=reader,
        limit=limit,
        sort=current_sort(),
    )
    info: NcuReportInfo = answer.source.info
    missing = [c for c in info.roofline if not c.available]
    header = None
    if missing:
        header = "Precisions without the metrics they need: " + "; ".join(
            f"{c.precision} (no {', '.join(c.missing_metrics[:3])})" for c in missing
        )
    frame = answer.table
    shown, hidden = _views.roofline_points(frame)
    note = f"\n({hidden} rows of a precision a launch did not use (0 FLOP) hidden; --json or --out have them)"
    body = render_frame(for_people(frame, shown), limit)
    return answered(
        answer, lambda: "\n".join(filter(None, [header, body])) + (note if hidden else ""), out=out
    )


@ncu.command()
@click.argument("a", type=_PATH, help=f"The first side: {NCU_FILE[0].lower()}{NCU_FILE[1:]}")
@click.argument("b", type=_PATH, help="The second side, compared with A kernel by kernel (same kinds as A).")
@click.option("--metric", "metrics", multiple=True, help="Also compare this raw metric (repeatable).")
@click.option("--reader", type=_READERS, default="auto", show_default=True, help=".ncu-rep reader.")
@table_options
@command("gpuopt.ncu.compare/v2")
def compare(
    a: Path, b: Path, metrics: tuple[str, ...], reader: Reader, limit: int, out: Path | None
) -> Outcome:
    """Per-kernel deltas (B - A) of the same facts between two reports, with each side's counts.

    Kernels are matched by name; a kernel on one side only has the other side empty.

    \b
    Example:
      gpuopt ncu compare kernels_full.ncu-rep kernels_full.raw.csv
    """
    from gpuopt import ncu as lib

    answer = lib.compare_document(a, b, metrics=metrics, reader=reader, limit=limit, sort=current_sort())
    return answered(answer, lambda: render_frame(answer.table, limit), out=out)


@ncu.command(context_settings={"ignore_unknown_options": False})
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder to keep report.ncu-rep, ncu's output and gpuopt-collect.json in.",
)
@click.option("--kernel", help="Profile only kernels whose name matches this regex (ncu -k regex:...).")
@click.option("--launch-skip", type=count(0), help="Launches to skip before profiling.")
@click.option("--launch-count", type=count(1), help="Launches to profile.")
@click.option("--set", "set_name", help="ncu section set (basic, detailed, full, roofline, ...).")
@click.option("--section", "sections", multiple=True, help="ncu section identifier (repeatable).")
@click.option("--nvtx-include", multiple=True, help="Only inside this NVTX range expression (repeatable).")
@click.option(
    "--clock-control",
    type=click.Choice(["none", "base"]),
    default="none",
    show_default=True,
    help="none leaves the GPU's clocks alone; base lets ncu lock them to base during replay.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=FiniteFloatRange(min=0, min_open=True),
    help="Stop ncu after this many seconds.",
)
@click.argument(
    "cmd",
    nargs=-1,
    required=True,
    type=click.UNPROCESSED,
    help="The command ncu runs and profiles, after --, as words (no shell).",
)
@command("gpuopt.ncu.collect/v1")
def collect(
    out_dir: Path,
    kernel: str | None,
    launch_skip: int | None,
    launch_count: int | None,
    set_name: str | None,
    sections: tuple[str, ...],
    nvtx_include: tuple[str, ...],
    clock_control: str,
    timeout_s: float | None,
    cmd: tuple[str, ...],
) -> Outcome:
    """Run ncu on COMMAND (after --) and keep report.ncu-rep, ncu's output and gpuopt-collect.json
    (exact command line, ncu version, GPU identity) in --out. No shell is involved.

    \b
    Examples:
      gpuopt ncu collect --out runs/k --set full --launch-count 4 -- ./kernels_bin
      gpuopt ncu collect --out runs/g --kernel gemm --launch-skip 2 --launch-count 1 -- python bench.py
    """
    from gpuopt import ncu as lib

    record = lib.collect(
        out_dir,
        cmd,
        kernel=kernel,
        launch_skip=launch_skip,
        launch_count=launch_count,
        set_name=set_name,
        sections=sections,
        nvtx_include=nvtx_include,
        clock_control=clock_control,
        timeout_s=timeout_s,
    )

    def render() -> str:
        return section(
            "ncu collection",
            [
                ("report", record.report_path),
                ("command", record.command_line),
                ("exit code", record.exit_code),
                ("ncu", f"{record.ncu.version} ({record.ncu.path})"),
                ("gpus", ", ".join(g.name for g in record.gpus.gpus) if record.gpus else record.gpu_note),
                ("record", str(Path(record.out_dir) / "gpuopt-collect.json")),
            ],
        )

    from gpuopt.provenance import file_identity

    return Outcome(data=record, render=render, inputs=[file_identity(f.path) for f in record.files])
