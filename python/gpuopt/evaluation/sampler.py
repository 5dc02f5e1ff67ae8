"""The resource sampler of spec §7.1: a thread in the supervisor that appends one tick every ``period_ms`` to
``resources.jsonl``, stamped with ``CLOCK_MONOTONIC`` (the clock of the call windows).

Sources: the host (``/proc/stat``, ``/proc/loadavg``, ``/proc/pressure/cpu``, ``MemAvailable`` and the
invocation's own CPU from its process tree, so foreign CPU = host busy - own) always; per Target GPU NVML
(``libnvidia-ml.so.1`` through ``nvidia-ml-py``, loaded at run time); the ``nvidia_smi`` source of the spec
is not built (``sampler_unavailable``). A value a source cannot read is null, never guessed; what a source
never observes is listed as ``unmodeled`` in the header.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from gpuopt.errors import AbsentError, FormatError
from gpuopt.evaluation import formats
from gpuopt.evaluation.host_signals import (
    HostReader,
    classify_processes,
    pid_visible,
    scan_processes,
    tree,
)
from gpuopt.models.evaluation.resources import GpuProcess, GpuTick, ResourcesHeader, ResourceTick

__all__ = [
    "Sampler",
    "classify_processes",
    "pid_visible",
    "read_resources",
    "resource_rows",
    "scan_processes",
    "tree",
]

RESOURCES = "resources.jsonl"

# NVML clock throttle ("clock event") reason bits, by the names of spec §7.2 (nvml.h).
THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
    0x100: "display_clock_setting",
}


def throttle_names(mask: int) -> list[str]:
    names = [name for bit, name in THROTTLE_BITS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_BITS)
    if unknown:
        names.append(f"unknown_0x{unknown:x}")
    return names


# ---- GPU sources -------------------------------------------------------------------------------------------


class GpuSource(Protocol):
    name: str
    version: str
    unmodeled: list[str]

    def read(self, own_pids: set[int]) -> tuple[dict[str, GpuTick], list[str]]: ...

    def close(self) -> None: ...


def _gpu_tick(**values: Any) -> GpuTick:
    fields: dict[str, Any] = dict.fromkeys(GpuTick.model_fields)
    fields.update(values)
    return GpuTick.model_validate(fields)


class NvmlSource:
    """NVML through ``nvidia-ml-py``: one handle per Target GPU UUID; XID events through an event set."""

    name = "nvml"

    def __init__(self, uuids: list[str]) -> None:
        try:
            import pynvml
        except ImportError:
            raise AbsentError(
                "sampler_unavailable", "the nvml sampler needs nvidia-ml-py (pip install 'gpuopt[nvml]')"
            ) from None
        self.nv = pynvml
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            raise AbsentError("sampler_unavailable", f"NVML could not start: {exc}") from None
        self.handles: dict[str, Any] = {}
        try:
            for uuid in uuids:
                self.handles[uuid] = pynvml.nvmlDeviceGetHandleByUUID(uuid)
        except pynvml.NVMLError as exc:
            pynvml.nvmlShutdown()
            raise AbsentError("gpu_not_found", f"NVML has no GPU {uuid}: {exc}") from None
        from importlib.metadata import version

        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        self.version = f"driver {driver}, nvidia-ml-py {version('nvidia-ml-py')}"
        self.unmodeled: list[str] = []
        self.events: Any = None
        self.xid_ok: set[str] = set()
        try:
            self.events = pynvml.nvmlEventSetCreate()
            for uuid, h in self.handles.items():
                with contextlib.suppress(pynvml.NVMLError):
                    pynvml.nvmlDeviceRegisterEvents(h, pynvml.nvmlEventTypeXidCriticalError, self.events)
                    self.xid_ok.add(uuid)
        except pynvml.NVMLError:
            self.events = None
        if not self.xid_ok:
            self.unmodeled.append("gpu.xid")

    def _opt(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except self.nv.NVMLError:
            return None

    def _xids(self) -> dict[str, int]:
        counts = dict.fromkeys(self.xid_ok, 0)
        if self.events is None:
            return counts
        by_handle = {str(h): u for u, h in self.handles.items()}
        for _ in range(1000):
            try:
                data = self.nv.nvmlEventSetWait_v2(self.events, 0)
            except self.nv.NVMLError:
                break
            uuid = by_handle.get(str(data.device))
            if uuid is None:
                with contextlib.suppress(self.nv.NVMLError):
                    uuid = _text(self.nv.nvmlDeviceGetUUID(data.device))
            if uuid in counts:
                counts[uuid] += 1
        return counts

    def _throttle(self, h: Any) -> list[str] | None:
        nv = self.nv
        getter = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        mask = None if getter is None else self._opt(getter, h)
        return None if mask is None else throttle_names(int(mask))

    def read(self, own_pids: set[int]) -> tuple[dict[str, GpuTick], list[str]]:
        nv = self.nv
        xids = self._xids()
        out: dict[str, GpuTick] = {}
        errors: list[str] = []
        for uuid, h in self.handles.items():
            util = self._opt(nv.nvmlDeviceGetUtilizationRates, h)
            mem = self._opt(nv.nvmlDeviceGetMemoryInfo, h)
            power = self._opt(nv.nvmlDeviceGetPowerUsage, h)
            ecc = self._opt(
                nv.nvmlDeviceGetTotalEccErrors,
                h,
                nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                nv.NVML_VOLATILE_ECC,
            )
            found = self._opt(nv.nvmlDeviceGetComputeRunningProcesses, h)
            procs: list[GpuProcess] | None = None
            foreign: int | None = None
            if found is None:
                errors.append(f"{uuid}: compute processes unreadable")
            else:
                procs, foreign = classify_processes(
                    [(int(p.pid), _memory(p.usedGpuMemory)) for p in found], own_pids, pid_visible
                )
            sm = self._opt(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM)
            mclk = self._opt(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM)
            temp = self._opt(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU)
            out[uuid] = _gpu_tick(
                util_pct=None if util is None else float(util.gpu),
                mem_util_pct=None if util is None else float(util.memory),
                memory_used_bytes=None if mem is None else int(mem.used),
                power_w=None if power is None else power / 1000.0,
                sm_clock_mhz=None if sm is None else float(sm),
                mem_clock_mhz=None if mclk is None else float(mclk),
                temperature_c=None if temp is None else float(temp),
                throttle=self._throttle(h),
                xid=xids.get(uuid),
                ecc_uncorrected=None if ecc is None else int(ecc),
                processes=procs,
                foreign_processes=foreign,
            )
        return out, errors

    def close(self) -> None:
        if self.events is not None:
            with contextlib.suppress(self.nv.NVMLError):
                self.nv.nvmlEventSetFree(self.events)
        with contextlib.suppress(self.nv.NVMLError):
            self.nv.nvmlShutdown()


def _memory(value: Any) -> int | None:
    return None if value is None or not isinstance(value, int) or value < 0 else int(value)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def open_gpu_source(kind: str, uuids: list[str], period_ms: int) -> GpuSource | None:
    """The declared GPU source, or ``None`` when there is no GPU to watch; ``sampler_unavailable`` (exit 3)
    when it cannot start."""
    if not uuids:
        return None
    if kind == "nvml":
        return NvmlSource(uuids)
    if kind == "nvidia_smi":
        raise AbsentError(
            "sampler_unavailable",
            "the nvidia_smi sampler is not built in this version: declare sampler nvml (nvidia-ml-py)",
        )
    raise AbsentError("sampler_unavailable", f"sampler {kind} is not a GPU source")


# ---- the sampler thread ------------------------------------------------------------------------------------


class Sampler:
    """Ticks every ``period_ms`` on an absolute schedule (a late tick never shifts the next ones); a tick
    that is missed entirely leaves a gap that the ``sampler.gap`` signal sees."""

    def __init__(
        self, path: Path, *, kind: str, gpus: list[str], period_ms: int, root_pid: int | None = None
    ) -> None:
        self.path = path
        self.kind = kind
        self.gpus = list(gpus)
        self.period_ms = period_ms
        self.host = HostReader(os.getpid() if root_pid is None else root_pid)
        self.gpu: GpuSource | None = None
        self.ticks: list[ResourceTick] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.failure: str | None = None
        self.header: ResourcesHeader | None = None
        self.started_at = 0.0
        self.out: Any = None

    @property
    def source(self) -> str:
        return "host" if self.gpu is None else self.gpu.name

    @property
    def version(self) -> str:
        if self.gpu is None:
            return f"linux /proc, kernel {os.uname().release}"
        return self.gpu.version

    def start(self) -> ResourcesHeader:
        """Opens the sources and writes the header; raises ``sampler_unavailable`` when a source cannot
        start."""
        self.gpu = open_gpu_source(self.kind, self.gpus, self.period_ms)
        unmodeled = [] if self.gpu is None else list(self.gpu.unmodeled)
        self.header = ResourcesHeader(
            format=formats.RESOURCES,
            source=self.source,  # type: ignore[arg-type]
            version=self.version,
            period_ms=self.period_ms,
            gpus=self.gpus,
            own_cpu="process_tree",
            unmodeled=unmodeled,
        )
        self.out = open(self.path, "ab")  # noqa: SIM115 - the thread closes it
        self._write(self.header.model_dump(mode="json"))
        self.host.read()  # prime the CPU counters: the first tick (one period later) has a delta
        self.started_at = time.monotonic()
        self.thread = threading.Thread(target=self._run, name="gpuopt-sampler", daemon=True)
        self.thread.start()
        return self.header

    def _write(self, value: dict[str, Any]) -> None:
        self.out.write(json.dumps(value, separators=(",", ":"), sort_keys=True).encode() + b"\n")
        self.out.flush()

    def tick(self) -> ResourceTick:
        began_ns, began_epoch = time.monotonic_ns(), time.time()
        host = self.host.read()
        gpus: dict[str, GpuTick] = {}
        errors: list[str] = []
        if self.gpu is not None:
            gpus, errors = self.gpu.read(self.host.own_pids)
        tick = ResourceTick(
            t_mono_ns=began_ns,
            t_epoch=began_epoch,
            read_ms=(time.monotonic_ns() - began_ns) / 1e6,
            host=host,
            gpus=gpus,
            errors=errors,
        )
        self._write(tick.model_dump(mode="json"))
        with self.lock:
            self.ticks.append(tick)
        return tick

    def _run(self) -> None:
        period = self.period_ms / 1000.0
        next_at = self.started_at
        try:
            while True:
                next_at += period
                now = time.monotonic()
                if next_at < now:  # fell behind: skip the missed slots rather than bunching ticks
                    next_at += period * int((now - next_at) / period + 1)
                time.sleep(max(next_at - now, 0.0))
                self.tick()
                if self.stopping.is_set():  # the scheduled tick after the stop request was the last
                    return
        except Exception as exc:  # a dead sampler is a recorded fact (sampler_failed), never silent
            self.failure = f"{type(exc).__name__}: {exc}"[:1000]
        finally:
            with contextlib.suppress(OSError):
                self.out.close()
            if self.gpu is not None:
                self.gpu.close()

    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def snapshot(self, since_ns: int = 0) -> list[ResourceTick]:
        with self.lock:
            return [t for t in self.ticks if t.t_mono_ns >= since_ns]

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ends the thread after its next scheduled tick (the one after the last call)."""
        if self.thread is None or self.stopping.is_set():
            return
        if not self.thread.is_alive() and self.failure is None:
            self.failure = "the sampler thread ended early"
        self.stopping.set()
        self.thread.join(timeout_s)
        if self.thread.is_alive() and self.failure is None:
            self.failure = "the sampler thread did not stop"


def read_resources(path: Path) -> tuple[ResourcesHeader, list[ResourceTick]]:
    """A ``resources.jsonl`` file: its header and ticks (a torn last line, from a killed writer, is
    dropped)."""

    lines = path.read_bytes().split(b"\n")
    if not lines or not lines[0]:
        raise FormatError("resources_invalid", f"{path} has no header", path=str(path))
    header = ResourcesHeader.model_validate_json(lines[0])
    ticks = []
    body = [line for line in lines[1:] if line]
    for i, line in enumerate(body):
        try:
            ticks.append(ResourceTick.model_validate_json(line))
        except ValueError:
            if i == len(body) - 1:
                break
            raise FormatError(
                "resources_invalid", f"{path}: line {i + 2} is not a tick", path=str(path)
            ) from None
    return header, ticks


def resource_rows(data: bytes) -> list[dict[str, Any]]:
    """Ticks as flat rows for ``gpuopt show ID --part resources``: one row per tick and GPU (one per tick
    without GPUs), host columns prefixed ``host_``, GPU columns ``gpu_``."""
    rows: list[dict[str, Any]] = []
    for line in data.split(b"\n")[1:]:
        if not line:
            continue
        try:
            t = ResourceTick.model_validate_json(line)
        except ValueError:
            break  # a torn last line
        base: dict[str, Any] = {"t_mono_ns": t.t_mono_ns, "t_epoch": t.t_epoch}
        base.update({f"host_{k}": v for k, v in t.host.model_dump().items()})
        if not t.gpus:
            rows.append(base)
        for uuid, g in t.gpus.items():
            fields = g.model_dump(exclude={"processes"})
            fields["throttle"] = None if g.throttle is None else ",".join(g.throttle)
            fields["processes"] = None if g.processes is None else len(g.processes)
            rows.append({**base, "gpu": uuid, **{f"gpu_{k}": v for k, v in fields.items()}})
    return rows
