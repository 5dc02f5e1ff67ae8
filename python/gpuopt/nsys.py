"""Nsight Systems facts from an nsys SQLite export (or a ``.nsys-rep``, exported with ``nsys``).

>>> from gpuopt import nsys
>>> report = nsys.open("profile.sqlite")
>>> report.stats("cuda_gpu_kern_sum")          # NVIDIA's report, number for number (polars)
>>> report.timeline(nvtx="step_3").devices      # busy/idle/gaps/overlap of one NVTX range (pydantic)

Every method takes ``window=(start_ns, end_ns)`` (either end may be None) and/or ``nvtx="NAME"`` to
restrict the facts; see ``references/formats/nsys-sqlite.md`` for the definitions.

Every document ``gpuopt nsys ...`` prints, as a :class:`gpuopt.answer.Answer` (``.data`` is the document
``--json`` prints under ``data``; ``.table`` the whole table; ``.inputs`` the files' identities):

* :func:`summary_document` (``gpuopt nsys summary``), :func:`timeline_document` (``timeline``),
  :func:`graphs_document` (``graphs``);
* :func:`table_document` (``kernels``, ``api``, ``mem``, ``nvtx``, ``gaps``, ``comm``, ``stats``; several
  files or a glob give one table keyed by ``file``), :func:`ranks_document` (``ranks``);
* :func:`stats_csv` and :func:`stats_envelope`: ``gpuopt nsys stats --csv`` / ``--json`` as printed,
  made by the engine (NVIDIA's CSV byte for byte; neither polars nor pydantic is imported).

Their ``window`` may also be ``--window`` text (``"7.2s:7.3s"``); ``limit`` and ``sort`` are ``--limit``
and ``--sort``.

>>> nsys.table_document("profile.sqlite", "kernels", nvtx="step_3", limit=10).data.table.rows
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt import _native, _window
from gpuopt._nsys.export import export_report, is_report
from gpuopt._nsys.report import SOURCES, STATS_REPORTS, Report, Window, open, table
from gpuopt.ranks import Ranks

if TYPE_CHECKING:  # the models (pydantic) are imported where a function builds one, not on import
    from gpuopt.answer import Answer
    from gpuopt.many import Readers
    from gpuopt.models.envelope import FileIdentity
    from gpuopt.models.many import ManyTableData
    from gpuopt.models.nsys import (
        NsysGraphsData,
        NsysSelection,
        NsysSummaryData,
        NsysTableData,
        NsysTimelineData,
        Timeline,
    )
    from gpuopt.models.ranks import RanksData

__all__ = [
    "SOURCES",
    "STATS_REPORTS",
    "Report",
    "Window",
    "busiest_streams",
    "export_report",
    "graphs_document",
    "is_report",
    "open",
    "parse_window",
    "ranks",
    "ranks_document",
    "selection",
    "stats_csv",
    "stats_envelope",
    "summary_document",
    "table",
    "table_document",
    "table_name",
    "timeline_document",
]

_read_table = table  # the per-file function, under a name table_document's argument does not shadow


def ranks(paths: Sequence[str | os.PathLike[str]], *, step: str | None = None) -> Ranks:
    """The ranks of one job across exports: one rank per process that ran kernels, in file order then
    by pid (exports carry no rank metadata). ``step`` names the NVTX range whose instances are steps."""
    from gpuopt._tables import to_polars

    ranks_, collectives, stragglers, clock = _native.nsys_ranks([str(p) for p in paths], step)
    return Ranks(to_polars(ranks_), to_polars(collectives), to_polars(stragglers), "file_order", clock)


def parse_window(text: str) -> Window:
    """``"START:END"`` (either side may be empty) -> ``(start_ns, end_ns)`` (the one ``--window`` grammar,
    :mod:`gpuopt._window`)."""
    return _window.parse_window(text, open_ends=True)


def selection(window: Window | None, nvtx: str | None) -> NsysSelection:
    from gpuopt.models.nsys import NsysSelection

    start, end = window or (None, None)
    return NsysSelection(window_start_ns=start, window_end_ns=end, nvtx=nvtx)


# --- documents: what `gpuopt nsys ...` prints under `data` -------------------------------------------


def _window_of(window: str | Window | None) -> Window | None:
    return parse_window(window) if isinstance(window, str) else window


def _opened(path: str | os.PathLike[str], window: str | Window | None) -> tuple[Report, Window | None]:
    from gpuopt.provenance import identify_in_background

    parsed = _window_of(window)  # a malformed window fails before the file is read
    identify_in_background(Path(path))  # hashing (on a cache miss) overlaps the engine's work
    return open(path), parsed


def _inputs(path: str | os.PathLike[str]) -> list[FileIdentity]:
    from gpuopt.provenance import file_identity

    return [file_identity(Path(path))]


def summary_document(
    path: str | os.PathLike[str], *, window: str | Window | None = None, nvtx: str | None = None
) -> Answer[NsysSummaryData]:
    """``gpuopt nsys summary``: the export's identity (versions, GPUs, what was captured) and the
    headline timeline and CUDA graph facts of the selection. ``window`` is ``(start_ns, end_ns)`` or
    ``--window`` text (``"7.2s:7.3s"``)."""
    from gpuopt.answer import Answer
    from gpuopt.models.nsys import NsysSummaryData

    report, parsed = _opened(path, window)
    info = report.info()
    timeline, graph_facts = report.timeline_and_graphs(window=parsed, nvtx=nvtx)
    data = NsysSummaryData(
        path=report.path,
        source=report.source,
        selection=selection(parsed, nvtx),
        info=info,
        timeline=timeline,
        graphs=graph_facts,
    )
    return Answer(data, _inputs(path), report.unmodeled(), source=report)


def timeline_document(
    path: str | os.PathLike[str],
    *,
    window: str | Window | None = None,
    nvtx: str | None = None,
    limit: int = 50,
) -> Answer[NsysTimelineData]:
    """``gpuopt nsys timeline``: every timeline fact, with at most ``limit`` streams per device (the
    busiest, in stream order; 0: all); device facts always cover every stream."""
    from gpuopt.answer import Answer
    from gpuopt.models.nsys import NsysTimelineData

    report, parsed = _opened(path, window)
    facts, left_out = busiest_streams(report.timeline(window=parsed, nvtx=nvtx), limit)
    data = NsysTimelineData(
        path=report.path,
        source=report.source,
        selection=selection(parsed, nvtx),
        timeline=facts,
        streams_left_out=left_out,
    )
    return Answer(data, _inputs(path), report.unmodeled(), source=report)


def busiest_streams(facts: Timeline, limit: int) -> tuple[Timeline, int]:
    """``facts`` with at most ``limit`` streams per device (the busiest, kept in stream order; 0: all),
    and how many streams were left out."""
    if limit == 0:
        return facts, 0
    devices, left_out = [], 0
    for d in facts.devices:
        keep = sorted(d.streams, key=lambda s: (-s.busy_ns, s.stream_id))[:limit]
        left_out += len(d.streams) - len(keep)
        devices.append(d.model_copy(update={"streams": sorted(keep, key=lambda s: s.stream_id)}))
    return facts.model_copy(update={"devices": devices}), left_out


def graphs_document(
    path: str | os.PathLike[str], *, window: str | Window | None = None, nvtx: str | None = None
) -> Answer[NsysGraphsData]:
    """``gpuopt nsys graphs``: facts per CUDA graph, and the GPU activity they leave out."""
    from gpuopt.answer import Answer
    from gpuopt.models.nsys import NsysGraphsData

    report, parsed = _opened(path, window)
    data = NsysGraphsData(
        path=report.path,
        source=report.source,
        selection=selection(parsed, nvtx),
        graphs=report.graphs(window=parsed, nvtx=nvtx),
        coverage=report.coverage("graphs"),
    )
    return Answer(data, _inputs(path), report.unmodeled(), source=report)


#: The name each table's document carries (nsys stats report names where they apply); others keep theirs.
_TABLE_NAMES = {"kernels": "cuda_gpu_kern_sum", "api": "cuda_api_sum"}
#: The fact whose sources and coverage a table reports, where it is not the table's own name.
_COVERAGE_FACTS = {"api": "cuda_api_sum"}
_LONGEST_FIRST = ("duration_ns", "duration_ns:desc", "duration", "duration:desc")


def table_name(table: str, *, per_instance: bool = False) -> str:
    """The name a table carries in its document (``kernels`` -> ``cuda_gpu_kern_sum``)."""
    if table == "nvtx":
        return "nvtx_instances" if per_instance else "nvtx_ranges"
    return _TABLE_NAMES.get(table, table)


def _gap_bounds(table: str, limit: int, sort: str | None, whole: bool) -> dict[str, int | None]:
    """Gaps kept while reading when the document shows only ``limit`` of them: the first ``limit``, or
    with ``sort`` by duration the ``limit`` longest (a heap of that many: memory does not grow)."""
    bounded = table == "gaps" and limit > 0 and not whole
    return {
        "top": limit if bounded and sort in _LONGEST_FIRST else None,
        "first": limit if bounded and sort is None else None,
    }


def table_document(
    files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    table: str,
    *,
    window: str | Window | None = None,
    nvtx: str | None = None,
    per_device: bool = False,
    short_names: bool = False,
    per_instance: bool = False,
    level: str | None = None,
    limit: int = 50,
    sort: str | None = None,
    whole: bool = False,
    readers: Readers | None = None,
) -> Answer[NsysTableData] | Answer[ManyTableData]:
    """One table of one export (``gpuopt nsys kernels|api|mem|nvtx|gaps|comm|stats``), or of several
    files or a glob (one table keyed by ``file``, read by ``readers``: :func:`gpuopt.many.table_document`).

    ``table``: ``kernels``, ``api``, ``memory``, ``nvtx``, ``gaps``, ``comm`` or an ``nsys stats`` report
    name (:data:`STATS_REPORTS`); the options are :meth:`Report.table`'s. The document holds the first
    ``limit`` rows (0: all) in ``sort`` order (``COLUMN`` largest first, ``COLUMN:asc``); the answer's
    table is whole, except for ``gaps``, which keeps only the rows the document shows unless ``whole``.
    """
    from functools import partial

    from gpuopt import many

    name = table_name(table, per_instance=per_instance)
    parsed = _window_of(window)
    options: dict[str, Any] = dict(
        window=parsed, nvtx=nvtx, per_device=per_device, short_names=short_names, per_instance=per_instance
    )
    options.update(level=level, **_gap_bounds(table, limit, sort, whole))
    if not isinstance(files, (str, os.PathLike)):
        paths = [Path(f) for f in files]
        if len(paths) != 1 or many.is_many(paths):  # none: an empty table keyed by file
            read = partial(_read_table, fact=table, **options)
            return many.table_document(name, paths, read, readers=readers, limit=limit, sort=sort)
        files = paths[0]
    return _one_table(files, table, name, options, limit=limit, sort=sort)


def _one_table(
    path: str | os.PathLike[str],
    table: str,
    name: str,
    options: dict[str, Any],
    *,
    limit: int,
    sort: str | None,
) -> Answer[NsysTableData]:
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.nsys import NsysTableData

    report, _ = _opened(path, None)
    frame = sorted_by(report.table(table, **options), sort)
    fact = _COVERAGE_FACTS.get(table, table)
    data = NsysTableData(
        path=report.path,
        source=report.source,
        selection=selection(options["window"], options["nvtx"]),
        report=name,
        not_captured=report.not_captured(fact),
        coverage=report.coverage(fact),
        table=table_data(name, frame, limit),
    )
    return Answer(data, _inputs(path), tables={name: frame}, source=report)


def ranks_document(
    files: Sequence[str | os.PathLike[str]],
    *,
    step: str | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[RanksData]:
    """``gpuopt nsys ranks``: :func:`ranks` of the files (glob patterns expanded) as one document."""
    from gpuopt import many
    from gpuopt import ranks as ranks_

    paths = many.expand([Path(f) for f in files])
    r = ranks(paths, step=step)
    return ranks_.document(r, [i for p in paths for i in _inputs(p)], limit=limit, sort=sort)


def stats_csv(
    path: str | os.PathLike[str], report: str, *, window: str | Window | None = None, nvtx: str | None = None
) -> str:
    """``gpuopt nsys stats --csv``: the report as ``nsys stats --format csv`` prints it, byte for byte,
    with nsys's ``SKIPPED`` line naming ``path`` as given (a byte of a name that is not UTF-8 as ``\\xNN``).
    A file rewritten while it was read is ``file_changed_during_read``."""
    from gpuopt import _identity

    parsed = _window_of(window)
    shown = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    before = _stat_key(path)
    text = open(path).stats_csv(report, window=parsed, nvtx=nvtx, shown_path=shown)
    if before is not None:  # no hash to wait for here, but a rewritten file is still no answer
        _identity.check_unchanged(str(path), before)
    return text


def _stat_key(path: str | os.PathLike[str]) -> Any:
    from gpuopt import _identity

    try:
        return _identity.stat_key(str(path))
    except OSError:
        return None  # the engine reports a missing or unreadable file with its own error


def stats_envelope(
    path: str | os.PathLike[str],
    report: str,
    *,
    window: str | Window | None = None,
    nvtx: str | None = None,
    limit: int = 50,
    schema: str,
) -> str:
    """``gpuopt nsys stats --json`` of one ``.sqlite`` export: the whole envelope (``schema``), made by the
    engine exactly as pydantic would print it, without a DataFrame or a pydantic model (neither polars nor
    pydantic is imported)."""
    from gpuopt import __version__, _identity

    parsed = _window_of(window) or (None, None)
    _identity.identify_in_background(Path(path))  # hashing (on a cache miss) overlaps the engine's work
    native = _native.nsys_open(str(path))
    doc = native.stats_doc(report, parsed[0], parsed[1], nvtx)
    captured = set(native.captured_tables())
    missing = [t for t in SOURCES.get(report, ()) if t not in captured]
    identity = _identity.identity(Path(path))
    facts = (identity["path"], identity["size_bytes"], identity["blake3"], identity["from_cache"])
    return doc.envelope(limit, schema, __version__, missing, facts)
