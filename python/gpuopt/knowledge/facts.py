"""Facts for the observation rules, read from what the engines emit (nothing is re-computed here).

Each evidence file becomes subjects (a kernel, a function or a device) holding ``SCOPE:FIELD`` facts:

* ``ncu.launch``: numeric columns of ``ncu.open(...).launches``; one subject per ``kernel_function``,
  each fact the mean over that kernel's launches.
* ``sass.function``: numeric columns of ``sass.scan(...).functions``, one subject per function.
* ``ptxas.function`` / ``res_usage.function``: numeric fields of the compiler reports, per function.
* ``nsys.device``: the numeric fields of ``timeline().devices[i]`` (gap histogram, per-stream detail and
  concurrency levels left out) and of its ``launch`` entry under ``launch.``; ``nsys.api``: the rows of
  ``api_summary()`` by name, capture-wide.
* ``torch.device``: the numeric fields of ``summary().traces[r].gpu.devices[d]`` with the trace's
  ``launch_latency.*`` and ``counts.*``; ``torch.op``: numeric columns of ``ops()``, one subject per
  (rank, op name).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gpuopt.errors import InputError, shape_of

EvidenceKind = Literal["ncu", "nsys", "torch", "sass", "ptxas", "res_usage"]
SubjectKind = Literal["kernel", "function", "device", "op"]

#: Which subject each scope's facts describe (a rule's scope must be this).
SCOPE_SUBJECT: dict[str, SubjectKind] = {
    "ncu.launch": "kernel",
    "sass.function": "function",
    "ptxas.function": "function",
    "res_usage.function": "function",
    "nsys.device": "device",
    "nsys.api": "device",
    "torch.device": "device",
    "torch.op": "op",
}
#: Scopes whose facts are rows by name (a condition names the rows with ``rows``).
ROW_SCOPES = frozenset({"nsys.api"})

_NCU_SUFFIXES = (".ncu-rep", ".ncu-repz")
_NSYS_SUFFIXES = (".sqlite", ".nsys-rep", ".qdrep")
_SNIFF_BYTES = 65536


@dataclass
class SubjectFacts:
    evidence: str
    kind: SubjectKind
    name: str
    rows: int
    facts: dict[str, float | None]
    row_facts: dict[str, list[tuple[str, dict[str, float | None]]]] = field(default_factory=dict)


@dataclass
class Evidence:
    path: str
    kind: EvidenceKind
    subjects: list[SubjectFacts]
    trace_shape: dict[str, bool]


def flatten(doc: Mapping[str, Any], prefix: str = "", skip: frozenset[str] = frozenset()) -> dict[str, float]:
    """Numeric leaves of a document as dotted names (lists and booleans are not facts)."""
    out: dict[str, float] = {}
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if key in skip:
            continue
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}.", skip))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def _numeric(frame: Any) -> list[str]:
    return [name for name, dtype in frame.schema.items() if dtype.is_numeric()]


def detect(path: Path) -> EvidenceKind:
    """The kind of an evidence file, by suffix, magic bytes or its first lines; unknown is exit 2."""
    if path.is_dir():
        if any(path.glob("*.json")) or any(path.glob("*.json.gz")):
            return "torch"
        raise _unknown(path, "a folder without Kineto traces")
    from gpuopt._files import regular_size

    regular_size(path)  # missing, a FIFO, a device: their own typed errors
    name = path.name.lower()
    if name.endswith(_NCU_SUFFIXES):
        return "ncu"
    if name.endswith(_NSYS_SUFFIXES):
        return "nsys"
    if name.endswith((".json", ".json.gz")):
        return "torch"
    from gpuopt import sass

    if sass.binary_kind(path) is not None:
        return "sass"
    from gpuopt._files import read_head

    head = read_head(path, _SNIFF_BYTES).decode("utf-8", "replace")
    if "ptxas info" in head:
        return "ptxas"
    if "Resource usage:" in head:
        return "res_usage"
    first = head.lstrip().split("\n", 1)[0]
    if first.startswith('"ID"') or first.startswith("==PROF=="):
        return "ncu"
    if "/*0000*/" in head or "Function : " in head or ".text." in head:
        return "sass"
    raise _unknown(path, f"line 1: {shape_of(first)}")


def _unknown(path: Path, observed: str) -> InputError:
    return InputError(
        "knowledge_evidence_unknown",
        f"{path} is not evidence gpuopt reads",
        path=str(path),
        expected="an ncu report or CSV, nsys export, Kineto trace, SASS listing or cubin, "
        "ptxas -v or cuobjdump -res-usage report",
        observed=observed,
    )


def read(path: Path) -> Evidence:
    kind = detect(path)
    readers = {
        "ncu": _ncu,
        "nsys": _nsys,
        "torch": _torch,
        "sass": _sass,
        "ptxas": _ptxas,
        "res_usage": _res_usage,
    }
    subjects, shape = readers[kind](path)
    return Evidence(str(path), kind, subjects, shape)


def _ncu(path: Path) -> tuple[list[SubjectFacts], dict[str, bool]]:
    import polars as pl

    from gpuopt import ncu

    launches = ncu.open(path).launches
    columns = _numeric(launches)
    grouped = launches.group_by("kernel_function", maintain_order=True).agg(
        pl.len().alias("__rows"), *[pl.col(c).mean() for c in columns]
    )
    subjects = [
        SubjectFacts(
            str(path),
            "kernel",
            str(row["kernel_function"]),
            int(row["__rows"]),
            {f"ncu.launch:{c}": row[c] for c in columns},
        )
        for row in grouped.iter_rows(named=True)
    ]
    return subjects, {}


def _sass(path: Path) -> tuple[list[SubjectFacts], dict[str, bool]]:
    from gpuopt import sass

    functions = sass.scan(os.fspath(path)).functions
    columns = _numeric(functions)
    return [
        SubjectFacts(
            str(path), "function", str(row["function"]), 1, {f"sass.function:{c}": row[c] for c in columns}
        )
        for row in functions.iter_rows(named=True)
    ], {}


def _compiler_rows(path: Path, scope: str, functions: list[Any]) -> list[SubjectFacts]:
    return [
        SubjectFacts(
            str(path),
            "function",
            f.function,
            1,
            {
                f"{scope}:{k}": v
                for k, v in flatten(f.model_dump(), skip=frozenset({"constant_bytes"})).items()
            },
        )
        for f in functions
    ]


def _ptxas(path: Path) -> tuple[list[SubjectFacts], dict[str, bool]]:
    from gpuopt import compiler

    return _compiler_rows(path, "ptxas.function", compiler.ptxas(path).report.functions), {}


def _res_usage(path: Path) -> tuple[list[SubjectFacts], dict[str, bool]]:
    from gpuopt import compiler

    return _compiler_rows(path, "res_usage.function", compiler.res_usage(path).report.functions), {}


_NSYS_SKIP = frozenset({"streams", "histogram", "time_at_level_ns", "device_id"})
_GRAPH_LAUNCH = ("cudaGraphLaunch", "cuGraphLaunch")


def nsys_device_facts(timeline: Any) -> Iterator[tuple[int, dict[str, float]]]:
    launch = {item.device_id: item for item in timeline.launch}
    for device in timeline.devices:
        facts = flatten(device.model_dump(), skip=_NSYS_SKIP)
        if device.device_id in launch:
            facts.update(flatten(launch[device.device_id].model_dump(), "launch.", _NSYS_SKIP))
        yield device.device_id, facts


def _nsys(path: Path) -> tuple[list[SubjectFacts], dict[str, bool]]:
    from gpuopt import nsys

    report = nsys.open(path)
    api = report.api_summary()
    api_columns = _numeric(api)
    api_rows = [(str(r["name"]), {c: r[c] for c in api_columns}) for r in api.iter_rows(named=True)]
    subjects = [
        SubjectFacts(
            str(path),
            "device",
            f"device {device_id}",
            1,
            {f"nsys.device:{k}": v for k, v in facts.items()},
            {"nsys.api": [(n, {f"nsys.api:{k}": v for k, v in row.items()}) for n, row in api_rows]},
        )
        for device_id, facts in nsys_device_facts(report.timeline())
    ]
    names = [str(n) for n in report.kernel_summary()["name"].to_list()]
    info = report.info()
    shape = {
        "has_cuda_graphs": any(n.startswith(_GRAPH_LAUNCH) for n, _ in api_rows)
        or "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" in info.unread_tables,
        "multi_device": len(subjects) > 1,
        "has_nccl": any("nccl" in n.lower() for n in names),
        "has_nvtx": info.nvtx_ranges > 0,
    }
    return subjects, shape


_TORCH_SKIP = frozenset({"kernel_types", "device", "kernel_wait_threshold_ns"})


def _torch(path: Path) -> tuple[list[SubjectFacts], dict[str, bool]]:
    from gpuopt import torch_trace

    trace = torch_trace.open(path)
    summary = trace.summary()
    subjects: list[SubjectFacts] = []
    devices: set[tuple[int, int]] = set()
    nccl = False
    for t in summary.traces:
        if t.gpu is None:
            continue
        nccl = nccl or bool(t.gpu.collectives and t.gpu.collectives.kernels)
        common = flatten(t.counts.model_dump(), "counts.")
        if t.gpu.launch_latency is not None:
            common.update(flatten(t.gpu.launch_latency.model_dump(), "launch_latency."))
        for d in t.gpu.devices:
            devices.add((t.global_rank, d.device))
            facts = {**flatten(d.model_dump(), skip=_TORCH_SKIP), **common}
            subjects.append(
                SubjectFacts(
                    str(path),
                    "device",
                    f"rank {t.global_rank} device {d.device}",
                    1,
                    {f"torch.device:{k}": v for k, v in facts.items()},
                )
            )
    ops = trace.ops()
    op_columns = [c for c in _numeric(ops) if c != "rank"]
    for row in ops.iter_rows(named=True):
        subjects.append(
            SubjectFacts(
                str(path),
                "op",
                f"rank {row['rank']} {row['name']}",
                int(row["count"]),
                {f"torch.op:{c}": row[c] for c in op_columns},
            )
        )
    launches = trace.launches()
    runtime = [str(n) for n in launches["runtime_name"].drop_nulls().unique().to_list()]
    shape = {
        "has_cuda_graphs": any(n.startswith(_GRAPH_LAUNCH) for n in runtime),
        "multi_device": len(devices) > 1,
        "has_nccl": nccl,
    }
    return subjects, shape


def catalog(evidence: list[Evidence], ncu_metrics: Mapping[str, str]) -> dict[str, Any]:
    """The ``facts.json`` document of what ``evidence`` (the real fixtures) emits, sorted."""
    facts: dict[str, set[str]] = {scope: set() for scope in SCOPE_SUBJECT}
    rows: dict[str, set[str]] = {scope: set() for scope in ROW_SCOPES}
    for item in evidence:
        for subject in item.subjects:
            for name in subject.facts:
                scope, fact = name.split(":", 1)
                facts[scope].add(fact)
            for scope, table in subject.row_facts.items():
                for row_name, row in table:
                    rows[scope].add(row_name)
                    facts[scope].update(n.split(":", 1)[1] for n in row)
    engines = {
        "ncu.launch": "gpuopt.ncu.open(...).launches (mean per kernel_function)",
        "sass.function": "gpuopt.sass.scan(...).functions",
        "ptxas.function": "gpuopt.compiler.ptxas(...).report.functions",
        "res_usage.function": "gpuopt.compiler.res_usage(...).report.functions",
        "nsys.device": "gpuopt.nsys.open(...).timeline(): devices[i] and launch[i] (as launch.*)",
        "nsys.api": "gpuopt.nsys.open(...).api_summary() rows by name",
        "torch.device": "gpuopt.torch_trace.open(...).summary(): gpu.devices[d], launch_latency.*, counts.*",
        "torch.op": "gpuopt.torch_trace.open(...).ops() per (rank, name)",
    }
    return {
        "format": "gpuopt.knowledge.facts",
        "scopes": [
            {
                "scope": scope,
                "engine": engines[scope],
                "facts": sorted(facts[scope]),
                "row_names": sorted(rows.get(scope, ())),
            }
            for scope in SCOPE_SUBJECT
        ],
        "ncu_metrics": dict(sorted(ncu_metrics.items())),
    }
