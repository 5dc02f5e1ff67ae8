"""PyTorch profiler (Kineto) traces as DataFrames.

``open(path)`` reads a Chrome-trace JSON file (``.json`` or ``.json.gz``) or a folder of per-rank
traces once, natively and streaming (no Python object per event), links CPU ops to runtime calls to
GPU activity, and returns a :class:`TorchTrace` whose methods build polars DataFrames::

    from gpuopt import torch_trace
    trace = torch_trace.open("trace.json.gz")
    trace.kernels()        # per kernel name: count, total, mean, median, min, max, share of GPU time
    trace.summary()        # identity, counts, links, temporal / idle-by-cause / kernel-type breakdowns

Times are integer nanoseconds, converted exactly from the trace's decimal microseconds and counted
from the trace's first complete event. Tables carry a ``rank`` column (the distributed rank; 0 for a
single trace without ``distributedInfo``).

Every document ``gpuopt torch ...`` prints, as a :class:`gpuopt.answer.Answer` (``.data`` is the document
``--json`` prints under ``data``, ``.table`` the whole table, ``.inputs`` the files' identities):
:func:`summary_document` (``gpuopt torch summary``), :func:`table_document` (``kernels``, ``api``, ``ops``,
``timeline``, ``gaps``, ``steps``, ``launches``, ``graphs``, ``transfers``, ``collectives``, ``comm``,
``paths``, ``kernel_paths``; several paths or a glob give one table keyed by ``file``) and
:func:`ranks_document` (``ranks``); ``gpuopt torch flops`` and ``export perfetto`` answer through
:func:`gpuopt.flops.torch_flops_document` and :func:`gpuopt.perfetto.export_torch_document`. They take
the scope as ``gpuopt torch`` does: ``steps="2:9"`` (ProfilerStep#2..#9) or ``window="1ms:2ms"``::

    torch_trace.table_document("trace.json.gz", "kernels", steps="2:9", limit=20).data.table.rows
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.models.envelope import FileIdentity, UnmodeledItem
from gpuopt.models.torch_trace import TorchSummary, TorchTable, TraceOverview
from gpuopt.ranks import Ranks

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.many import Readers
    from gpuopt.models.many import ManyTableData
    from gpuopt.models.ranks import RanksData

__all__ = [
    "DEFAULT_KERNEL_WAIT_NS",
    "Scope",
    "TorchTrace",
    "open",
    "open_paths",
    "open_scoped",
    "ranks_document",
    "scope",
    "summary_document",
    "table",
    "table_document",
]

#: HTA's ``consecutive_kernel_delay`` default as it acts on µs timestamps (30 µs), in nanoseconds.
DEFAULT_KERNEL_WAIT_NS = 30_000


class TorchTrace:
    """One trace file or folder of rank traces, parsed and linked; each method builds one table."""

    def __init__(self, path: Path, native: _native.TorchTrace) -> None:
        self.path = path
        self._native = native

    def __repr__(self) -> str:
        return f"TorchTrace({str(self.path)!r}, traces={self._native.num_traces})"

    def scoped(
        self, *, steps: tuple[int, int] | None = None, window: tuple[int, int] | None = None
    ) -> TorchTrace:
        """The same traces restricted, before any table is built, to the ``ProfilerStep#N`` ranges with
        ``FIRST <= N <= LAST`` (``steps``; the GPU work their runtime calls launched comes with them) or
        to the events overlapping ``[START, END)`` ns from each trace's origin (``window``). Times stay
        relative to the file's origin. Raises ``InputError`` when a trace has none of those steps."""
        if (steps is None) == (window is None):
            raise ValueError("scoped() takes exactly one of steps= and window=")
        return TorchTrace(self.path, self._native.scoped(steps=steps, window=window))

    def overview(self) -> list[TraceOverview]:
        """Per trace file: path, rank, platform, format and why GPU facts are absent (if they are)."""
        return [TraceOverview.model_validate(item) for item in json.loads(self._native.overview_json())]

    def files(self) -> list[Path]:
        """The trace files read (one per rank)."""
        if self.path.is_file():  # the name as given (a non-UTF-8 name survives; the overview's is text)
            return [self.path]
        return [Path(item.path) for item in self.overview()]

    def inputs(self) -> list[FileIdentity]:
        """Identities of the trace files read (a document's ``provenance.inputs``)."""
        from gpuopt.provenance import file_identity

        return [file_identity(p) for p in self.files()]

    def not_present(self) -> list[str]:
        """``rank N: not present: ...`` for each trace without GPU activity."""
        return [f"rank {o.global_rank}: {o.gpu_absent}" for o in self.overview() if o.gpu_absent]

    def unmodeled(self) -> list[UnmodeledItem]:
        """Content recognised but not turned into facts (categories, phases, fields, args, header keys)."""
        return [UnmodeledItem.model_validate(item) for item in json.loads(self._native.unmodeled_json())]

    def summary(self, *, kernel_wait_threshold_ns: int = DEFAULT_KERNEL_WAIT_NS) -> TorchSummary:
        """Identity, counts, links and GPU timeline breakdowns of every trace."""
        return TorchSummary.model_validate_json(self._native.summary_json(kernel_wait_threshold_ns))

    def timer_resolution_ns(self) -> int:
        """The GPU timer's resolution (ns) the trace's GPU durations show (kernels, memcpys, memsets of
        every rank): the largest grid every distinct duration fits within 1 ns (32 on an H100, though
        Kineto writes µs with three decimals); 1 when no grid shows or fewer than 16 distinct durations
        exist (rust/src/profile/timer.rs)."""
        return int(self._native.timer_resolution_ns())

    def kernels(self) -> pl.DataFrame:
        """Per kernel name and rank: count, total/mean/median/min/max/stddev ns, share of kernel time."""
        return _frame(self._native.kernels())

    def api(self) -> pl.DataFrame:
        """Per runtime/driver call name and rank: count, total/mean/median/min/max/stddev ns, share of
        the rank's call time (the counterpart of nsys' ``cuda_api_sum``)."""
        return _frame(self._native.api())

    def ops(self) -> pl.DataFrame:
        """Per ``cpu_op`` name and rank: CPU total/self time, runtime calls, GPU time it launched."""
        return _frame(self._native.ops())

    def streams(self, *, kernel_wait_threshold_ns: int = DEFAULT_KERNEL_WAIT_NS) -> pl.DataFrame:
        """Per GPU stream: busy, idle (by cause) and gaps within its first-start..last-end window."""
        return _frame(self._native.streams(kernel_wait_threshold_ns))

    def gaps(self, *, kernel_wait_threshold_ns: int = DEFAULT_KERNEL_WAIT_NS) -> pl.DataFrame:
        """Every idle gap on every stream, its cause and the event that ended it."""
        return _frame(self._native.gaps(kernel_wait_threshold_ns))

    def steps(self) -> pl.DataFrame:
        """Per ``record_function`` / ``ProfilerStep#N`` range: CPU time and the GPU work launched in it."""
        return _frame(self._native.steps())

    def launches(self) -> pl.DataFrame:
        """Per GPU event: its runtime call, launch latency, launching op and launch configuration."""
        return _frame(self._native.launches())

    def paths(self) -> pl.DataFrame:
        """Per distinct call path (the ``cpu_op`` and ``record_function`` ranges enclosing a runtime
        call, outermost first; ``ProfilerStep#N`` see-through) and rank: instances, inclusive and
        exclusive CPU and GPU time, and the GPU time of CUDA graph replays launched under it."""
        return _frame(_native.torch_paths(self._native))

    def kernel_paths(self) -> pl.DataFrame:
        """GPU events per (path, launching call, launch kind, name, kind): each kernel's op ancestry;
        a graph replay's kernels belong to the path of the ``cudaGraphLaunch`` that replayed them."""
        return _frame(_native.torch_kernel_paths(self._native))

    def graphs(self) -> pl.DataFrame:
        """One row per CUDA graph (kernels of ``cudaGraphLaunch`` calls, keyed by their kernel names)."""
        return _frame(self._native.graphs())

    def transfers(self) -> pl.DataFrame:
        """Per memcpy/memset: bytes, duration and bandwidth."""
        return _frame(self._native.transfers())

    def collectives(self) -> pl.DataFrame:
        """Per NCCL kernel: collective, dtype, element counts, bytes and overlap with compute."""
        return _frame(self._native.collectives())

    def comm(self) -> pl.DataFrame:
        """Communication vs. compute per rank and device (``stream`` null) and per NCCL stream: time,
        busy unions, overlap and exposed communication (not hidden by compute)."""
        return _frame(self._native.comm())

    def ranks(self) -> Ranks:
        """The traces as the ranks of one job: per-rank step time and collective wait, per collective
        the latest-arriving rank and skew, and the stragglers (:mod:`gpuopt.ranks`)."""
        ranks_, collectives, stragglers, source = self._native.ranks()
        return Ranks(_frame(ranks_), _frame(collectives), _frame(stragglers), source, "trace")

    def table(self, fact: str, *, kernel_wait_threshold_ns: int = DEFAULT_KERNEL_WAIT_NS) -> pl.DataFrame:
        """One table by its method name (``kernels``, ``ops``, ``streams``, ``gaps``, ``steps``, ...)."""
        if fact in ("streams", "gaps"):
            return getattr(self, fact)(kernel_wait_threshold_ns=kernel_wait_threshold_ns)  # type: ignore[no-any-return]
        if fact not in _TABLES:
            raise InputError("torch_table_unknown", f"no table named {fact!r}", expected=", ".join(_TABLES))
        return getattr(self, fact)()  # type: ignore[no-any-return]


_TABLES = (
    "kernels",
    "api",
    "ops",
    "streams",
    "gaps",
    "steps",
    "launches",
    "paths",
    "kernel_paths",
    "graphs",
    "transfers",
    "collectives",
    "comm",
)


def table(path: str | Path, fact: str, *, scope: Scope | None = None, **options: int) -> pl.DataFrame:
    """``open(path).table(fact, **options)``, restricted to ``scope`` first: the per-file function of
    ``gpuopt.many`` (picklable)."""
    return _scoped(open(path), scope).table(fact, **options)


def open_paths(paths: Sequence[str | Path]) -> TorchTrace:
    """Several trace files or folders as the ranks of one job (ranks from ``distributedInfo``, or in the
    order given when a trace lacks it)."""
    first = Path(paths[0]) if len(paths) == 1 else Path(".")
    return TorchTrace(first, _native.torch_trace_open_paths([str(p) for p in paths]))


def _frame(table: _native.ArrowTable) -> pl.DataFrame:
    from gpuopt._tables import to_polars

    return to_polars(table)


def open(path: str | Path) -> TorchTrace:
    """Reads a Kineto trace file (``.json``/``.json.gz``) or a folder of them (one per rank).

    Raises ``gpuopt.errors.InputError`` subclasses (exit 2) for unreadable, truncated or malformed traces.
    """
    path = Path(path)
    return TorchTrace(path, _native.torch_trace_open(str(path)))


# --- documents: what `gpuopt torch ...` prints under `data` ------------------------------------------

_SCOPE_INVALID = "torch_trace_scope_invalid"
_LAST_STEP = 2**63 - 1


@dataclass(frozen=True)
class Scope:
    """A part of every trace: ``ProfilerStep#FIRST..#LAST`` (``steps``) or the events overlapping
    ``[START, END)`` ns from the trace's origin (``window``), with the words a document names it by."""

    steps: tuple[int, int] | None = None
    window: tuple[int, int] | None = None
    #: ``steps 2:9`` or ``window 1ms:2ms``, as given.
    text: str | None = None


def _steps(text: str) -> tuple[int, int]:
    """``"FIRST:LAST"`` -> step numbers (either side may be empty: from the first / to the last step)."""
    sides = [s.strip() for s in text.split(":")]
    if len(sides) != 2 or not all(not s or (s.isascii() and s.isdigit()) for s in sides):
        raise InputError(
            _SCOPE_INVALID,
            f"cannot read {text!r} as steps",
            path="steps",
            expected="FIRST:LAST step numbers, e.g. 2:9 (either side may be empty)",
            observed=text,
        )
    first = int(sides[0]) if sides[0] else 0
    last = int(sides[1]) if sides[1] else _LAST_STEP
    if max(first, last) > _LAST_STEP:
        raise InputError(
            _SCOPE_INVALID,
            f"a step number in {text!r} is larger than gpuopt takes (2^63 - 1)",
            path="steps",
            expected="FIRST:LAST step numbers up to 2^63 - 1",
            observed=text if len(text) <= 60 else f"{len(text)} characters",
        )
    return first, last


def scope(*, steps: str | None = None, window: str | None = None) -> Scope | None:
    """``--steps FIRST:LAST`` or ``--window START:END`` (ns from the trace's origin, or with ns/us/ms/s;
    either side may be empty) as a :class:`Scope`; None with neither; both is an input error."""
    from gpuopt._window import parse_window

    if steps is not None and window is not None:
        raise InputError(
            _SCOPE_INVALID,
            "--steps and --window cannot be combined",
            path="steps",
            expected="one of --steps FIRST:LAST and --window START:END",
            observed=f"--steps {steps} --window {window}",
        )
    if steps is not None:
        return Scope(steps=_steps(steps), text=f"steps {steps}")
    if window is not None:
        start, end = parse_window(window, open_ends=True)
        bounds = (0 if start is None else start, _LAST_STEP if end is None else end)
        return Scope(window=bounds, text=f"window {window}")
    return None


def _scoped(trace: TorchTrace, chosen: Scope | None) -> TorchTrace:
    if chosen is None:
        return trace
    return trace.scoped(steps=chosen.steps, window=chosen.window)


def _opened(path: str | Path, chosen: Scope | None) -> TorchTrace:
    from gpuopt.provenance import identify_in_background

    identify_in_background(path)  # hashing (on a cache miss) overlaps parsing; a folder is hashed after
    return _scoped(open(path), chosen)


def open_scoped(
    path: str | Path, *, steps: str | None = None, window: str | None = None
) -> tuple[TorchTrace, Scope | None]:
    """:func:`open`, restricted to ``steps`` or ``window`` (``--steps`` / ``--window`` text, see
    :func:`scope`), the files hashed while it parses; with the :class:`Scope` (None: the whole trace)."""
    chosen = scope(steps=steps, window=window)
    return _opened(path, chosen), chosen


def summary_document(
    path: str | Path,
    *,
    steps: str | None = None,
    window: str | None = None,
    kernel_wait_threshold_ns: int = DEFAULT_KERNEL_WAIT_NS,
) -> Answer[TorchSummary]:
    """``gpuopt torch summary``: identity, counts, links and GPU breakdowns of every trace of ``path``
    (a file or a folder of rank traces), restricted to ``steps`` or ``window`` (see :func:`scope`)."""
    from gpuopt.answer import Answer

    chosen = scope(steps=steps, window=window)
    trace = _opened(path, chosen)
    doc = trace.summary(kernel_wait_threshold_ns=kernel_wait_threshold_ns)
    doc = doc.model_copy(update={"scope": chosen.text if chosen else None})
    return Answer(doc, trace.inputs(), trace.unmodeled(), source=trace)


#: The tables whose facts are of GPU activity: a trace without any says so (``not_present``).
_GPU_TABLES = frozenset(
    {
        "kernels",
        "streams",
        "gaps",
        "launches",
        "paths",
        "kernel_paths",
        "graphs",
        "transfers",
        "collectives",
        "comm",
    }
)


def table_document(
    paths: str | Path | Sequence[str | Path],
    table: str,
    *,
    steps: str | None = None,
    window: str | None = None,
    kernel_wait_threshold_ns: int = DEFAULT_KERNEL_WAIT_NS,
    limit: int = 50,
    sort: str | None = None,
    readers: Readers | None = None,
) -> Answer[TorchTable] | Answer[ManyTableData]:
    """One table (:meth:`TorchTrace.table`'s names: ``kernels``, ``streams`` for ``gpuopt torch
    timeline``, ...) of one trace or folder of ranks, or of several paths or a glob (one table keyed by
    ``file``, read by ``readers``: :func:`gpuopt.many.table_document`). The document holds the first
    ``limit`` rows (0: all) in ``sort`` order (``COLUMN`` largest first, ``COLUMN:asc``)."""
    from functools import partial

    from gpuopt import many
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer

    chosen = scope(steps=steps, window=window)
    options: dict[str, Any] = {}
    if table in ("streams", "gaps"):
        options["kernel_wait_threshold_ns"] = kernel_wait_threshold_ns
    if not isinstance(paths, (str, Path)):
        if len(paths) != 1 or many.is_many(paths):  # none: an empty table keyed by file
            read = partial(_read_table, fact=table, scope=chosen, **options)
            return many.table_document(table, paths, read, readers=readers, limit=limit, sort=sort)
        paths = paths[0]
    trace = _opened(paths, chosen)
    frame = sorted_by(trace.table(table, **options), sort)
    data = TorchTable(
        table=table_data(table, frame, limit),
        not_present=trace.not_present() if table in _GPU_TABLES else [],
        scope=chosen.text if chosen else None,
    )
    return Answer(data, trace.inputs(), trace.unmodeled(), tables={table: frame}, source=trace)


_read_table = table  # the per-file function, under a name table_document's argument does not shadow


def ranks_document(
    paths: Sequence[str | Path], *, limit: int = 50, sort: str | None = None
) -> Answer[RanksData]:
    """``gpuopt torch ranks``: the traces (files or folders, glob patterns expanded) as the ranks of one
    job (:meth:`TorchTrace.ranks`), as one document."""
    from gpuopt import many
    from gpuopt import ranks as ranks_

    trace = open_paths(many.expand(paths))
    return ranks_.document(trace.ranks(), trace.inputs(), limit=limit, sort=sort)
