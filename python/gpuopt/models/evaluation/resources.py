"""Resource sampling (spec §7): the ticks of ``resources.jsonl``, the idle check and its command data.

A value that a source could not read is ``null`` (missing), never a guessed number; the rules decide what a
missing value means (``on_missing``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gpuopt.models.evaluation.common import Count, Epoch, NonNegative, Record, Text

Pct = Annotated[float, Field(allow_inf_nan=False)]


class GpuProcess(Record):
    pid: Annotated[int, Field(ge=0)] = Field(
        description="The compute process id as NVML or nvidia-smi reports it (may belong to another pid "
        "namespace)"
    )
    memory_bytes: Count | None = Field(
        description="GPU memory the process uses (bytes); null when not reported"
    )
    own: bool | None = Field(
        description="In the invocation's process tree; null when the pid is not visible in this pid namespace"
    )


class GpuTick(Record):
    """One GPU at one tick."""

    util_pct: Pct | None = Field(
        description="GPU utilization: share of the interval a kernel was running (%); null when not read"
    )
    mem_util_pct: Pct | None = Field(
        description="Memory utilization: share of the interval device memory was read or written (%); null "
        "when not read"
    )
    memory_used_bytes: Count | None = Field(description="Device memory in use (bytes); null when not read")
    power_w: Pct | None = Field(description="Power draw (W); null when not read")
    sm_clock_mhz: Pct | None = Field(description="SM clock (MHz); null when not read")
    mem_clock_mhz: Pct | None = Field(description="Memory clock (MHz); null when not read")
    temperature_c: Pct | None = Field(description="GPU temperature (degrees C); null when not read")
    throttle: list[str] | None = Field(description="Active clock throttle reasons, by spec §7.2 names")
    xid: Count | None = Field(description="XID events since the previous tick; null when not observable")
    ecc_uncorrected: Count | None = Field(description="Volatile uncorrected ECC count (a counter)")
    processes: list[GpuProcess] | None = Field(description="Compute processes; null when unreadable")
    foreign_processes: Count | None = Field(
        description="Visible compute processes outside the invocation's tree; null when some pid is not "
        "visible here (container pid namespaces) and none visible is foreign"
    )


class HostTick(Record):
    """The host at one tick; CPU percentages are of all CPUs over the interval since the previous tick."""

    cpu_busy_pct: Pct | None = Field(
        description="Busy share of all CPUs over the interval, from /proc/stat (%); null on the first tick "
        "or when unreadable"
    )
    own_cpu_pct: Pct | None = Field(description="The invocation's own process tree (or cgroup)")
    foreign_cpu_pct: Pct | None = Field(description="Host busy minus own, at least 0")
    load1: Pct | None = Field(description="1-minute load average (/proc/loadavg); null when unreadable")
    cpu_pressure_pct: Pct | None = Field(description="PSI cpu some: stalled share of the interval")
    mem_available_bytes: Count | None = Field(
        description="MemAvailable of /proc/meminfo (bytes); null when unreadable"
    )


class ResourceTick(Record):
    """One line of ``resources.jsonl`` after its header."""

    t_mono_ns: Count = Field(
        description="CLOCK_MONOTONIC (the clock of the call windows) when the tick's reads began"
    )
    t_epoch: Epoch = Field(description="When the tick's reads began (epoch s)")
    read_ms: NonNegative = Field(
        default=0.0,
        description="How long the tick's reads took (NVML can stall while a process creates a CUDA context)",
    )
    host: HostTick = Field(description="The host's CPU, load, pressure and memory at this tick")
    gpus: dict[str, GpuTick] = Field(description="Per Target GPU UUID")
    errors: list[Text] = Field(description="Reads that failed at this tick")


class ResourcesHeader(Record):
    """The first line of ``resources.jsonl``."""

    format: Literal["gpuopt.resources/v1"]
    source: Literal["nvml", "nvidia_smi", "host"]
    version: str = Field(description="The source's version: NVML driver and binding, or nvidia-smi's")
    period_ms: Annotated[int, Field(ge=1)]
    gpus: list[str]
    own_cpu: Literal["cgroup", "process_tree"]
    unmodeled: list[str] = Field(description="Signals this source does not observe (always null)")


IdleStatus = Literal["idle", "busy", "unknown"]


class IdleGpu(Record):
    uuid: str = Field(description="The GPU's UUID")
    ticks: Count = Field(description="Ticks read in the window")
    busy_util_ticks: Count = Field(description="Ticks with utilization above the threshold")
    low_util_ticks: Count = Field(description="Ticks with utilization at or below the threshold")
    process_list_readable: bool = Field(description="Every tick read the process list with every pid visible")
    foreign_processes: list[int] = Field(
        description="PIDs of visible compute processes outside gpuopt's process tree"
    )
    status: IdleStatus = Field(
        description="busy (a foreign process, or utilization above the threshold in > 10 % of ticks), idle "
        "(process list readable, no foreign process, low utilization in >= 90 % of ticks) or "
        "unknown"
    )


class IdleReport(Record):
    """``gpuopt idle-check``: is anything else running on these GPUs (spec §7.4)."""

    status: IdleStatus = Field(
        description="busy if any GPU is busy, idle if every GPU is idle, unknown otherwise"
    )
    detail: Text = Field(description="Per GPU, the status and why, in words")
    source: str = Field(description="Where the ticks came from: nvml or nvidia_smi")
    version: str = Field(description="The source's version (NVML driver and binding, or nvidia-smi's)")
    window_s: float = Field(description="How long the GPUs were watched (s)")
    max_util_pct: float = Field(description="Utilization at or below which a tick counts as low (%)")
    period_ms: int = Field(description="Time between ticks (ms)")
    gpus: list[IdleGpu] = Field(description="Each GPU's tick counts and status")
    ticks: list[ResourceTick] = Field(description="The raw ticks the status was derived from")
