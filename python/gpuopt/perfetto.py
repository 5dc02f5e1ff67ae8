"""Perfetto traces of nsys exports and Kineto traces, with gpuopt's facts as tracks.

``export_nsys(path, out)`` and ``export_torch(path, out)`` write Perfetto's protobuf trace format
(``perfetto.protos.Trace``), which the Perfetto UI (ui.perfetto.dev) and its trace processor open:
the profile's own timeline (GPU streams, host threads, launch flows) and gpuopt's facts as tracks of
their own (idle gaps by cause, CUDA graph executions, the keys a ``gpuopt profile diff`` flagged).
``references/perfetto.md`` says why this format and what each track holds::

    from gpuopt import perfetto
    perfetto.export_nsys("run.sqlite", "run.pftrace", diff="diff.json")

Other analyses add tracks through ``extra``: a :class:`FactTrack` is a name and its ``(start_ns,
end_ns, label)`` slices in the export's time base (nsys: the export's ns; torch: ns from the trace's
first event, as every ``gpuopt torch`` table prints them).

The documents ``gpuopt torch export perfetto`` and ``gpuopt nsys export perfetto`` print, as
:class:`gpuopt.answer.Answer`: :func:`export_torch_document` and :func:`export_nsys_document`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import _native, nsys, torch_trace
from gpuopt._files import check_output, read_bounded
from gpuopt.errors import InputError
from gpuopt.models.flops import PerfettoExport

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.torch_trace import TorchTrace

__all__ = [
    "FactTrack",
    "Flagged",
    "export_nsys",
    "export_nsys_document",
    "export_torch",
    "export_torch_document",
    "flagged_of_diff",
]

_MAX_DIFF_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class FactTrack:
    """A track of facts another analysis computed (iterations, a critical path): ``slices`` are
    ``(start_ns, end_ns, label)`` in the export's time base."""

    name: str
    slices: Sequence[tuple[int, int, str]] = field(default_factory=tuple)


@dataclass(frozen=True)
class Flagged:
    """The keys a profile diff flagged: its dimension and, per key, the change in percent."""

    by: str
    keys: dict[str, float | None]


_DIFF_SCHEMA = "gpuopt.profile.diff/v2"
_DIMENSIONS = ("kernel", "op", "nvtx", "memcpy")


def _diff_invalid(path: Path, why: str, expected: str) -> InputError:
    return InputError(
        "perfetto_diff_invalid",
        f"{path}: not a `gpuopt profile diff --json` envelope: {why}",
        path=str(path),
        expected=expected,
    )


def flagged_of_diff(path: str | Path, kind: str | None = None) -> Flagged:
    """The flagged keys of a saved ``gpuopt profile diff --json`` envelope (the whole table must be in
    it: ``--limit 0``), checked field by field: its schema, dimension, ``kind`` (``nsys``/``torch``, when
    given: the capture it is drawn on must be of the same kind), and each row's key, flag and change."""
    path = Path(path)
    raw = read_bounded(path, "profile diff JSON", _MAX_DIFF_BYTES)
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise _diff_invalid(path, f"not JSON ({type(e).__name__})", "a JSON document") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    table = data.get("table") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(table, dict) or doc.get("schema") != _DIFF_SCHEMA:
        raise _diff_invalid(path, "its schema or shape", f"{_DIFF_SCHEMA} with data.by and data.table.rows")
    by, rows = data.get("by"), table.get("rows")
    if by not in _DIMENSIONS:
        raise _diff_invalid(path, "data.by", f"one of {', '.join(_DIMENSIONS)}")
    if kind is not None and data.get("kind") != kind:
        raise _diff_invalid(
            path, f"a diff of {data.get('kind')!s:.20} captures", f"a diff of {kind} captures"
        )
    if table.get("truncated") is True:
        raise InputError(
            "perfetto_diff_truncated",
            f"{path}: the diff's table holds fewer rows than it has (--limit); flagged keys could be missing",
            path=str(path),
            expected="a diff saved with --limit 0 (every key)",
        )
    if not isinstance(rows, list) or table.get("truncated") is not False:
        raise _diff_invalid(path, "data.table", "data.table.rows a list, data.table.truncated false")
    keys: dict[str, float | None] = {}
    for i, row in enumerate(rows):
        change = row.get("change_pct") if isinstance(row, dict) else None
        good = (
            isinstance(row, dict)
            and isinstance(row.get("key"), str)
            and isinstance(row.get("flagged"), bool)
            and (change is None or (isinstance(change, (int, float)) and not isinstance(change, bool)))
            and (change is None or math.isfinite(change))
        )
        if not good:
            raise _diff_invalid(
                path, f"row {i}", "rows with a text key, a true/false flagged and a finite or null change_pct"
            )
        if row["flagged"]:
            keys[row["key"]] = None if change is None else float(change)
    return Flagged(by=by, keys=keys)


def _flag_args(diff: Flagged | None) -> tuple[str | None, list[tuple[str, float | None]]]:
    if diff is None:
        return None, []
    return diff.by, [(k, None if v is None else float(v)) for k, v in diff.keys.items()]


def _tracks(extra: Sequence[FactTrack]) -> list[tuple[str, list[tuple[int, int, str]]]]:
    return [(t.name, [(int(a), int(b), str(label)) for a, b, label in t.slices]) for t in extra]


def _result(out: Path, written: bytes, extra: Sequence[FactTrack], diff: Flagged | None) -> PerfettoExport:
    w = json.loads(written)
    return PerfettoExport(
        out=str(out),
        format="perfetto-protobuf",
        fact_tracks=[t.name for t in extra],
        flagged_keys=len(diff.keys) if diff else 0,
        **w,
    )


def export_torch(
    trace: str | Path | TorchTrace,
    out: str | Path,
    *,
    diff: Flagged | None = None,
    extra: Sequence[FactTrack] = (),
    kernel_wait_threshold_ns: int = 30_000,
) -> PerfettoExport:
    """Writes a Perfetto trace of a Kineto trace (a path, or an opened and possibly scoped trace)."""
    opened = torch_trace.open(trace) if isinstance(trace, (str, Path)) else trace
    by, keys = _flag_args(diff)
    check_output(out, reads=opened.files())  # a store's record, a FIFO, the trace: refused before the work
    written = _native.torch_export_perfetto(
        opened._native,
        str(out),
        kernel_wait_threshold_ns=kernel_wait_threshold_ns,
        flagged_by=by,
        flagged=keys,
        extra=_tracks(extra),
    )
    return _result(Path(out), written, extra, diff)


def export_nsys(
    report: str | Path | nsys.Report,
    out: str | Path,
    *,
    window: tuple[int | None, int | None] = (None, None),
    nvtx: str | None = None,
    all_api: bool = False,
    diff: Flagged | None = None,
    extra: Sequence[FactTrack] = (),
) -> PerfettoExport:
    """Writes a Perfetto trace of an nsys export (a path, or a report ``gpuopt.nsys.open`` opened;
    ``all_api``: every CUDA API call, not only those that launched GPU work)."""
    opened = nsys.open(report) if isinstance(report, (str, Path)) else report
    by, keys = _flag_args(diff)
    check_output(out, reads=[opened.path])  # a store's record, a FIFO, the export: refused before the work
    written = _native.nsys_export_perfetto(
        opened._native,
        str(out),
        start=window[0],
        end=window[1],
        nvtx=nvtx,
        all_api=all_api,
        flagged_by=by,
        flagged=keys,
        extra=_tracks(extra),
    )
    return _result(Path(out), written, extra, diff)


# --- documents: what `gpuopt torch|nsys export perfetto` print under `data` ---------------------------


def export_torch_document(
    path: str | Path,
    out: str | Path,
    *,
    steps: str | None = None,
    window: str | None = None,
    diff: str | Path | None = None,
    kernel_wait_threshold_ns: int = torch_trace.DEFAULT_KERNEL_WAIT_NS,
) -> Answer[PerfettoExport]:
    """``gpuopt torch export perfetto``: :func:`export_torch` of a trace (or folder of ranks) restricted
    to ``steps`` or ``window`` (``gpuopt.torch_trace.scope``); ``diff``: a saved profile diff envelope
    whose flagged keys become a track (:func:`flagged_of_diff`)."""
    from gpuopt.answer import Answer

    trace, _ = torch_trace.open_scoped(path, steps=steps, window=window)
    flagged = flagged_of_diff(diff, "torch") if diff is not None else None
    data = export_torch(trace, out, diff=flagged, kernel_wait_threshold_ns=kernel_wait_threshold_ns)
    return Answer(data, trace.inputs(), trace.unmodeled(), source=trace)


def export_nsys_document(
    path: str | Path,
    out: str | Path,
    *,
    window: str | nsys.Window | None = None,
    nvtx: str | None = None,
    all_api: bool = False,
    diff: str | Path | None = None,
) -> Answer[PerfettoExport]:
    """``gpuopt nsys export perfetto``: :func:`export_nsys` of an export (or ``.nsys-rep``) restricted to
    ``window`` (``(start_ns, end_ns)`` or ``--window`` text) and ``nvtx``; ``diff`` as for
    :func:`export_torch_document`."""
    from gpuopt.answer import Answer
    from gpuopt.provenance import file_identity, identify_in_background

    parsed = nsys.parse_window(window) if isinstance(window, str) else window  # fails before reading
    identify_in_background(Path(path))  # hashing (on a cache miss) overlaps the engine's work
    report = nsys.open(path)
    flagged = flagged_of_diff(diff, "nsys") if diff is not None else None
    data = export_nsys(report, out, window=parsed or (None, None), nvtx=nvtx, all_api=all_api, diff=flagged)
    return Answer(data, [file_identity(Path(path))], report.unmodeled(), source=report)
