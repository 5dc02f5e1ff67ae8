"""Host signals for the resource sampler: the process table (foreign processes and the invocation's own
tree), CPU, pressure, memory and load, read from /proc."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpuopt.models.evaluation.resources import GpuProcess, HostTick

# ---- host --------------------------------------------------------------------------------------------------


@dataclass
class _ProcStat:
    ppid: int
    cpu_ticks: int
    """utime + stime + cutime + cstime: a process's own CPU and that of its reaped children."""


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def scan_processes() -> dict[int, _ProcStat]:
    """Every visible process: parent and CPU ticks (``/proc/<pid>/stat``)."""
    out: dict[int, _ProcStat] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        text = _read(f"/proc/{name}/stat")
        if text is None:
            continue
        fields = text.rpartition(")")[2].split()
        try:  # fields[0] is the state (field 3 of proc(5))
            ppid = int(fields[1])
            cpu = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        except (IndexError, ValueError):
            continue
        out[int(name)] = _ProcStat(ppid=ppid, cpu_ticks=cpu)
    return out


def tree(procs: dict[int, _ProcStat], root: int) -> set[int]:
    """``root`` and its descendants (escaped ones re-parent to the subreaper supervisor, so they stay in)."""
    children: dict[int, list[int]] = {}
    for pid, st in procs.items():
        children.setdefault(st.ppid, []).append(pid)
    seen = {root}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _cpu_totals() -> tuple[int, int] | None:
    """(busy, total) jiffies summed over all CPUs from the first line of ``/proc/stat``."""
    text = _read("/proc/stat")
    if text is None or not text.startswith("cpu "):
        return None
    try:
        values = [int(v) for v in text.split("\n", 1)[0].split()[1:9]]
    except ValueError:
        return None
    if len(values) < 5:
        return None
    total = sum(values)
    idle = values[3] + values[4]
    return total - idle, total


def _pressure_total_us() -> int | None:
    text = _read("/proc/pressure/cpu")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("some "):
            for part in line.split():
                if part.startswith("total="):
                    with contextlib.suppress(ValueError):
                        return int(part[6:])
    return None


def _mem_available() -> int | None:
    text = _read("/proc/meminfo")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            with contextlib.suppress(IndexError, ValueError):
                return int(parts[1]) * 1024
    return None


def _load1() -> float | None:
    text = _read("/proc/loadavg")
    if text is None:
        return None
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        return None


class HostReader:
    """Host signals as deltas since the previous read; the first read only primes the counters."""

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self.prev: tuple[int, int, int, int | None, int] | None = None
        self.own_pids: set[int] = {root_pid}

    def read(self) -> HostTick:
        now_ns = time.monotonic_ns()
        procs = scan_processes()
        self.own_pids = tree(procs, self.root_pid)
        own = sum(procs[p].cpu_ticks for p in self.own_pids if p in procs)
        totals = _cpu_totals()
        pressure = _pressure_total_us()
        busy_pct = own_pct = foreign_pct = pressure_pct = None
        if totals is not None:
            busy, total = totals
            if self.prev is not None and total > self.prev[1]:
                d_total = total - self.prev[1]
                busy_pct = _clamp(100.0 * (busy - self.prev[0]) / d_total)
                own_pct = _clamp(100.0 * max(own - self.prev[2], 0) / d_total)
                foreign_pct = _clamp(busy_pct - own_pct)
            if pressure is not None and self.prev is not None and self.prev[3] is not None:
                d_ns = now_ns - self.prev[4]
                if d_ns > 0:
                    pressure_pct = _clamp(100.0 * (pressure - self.prev[3]) * 1000.0 / d_ns)
            if self.prev is None or busy_pct is not None:  # no jiffy passed: keep the older reference
                self.prev = (busy, total, own, pressure, now_ns)
        return HostTick(
            cpu_busy_pct=busy_pct,
            own_cpu_pct=own_pct,
            foreign_cpu_pct=foreign_pct,
            load1=_load1(),
            cpu_pressure_pct=pressure_pct,
            mem_available_bytes=_mem_available(),
        )


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 100.0)


def classify_processes(
    found: list[tuple[int, int | None]], own_pids: set[int], visible: Callable[[int], bool]
) -> tuple[list[GpuProcess], int | None]:
    """Each compute process as own, foreign or not visible here; the foreign count is null when nothing
    visible is foreign but some pid cannot be resolved (a container's pid namespace)."""
    procs = []
    for pid, memory in found:
        own: bool | None = True if pid in own_pids else (False if visible(pid) else None)
        procs.append(GpuProcess(pid=pid, memory_bytes=memory, own=own))
    foreign = sum(1 for p in procs if p.own is False)
    if foreign == 0 and any(p.own is None for p in procs):
        return procs, None
    return procs, foreign


def pid_visible(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")
