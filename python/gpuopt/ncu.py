"""Nsight Compute reports as facts: ``gpuopt.ncu.open(path)`` → per-launch DataFrames.

Reads ``ncu --csv`` raw and details pages natively (units normalised to base units with an explicit
table) and ``.ncu-rep`` files through NVIDIA's ``ncu_report`` module (``pip install 'gpuopt[ncu]'``) or,
without it, ``ncu --import``. Every launch is its own row; per-name aggregates state their count.

    >>> from gpuopt import ncu
    >>> report = ncu.open("kernels_full.ncu-rep")
    >>> report.launches.select("launch_id", "kernel_function", "duration_ns", "dram_bytes")

Every document ``gpuopt ncu ...`` prints, as a :class:`gpuopt.answer.Answer` (``.data`` is the document
``--json`` prints under ``data``, ``.table`` the whole table, ``.inputs`` the files' identities):
:func:`summary_document`, :func:`launches_document`, :func:`table_document` (``gpuopt ncu table``),
:func:`roofline_document` and :func:`compare_document`; ``limit`` and ``sort`` are ``--limit`` and
``--sort``. :func:`collect` runs ncu (``gpuopt ncu collect``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.models.envelope import FileIdentity, UnmodeledItem
from gpuopt.models.ncu import NcuCollection, NcuReportInfo

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.ncu import NcuSummary
    from gpuopt.models.table import TableResult

Reader = Literal["auto", "ncu-report", "ncu"]
NATIVE_CSV_READER = "gpuopt-native-csv"


class NcuReport:
    """One parsed report. Tables are built natively on first access and cached."""

    def __init__(self, path: Path, native: _native.NcuReport, reader: str, inputs: list[Path]) -> None:
        self.path = path
        self._native = native
        self._reader = reader
        self._inputs = inputs

    def __repr__(self) -> str:
        return f"NcuReport({str(self.path)!r}, launches={self._native.num_launches}, reader={self._reader!r})"

    @cached_property
    def info(self) -> NcuReportInfo:
        """Format, tool version, reader, where each fact comes from, roofline coverage."""
        raw = json.loads(self._native.info_json())
        return NcuReportInfo.model_validate({"path": str(self.path), "reader": self._reader, **raw})

    @cached_property
    def launches(self) -> pl.DataFrame:
        """One row per launch: identity, configuration, every fact in base units, tool and arch."""
        return _frame(self._native.launches())

    @cached_property
    def kernels(self) -> pl.DataFrame:
        """One row per (kernel, grid, block) with ``launches`` (the count every mean covers)."""
        return _frame(self._native.kernels())

    @cached_property
    def warp_stalls(self) -> pl.DataFrame:
        """One row per launch x stall reason: cycles per issued instruction and sampled warps."""
        return _frame(self._native.warp_stalls())

    @cached_property
    def instruction_mix(self) -> pl.DataFrame:
        """One row per launch x SASS opcode (``.ncu-rep`` sources with the InstructionStats section)."""
        return _frame(self._native.instruction_mix())

    @cached_property
    def rules(self) -> pl.DataFrame:
        """ncu's rule results, verbatim (NVIDIA's text, not gpuopt's)."""
        return _frame(self._native.rules())

    @cached_property
    def sections(self) -> pl.DataFrame:
        return _frame(self._native.sections())

    @cached_property
    def metrics(self) -> pl.DataFrame:
        """Every metric of every launch (long form) in base units; ``used_by_facts`` marks what facts read."""
        return _frame(self._native.metrics())

    @cached_property
    def unmodeled(self) -> list[UnmodeledItem]:
        """What the report carries that no fact uses, by name, with how many launches carry it."""
        items = json.loads(self._native.unmodeled_json())
        return [UnmodeledItem.model_validate(i) for i in items]

    def roofline(
        self,
        peak_flop_per_s: Mapping[str, float] | None = None,
        peak_dram_bytes_per_s: float | None = None,
    ) -> pl.DataFrame:
        """Achieved FLOP/s and arithmetic intensity per launch x precision, against the report's peaks
        or the ceilings given (``{"fp32": 6.0e13}``, bytes/s)."""
        peaks = list((peak_flop_per_s or {}).items())
        return _frame(self._native.roofline(peaks, peak_dram_bytes_per_s))

    def inputs(self) -> list[FileIdentity]:
        """Identities of the files this report was read from."""
        from gpuopt.provenance import file_identity

        return [file_identity(p) for p in self._inputs]

    @property
    def native(self) -> _native.NcuReport:
        return self._native


def _frame(table: _native.ArrowTable) -> pl.DataFrame:
    from gpuopt._tables import to_polars

    return to_polars(table)


def _is_rep(path: Path) -> bool:
    from gpuopt._files import read_head

    head = read_head(path, 4)  # a FIFO or device answers not_a_file instead of blocking the magic read
    return head in (b"NVR\0", b"\x28\xb5\x2f\xfd") or path.suffix in (".ncu-rep", ".ncu-repz")


def open(  # the natural name: gpuopt.ncu.open(path), shadowing the builtin here only
    path: str | Path,
    *,
    session: str | Path | None = None,
    details: str | Path | None = None,
    reader: Reader = "auto",
) -> NcuReport:
    """Opens an ``.ncu-rep`` report or a ``ncu --csv`` raw/details page.

    For CSV exports, ``session`` (the ``--page session`` export of the same report) adds the ncu version,
    command line and device names; ``details`` (beside a raw page) adds ncu's rule results and sections.
    For ``.ncu-rep`` files, ``reader`` picks ``ncu-report`` (the Python package), ``ncu`` (``ncu --import``)
    or ``auto`` (the package when importable, else ncu on PATH; neither is exit 3).
    """
    p = Path(path)
    if _is_rep(p):
        if session is not None or details is not None:
            raise InputError(
                "usage_invalid",
                "session= and details= apply to CSV exports, not to .ncu-rep files",
                path=str(p),
            )
        return _open_rep(p, reader)
    native = _native.ncu_open_csv(
        str(p),
        session=None if session is None else str(session),
        details=None if details is None else str(details),
    )
    extra = [Path(x) for x in (session, details) if x is not None]
    return NcuReport(p, native, NATIVE_CSV_READER, [p, *extra])


def _open_rep(path: Path, reader: Reader) -> NcuReport:
    from gpuopt import tools
    from gpuopt._ncu import rep as _ncu_rep

    _ncu_rep.framing(path)  # garbage, empty and truncated files fail here, before any reader
    package = _ncu_rep.ncu_report_version() if reader in ("auto", "ncu-report") else None
    if package is not None:
        name = f"ncu_report {package}"
        native = _ncu_rep.read_once(path, name, lambda: _ncu_rep.read_with_ncu_report(path))
        return NcuReport(path, native, name, [path])
    if reader == "ncu-report":
        raise _ncu_rep.absent_error(path)
    ncu = tools.find_tool("ncu")
    if ncu is None:
        raise _ncu_rep.absent_error(path)
    name = f"ncu --import {ncu.version or 'unknown'}"
    native = _ncu_rep.read_once(path, name, lambda: _ncu_rep.read_with_ncu_cli(path, ncu.path))
    return NcuReport(path, native, name, [path])


def compare(a: NcuReport, b: NcuReport, metrics: Sequence[str] = ()) -> pl.DataFrame:
    """Per-kernel deltas (B - A) of every fact, plus any raw ``metrics`` named, with counts per side."""
    return _frame(_native.ncu_compare(a.native, b.native, list(metrics)))


def unit(name: str) -> tuple[str, float] | None:
    """gpuopt's unit table: ``unit("ms") == ("ns", 1e6)``; None for a unit it does not know."""
    return _native.ncu_unit(name)


def collect(
    out_dir: str | Path,
    command: Sequence[str],
    *,
    kernel: str | None = None,
    launch_skip: int | None = None,
    launch_count: int | None = None,
    set_name: str | None = None,
    sections: Sequence[str] = (),
    nvtx_include: Sequence[str] = (),
    clock_control: str = "none",
    timeout_s: float | None = None,
) -> NcuCollection:
    """Runs ``ncu`` on ``command`` (no shell) and keeps ``report.ncu-rep``, its logs and provenance in
    ``out_dir``. Needs ncu (exit 3 without it) and a GPU whose counters this user may read."""
    from gpuopt._ncu import collect as _ncu_collect

    options = _ncu_collect.CollectOptions(
        kernel=kernel,
        launch_skip=launch_skip,
        launch_count=launch_count,
        set_name=set_name,
        sections=tuple(sections),
        nvtx_include=tuple(nvtx_include),
        clock_control=clock_control,
    )
    return _ncu_collect.collect(Path(out_dir), list(command), options, timeout_s=timeout_s)


# --- documents: what `gpuopt ncu ...` prints under `data` ---------------------------------------------

#: The tables of a report ``gpuopt ncu table NAME`` shows (attributes of :class:`NcuReport`).
TABLES = ("kernels", "warp_stalls", "instruction_mix", "rules", "sections", "metrics")


def _table_answer(
    name: str,
    frame: pl.DataFrame,
    report: NcuReport | None,
    *,
    limit: int,
    sort: str | None,
    unmodeled: list[UnmodeledItem] | None = None,
    inputs: list[FileIdentity] | None = None,
) -> Answer[TableResult]:
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.table import TableResult

    frame = sorted_by(frame, sort)
    data = TableResult(table=table_data(name, frame, limit))
    if inputs is None and report is not None:
        inputs = report.inputs()
    return Answer(data, inputs or [], unmodeled or [], {name: frame}, source=report)


def summary_document(
    path: str | Path,
    *,
    session: str | Path | None = None,
    details: str | Path | None = None,
    reader: Reader = "auto",
    limit: int = 50,
    sort: str | None = None,
) -> Answer[NcuSummary]:
    """``gpuopt ncu summary``: what the report is, how it was read, where each fact comes from, and the
    per-(kernel, grid, block) aggregates (each states how many launches it covers)."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.ncu import NcuSummary

    report = open(path, session=session, details=details, reader=reader)
    kernels = sorted_by(report.kernels, sort)
    data = NcuSummary(report=report.info, kernels=table_data("kernels", kernels, limit))
    return Answer(data, report.inputs(), report.unmodeled, {"kernels": kernels}, source=report)


def _check_regex(pattern: str) -> None:
    import re

    try:
        re.compile(pattern)
    except re.error as exc:
        raise InputError("usage_invalid", f"--kernel is not a valid regex: {exc}", observed=pattern) from None


def launches_document(
    path: str | Path,
    *,
    kernel: str | None = None,
    session: str | Path | None = None,
    details: str | Path | None = None,
    reader: Reader = "auto",
    limit: int = 50,
    sort: str | None = None,
) -> Answer[TableResult]:
    """``gpuopt ncu launches``: one row per profiled launch, only those whose kernel name matches the
    regex ``kernel`` (one that matches none is ``name_unknown``, naming the closest kernels)."""
    import polars as pl

    if kernel is not None:
        _check_regex(kernel)
    report = open(path, session=session, details=details, reader=reader)
    frame = report.launches
    if kernel is not None:
        frame = frame.filter(pl.col("kernel_name").str.contains(kernel))
        if frame.is_empty():
            from gpuopt.names import unknown

            names = report.launches["kernel_name"].drop_nulls().unique().to_list()
            raise unknown(
                kernel, names, option="--kernel", what="kernel", expected="a regex matching a kernel name"
            )
    return _table_answer("ncu_launches", frame, report, limit=limit, sort=sort, unmodeled=report.unmodeled)


def table_document(
    path: str | Path,
    name: str,
    *,
    session: str | Path | None = None,
    details: str | Path | None = None,
    reader: Reader = "auto",
    limit: int = 50,
    sort: str | None = None,
) -> Answer[TableResult]:
    """``gpuopt ncu table``: one more table of a report, by name (:data:`TABLES`)."""
    if name not in TABLES:
        raise InputError("ncu_table_unknown", f"no table named {name!r}", expected=", ".join(TABLES))
    report = open(path, session=session, details=details, reader=reader)
    return _table_answer(f"ncu_{name}", getattr(report, name), report, limit=limit, sort=sort)


def parse_peaks(values: Sequence[str]) -> dict[str, float]:
    """``["fp32=6.0e13", ...]`` (``--peak-flops PRECISION=FLOP_PER_S``) -> ``{"fp32": 6.0e13}``."""
    peaks: dict[str, float] = {}
    for item in values:
        precision, sep, number = item.partition("=")
        try:
            if not sep:
                raise ValueError(item)
            peaks[precision] = float(number)
        except ValueError:
            raise InputError(
                "ncu_peak_invalid", f"--peak-flops takes PRECISION=FLOP_PER_S, got {item!r}"
            ) from None
    return peaks


def roofline_document(
    path: str | Path,
    *,
    peak_flop_per_s: Mapping[str, float] | None = None,
    peak_dram_bytes_per_s: float | None = None,
    session: str | Path | None = None,
    details: str | Path | None = None,
    reader: Reader = "auto",
    limit: int = 50,
    sort: str | None = None,
) -> Answer[TableResult]:
    """``gpuopt ncu roofline``: :meth:`NcuReport.roofline` as a document (the answer's ``source.info``
    names the precisions without the metrics they need)."""
    report = open(path, session=session, details=details, reader=reader)
    frame = report.roofline(peak_flop_per_s, peak_dram_bytes_per_s)
    return _table_answer("ncu_roofline", frame, report, limit=limit, sort=sort)


def compare_document(
    a: str | Path,
    b: str | Path,
    *,
    metrics: Sequence[str] = (),
    reader: Reader = "auto",
    limit: int = 50,
    sort: str | None = None,
) -> Answer[TableResult]:
    """``gpuopt ncu compare``: :func:`compare` of two reports as a document."""
    ra = open(a, reader=reader)
    rb = open(b, reader=reader)
    frame = compare(ra, rb, metrics)
    return _table_answer("ncu_compare", frame, None, limit=limit, sort=sort, inputs=ra.inputs() + rb.inputs())
