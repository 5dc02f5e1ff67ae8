"""The input layer of ``gpuopt profile diff``: one capture file -> a :class:`Capture` (per-key table of one
dimension, NVTX range counts, identity facts). Each kind reads through its own engine (nsys, torch_trace,
ncu), whose tables are already aggregated natively; keys are normalised and re-grouped in polars. A capture
record (``gpuopt capture``) will be one more loader returning the same :class:`Capture`.
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt.errors import InputError, shape_of
from gpuopt.models.profile import CaptureFacts, Dimension, ProfileKind

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.models.nsys import NsysInfo

_SQLITE_MAGIC = b"SQLite format 3\x00"
_NCU_MAGIC = (b"NVR\x00", b"\x28\xb5\x2f\xfd")

#: Key normalisation, applied in this order (documented in references/profile-diff.md).
WHITESPACE = (r"\s+", " ")
NVTX_ID_SUFFIXES = (r",\s*(?:seq|op_id)\s*=\s*\d+", "")
PROFILER_STEP = (r"^ProfilerStep#\d+$", "ProfilerStep#*")


@dataclass(frozen=True)
class Capture:
    """One capture, reduced to what a diff needs: ``table`` has columns key, count, total_ns (one row per
    normalised key); ``ranges`` has name, count, gpu_ns (NVTX / record_function ranges, for ``--marker``
    and ProfilerStep, with the GPU time launched inside them: nsys kernels and graph executions, torch
    every GPU event; empty when the kind has none). ``facts.kernels`` and ``facts.kernel_time_ns`` cover
    every kernel of the capture (and the graph executions of a graph-level nsys trace), whatever ``by``.
    ``detect``: the iterations detected from the launch sequence (:func:`detected`), asked for only when
    no marker counts the steps; None where the kind has no launch sequence or ``--nvtx`` restricts it."""

    facts: CaptureFacts
    table: pl.DataFrame
    ranges: pl.DataFrame
    detect: Callable[[], Detected] | None = None


@dataclass(frozen=True)
class Detected:
    """Iterations detected in a capture (summed over its traces) and the GPU time they hold."""

    steps: int
    gpu_ns: float


def detected(source: Any) -> Detected:
    """:func:`gpuopt.analyses.detected_steps` of an opened nsys report or Kineto trace, summed over its
    traces (the ranks of a Kineto job, as their ProfilerStep ranges are)."""
    from gpuopt import analyses

    found = analyses.detected_steps(source)
    return Detected(sum(d.iterations for d in found), float(sum(d.gpu_time_ns for d in found)))


def detect_kind(path: Path) -> ProfileKind:
    """nsys (SQLite export or .nsys-rep), ncu (.ncu-rep) or torch (Kineto JSON, .json.gz, a folder)."""
    if path.is_dir():
        return "torch"
    from gpuopt._files import read_head

    head = read_head(path, 16)
    if head.startswith(_SQLITE_MAGIC) or path.suffix.lower() in (".nsys-rep", ".qdrep"):
        return "nsys"
    if head[:4] in _NCU_MAGIC or path.suffix.lower() in (".ncu-rep", ".ncu-repz"):
        return "ncu"
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as g:
                head = g.read(16)
        except (OSError, EOFError):
            head = b"(not gzip)"
    if head.lstrip()[:1] == b"{":
        return "torch"
    raise InputError(
        "profile_kind_unknown",
        f"{path} is not a profile gpuopt compares: its first bytes are no profile's header",
        path=str(path),
        expected="an nsys SQLite export or .nsys-rep, a Kineto trace (.json, .json.gz, folder), an .ncu-rep",
        observed=f"the first {shape_of(head[:16])}",
    )


def _unavailable(kind: ProfileKind, by: Dimension, path: Path) -> InputError:
    have = {"nsys": "kernel, nvtx, memcpy", "torch": "kernel, op, nvtx, memcpy", "ncu": "kernel"}[kind]
    return InputError(
        "profile_dimension_unavailable",
        f"{kind} captures have no '{by}' dimension",
        path=str(path),
        expected=have,
        observed=by,
    )


def normalise(frame: pl.DataFrame, by: Dimension) -> pl.DataFrame:
    """key, count, total_ns -> the same, keys normalised and re-grouped (sums), sorted by key."""
    import polars as pl

    key = pl.col("key").cast(pl.String).str.replace_all(*WHITESPACE).str.strip_chars()
    if by == "nvtx":
        key = key.str.replace_all(*NVTX_ID_SUFFIXES).str.replace(*PROFILER_STEP)
    return (
        frame.with_columns(key.alias("key"))
        .group_by("key")
        .agg(pl.col("count").sum().cast(pl.Int64), pl.col("total_ns").sum().cast(pl.Float64))
        .sort("key")
    )


def _ranges(frame: pl.DataFrame) -> pl.DataFrame:
    """name, count, gpu_ns -> normalised NVTX names, summed (gpu_ns: GPU time launched inside)."""
    renamed = frame.rename({"name": "key", "gpu_ns": "total_ns"})
    return normalise(renamed, "nvtx").select(name="key", count="count", gpu_ns="total_ns")


def _facts(
    path: Path,
    kind: ProfileKind,
    table: pl.DataFrame,
    kernels: pl.DataFrame,
    *,
    gpus: list[str],
    driver: str | None,
    tool: str | None,
    options: dict[str, str],
    trace_mode: str | None = None,
) -> CaptureFacts:
    """``kernels``: count, total_ns of every kernel (and graph execution) of the capture."""
    return CaptureFacts(
        path=str(path),
        kind=kind,
        gpus=gpus,
        driver=driver,
        tool=tool,
        options=options,
        cuda_graph_trace=trace_mode,
        keys=table.height,
        events=int(table["count"].sum()),
        total_ns=int(table["total_ns"].sum()),
        kernels=int(kernels["count"].sum()),
        kernel_time_ns=int(kernels["total_ns"].sum()),
        steps=None,
        kernels_per_step=None,
    )


def _nsys_driver(info: NsysInfo) -> str | None:
    """``NvDriverVersion (CUDA CudaDriverVersion)`` of the export (``TARGET_INFO_SYSTEM_ENV``, read by the
    engine into its info); None when the export records neither."""
    nv, cuda = info.driver_version, info.cuda_driver_version
    if not nv and not cuda:
        return None
    return f"{nv or 'unknown'} (CUDA {cuda or 'unknown'})"


def _nsys(path: Path, by: Dimension, nvtx: str | None) -> Capture:
    import polars as pl

    from gpuopt import nsys

    report = nsys.open(path)
    graphs = report.graphs(nvtx=nvtx)
    # A graph-level trace records each graph execution as one row, not its kernels: they are keys of
    # their own (named as `gpuopt nsys` operations name them), so no GPU time is left out.
    executions = pl.DataFrame(
        [
            (f"[CUDA graph {g.graph_id} exec {g.graph_exec_id}]", g.gpu_time.count, g.gpu_time.total_ns)
            for g in graphs.graphs
            if graphs.trace_mode == "graph"
        ],
        schema={"key": pl.String, "count": pl.Int64, "total_ns": pl.Int64},
        orient="row",
    )
    kernels = report.kernels(nvtx=nvtx).select(
        key="name", count=pl.col("instances").cast(pl.Int64), total_ns="total_time_ns"
    )
    kernels = pl.concat([kernels, executions], how="vertical_relaxed")
    if by == "kernel":
        raw = kernels
    elif by == "nvtx":
        raw = report.nvtx(nvtx=nvtx).select(
            key="range",
            count="instances",
            total_ns=pl.col("kernel_inclusive_ns") + pl.col("graph_inclusive_ns"),
        )
    elif by == "memcpy":
        raw = report.memory(nvtx=nvtx).select(key="operation", count="count", total_ns="total_time_ns")
    else:
        raise _unavailable("nsys", by, path)
    table = normalise(raw, by)
    info = report.info()
    options = {o.name: o.value for o in info.capture}
    ranges = _ranges(
        report.nvtx(nvtx=nvtx).select(
            name="range",
            count="instances",
            gpu_ns=pl.col("kernel_inclusive_ns") + pl.col("graph_inclusive_ns"),
        )
    )
    facts = _facts(
        path,
        "nsys",
        table,
        kernels,
        gpus=sorted({g.name for g in info.gpus if g.name}),
        driver=_nsys_driver(info),
        tool=f"nsys {info.export.product_version or 'unknown'} (export schema {info.export.schema_version})",
        options=options,
        trace_mode=report.graph_trace_mode(),
    )
    detect = (
        None if nvtx is not None else functools.cache(lambda: detected(report))
    )  # detection reads the whole export
    return Capture(facts, table, ranges.with_columns(pl.col("count").cast(pl.Int64)), detect)


def _torch(path: Path, by: Dimension) -> Capture:
    import polars as pl

    from gpuopt import torch_trace

    trace = torch_trace.open(path)
    if by == "kernel":
        raw = trace.kernels().select(key="name", count="count", total_ns="total_ns")
    elif by == "op":
        raw = trace.ops().select(key="name", count="count", total_ns="gpu_time_total_ns")
    elif by == "nvtx":
        raw = trace.steps().select(key="name", count=pl.lit(1), total_ns="gpu_time_ns")
    else:
        raw = trace.transfers().select(key="name", count=pl.lit(1), total_ns="duration_ns")
    table = normalise(raw, by)
    headers = [t.header for t in trace.summary().traces]
    ranges = _ranges(trace.steps().select(name="name", count=pl.lit(1), gpu_ns="gpu_time_ns"))
    drivers = sorted({str(h.cuda_driver_version) for h in headers if h.cuda_driver_version is not None})
    schemas = sorted({f"{h.schema_version}/cupti {h.cupti_version}" for h in headers})
    options = {"record_shapes": ",".join(sorted({str(h.record_shapes) for h in headers}))}
    kernels = trace.kernels().select("count", "total_ns")
    facts = _facts(
        path,
        "torch",
        table,
        kernels,
        gpus=sorted({d.name for h in headers for d in h.devices if d.name}),
        driver=",".join(drivers) or None,
        tool=f"kineto schema {', '.join(schemas)}",
        options=options,
    )
    return Capture(facts, table, ranges, functools.cache(lambda: detected(trace)))


def _ncu(path: Path, by: Dimension) -> Capture:
    import polars as pl

    from gpuopt import ncu

    if by != "kernel":
        raise _unavailable("ncu", by, path)
    report = ncu.open(path)
    raw = report.launches.select(
        key=pl.coalesce("kernel_demangled", "kernel_name"), count=pl.lit(1), total_ns="duration_ns"
    ).filter(pl.col("total_ns").is_not_null())
    table = normalise(raw, by)
    info = report.info
    options = {
        name: option.value
        for name, option in (("clock_control", info.clock_control), ("cache_control", info.cache_control))
        if option is not None
    }
    facts = _facts(
        path,
        "ncu",
        table,
        table,
        gpus=sorted(set(info.devices)),
        driver=None,
        tool=f"ncu {info.tool.version or 'unknown'}",
        options=options,
    )
    empty = pl.DataFrame(schema={"name": pl.String, "count": pl.Int64, "gpu_ns": pl.Float64})
    return Capture(facts, table, empty)


def load(path: str | Path, by: Dimension, *, nvtx: str | None = None) -> Capture:
    """Reads one capture file of any supported kind for the ``by`` dimension; ``nvtx`` (nsys only) keeps
    the work launched inside that NVTX range, as ``gpuopt nsys ... --nvtx`` does."""
    p = Path(path)
    kind = detect_kind(p)
    if kind == "nsys":
        return _nsys(p, by, nvtx)
    if nvtx is not None:
        raise InputError(
            "profile_restriction_unavailable",
            f"--nvtx restricts nsys captures; {p} is a {kind} capture",
            path=str(p),
        )
    if kind == "torch":
        return _torch(p, by)
    return _ncu(p, by)
