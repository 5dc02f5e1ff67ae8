"""An independent reading of a Kineto trace for tests: plain ``json`` with exact decimal times, the host
nesting by a stack per thread, and the call paths and shape records computed the slow, obvious way.

It shares no code with gpuopt; the rules it follows are the documented ones (references/torch-trace.md):
host ranges nest per thread (sorted by start, longest first, annotation < op < python < runtime <
driver); a GPU event belongs to the first runtime call with its correlation id; a call's op is its
innermost enclosing ``cpu_op``, else the first ``cpu_op`` with its External id.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

CPU = {"cpu_op": 1, "Operator": 1, "user_annotation": 0, "python_function": 2}
CALLS = {"cuda_runtime": 3, "Runtime": 3, "cuda_driver": 4}
GPU = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
GRAPH_LAUNCHES = ("cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch")


def ns(value: Decimal) -> int:
    return int((value * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@dataclass
class Host:
    index: int
    kind: str  # "cpu" or "call"
    order: int
    name: str
    thread: tuple[Any, Any]
    start: int
    end: int
    args: dict[str, Any]
    parent: Host | None = None
    children: list[Host] = field(default_factory=list)

    @property
    def dur(self) -> int:
        return self.end - self.start


@dataclass
class Gpu:
    name: str
    kind: str
    start: int
    end: int
    correlation: int | None


@dataclass
class Trace:
    cpu: list[Host]
    calls: list[Host]
    gpu: list[Gpu]
    header: dict[str, Any]


def load(path: Path) -> Trace:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    cpu: list[Host] = []
    calls: list[Host] = []
    gpu: list[Gpu] = []
    for ev in doc["traceEvents"]:
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat", "")
        start = ns(Decimal(ev["ts"]))
        end = start + ns(Decimal(ev["dur"]))
        args = ev.get("args", {})
        if cat in CPU:
            cpu.append(Host(len(cpu), "cpu", CPU[cat], ev["name"], (ev["pid"], ev["tid"]), start, end, args))
            cpu[-1].args["_cat"] = cat
        elif cat in CALLS:
            calls.append(
                Host(len(calls), "call", CALLS[cat], ev["name"], (ev["pid"], ev["tid"]), start, end, args)
            )
        elif cat in GPU:
            gpu.append(Gpu(ev["name"], cat, start, end, args.get("correlation")))
    _nest(cpu + calls)
    header = {k: v for k, v in doc.items() if k != "traceEvents"}
    return Trace(cpu, calls, gpu, header)


def _nest(hosts: list[Host]) -> None:
    by_thread: dict[tuple[Any, Any], list[Host]] = {}
    for h in hosts:
        by_thread.setdefault(h.thread, []).append(h)
    for group in by_thread.values():
        group.sort(key=lambda h: (h.start, -h.end, h.order, h.index))
        stack: list[Host] = []
        for h in group:
            while stack and stack[-1].end < h.end:
                stack.pop()
            if stack:
                h.parent = stack[-1]
                stack[-1].children.append(h)
            stack.append(h)


def cpu_parent(h: Host) -> Host | None:
    """The enclosing CPU range (through a runtime call, for a driver call inside one)."""
    p = h.parent
    while p is not None and p.kind == "call":
        p = p.parent
    return p


def self_ns(h: Host) -> int:
    return h.dur - sum(c.dur for c in h.children)


def see_through(h: Host) -> bool:
    cat = h.args["_cat"]
    return cat == "python_function" or (cat == "user_annotation" and h.name.startswith("ProfilerStep#"))


def path_of_range(h: Host | None) -> tuple[str, ...]:
    names: list[str] = []
    while h is not None:
        if not see_through(h):
            names.append(h.name)
        h = cpu_parent(h)
    return tuple(reversed(names))


def first_op_by_external_id(trace: Trace) -> dict[int, Host]:
    out: dict[int, Host] = {}
    for h in trace.cpu:
        ext = h.args.get("External id")
        if h.args["_cat"] in ("cpu_op", "Operator") and isinstance(ext, int) and ext >= 0:
            out.setdefault(ext, h)
    return out


def call_of_gpu(trace: Trace) -> list[Host | None]:
    by_corr: dict[int, Host] = {}
    for c in trace.calls:
        corr = c.args.get("correlation")
        if isinstance(corr, int) and corr >= 0:
            by_corr.setdefault(corr, c)
    return [by_corr.get(g.correlation) if isinstance(g.correlation, int) else None for g in trace.gpu]


def call_path(trace: Trace, call: Host, ext_ops: dict[int, Host]) -> tuple[str, ...]:
    path = path_of_range(cpu_parent(call))
    if path:
        return path
    ext = call.args.get("External id")
    op = ext_ops.get(ext) if isinstance(ext, int) and ext >= 0 else None
    return path_of_range(op) if op is not None else ()


def paths(trace: Trace) -> dict[tuple[str, ...], dict[str, int]]:
    """Per path (names outermost first): the sums ``gpuopt torch paths`` reports."""
    keys = (
        "instances",
        "cpu_inclusive_ns",
        "cpu_exclusive_ns",
        "gpu_events_inclusive",
        "gpu_inclusive_ns",
        "gpu_events_exclusive",
        "gpu_exclusive_ns",
        "graph_replay_events_inclusive",
        "graph_replay_inclusive_ns",
    )
    out: dict[tuple[str, ...], dict[str, int]] = {}

    def row(p: tuple[str, ...]) -> dict[str, int]:
        return out.setdefault(p, dict.fromkeys(keys, 0))

    for h in trace.cpu:
        if see_through(h):
            continue
        r = row(path_of_range(h))
        r["instances"] += 1
        r["cpu_inclusive_ns"] += h.dur
        r["cpu_exclusive_ns"] += self_ns(h)
    ext_ops = first_op_by_external_id(trace)
    for g, call in zip(trace.gpu, call_of_gpu(trace), strict=True):
        if call is None:
            continue
        p = call_path(trace, call, ext_ops)
        if not p:
            continue
        dur = g.end - g.start
        row(p)["gpu_events_exclusive"] += 1
        row(p)["gpu_exclusive_ns"] += dur
        graph = call.name.startswith(GRAPH_LAUNCHES)
        for depth in range(1, len(p) + 1):
            r = row(p[:depth])
            r["gpu_events_inclusive"] += 1
            r["gpu_inclusive_ns"] += dur
            if graph:
                r["graph_replay_events_inclusive"] += 1
                r["graph_replay_inclusive_ns"] += dur
    return out
