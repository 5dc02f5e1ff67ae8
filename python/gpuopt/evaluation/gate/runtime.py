"""Runtime facts a gate baseline is bound to, and their differences.

A fact is a name and a text value: the machine (``host.host_id``, ``host.cpu_model``), the NVIDIA driver and
CUDA driver API (``nvidia.*``), each Target GPU's model and configuration (``gpu.<i>.*``), each required
tool's version and hash (the toolkit: ``tool.<name>.*``), Python, and what the driver reported: GPU names,
driver, CUDA runtime and framework versions (``reported.*``). Values are canonical JSON text, so a
difference is a difference of bytes, never of formatting.
"""

from __future__ import annotations

from typing import Any

from gpuopt.evaluation import jsonio
from gpuopt.models.evaluation.driver import ReportedRuntime
from gpuopt.models.evaluation.target import ObservedRuntime
from gpuopt.models.gate import RuntimeDifference

GPU_FIELDS = (
    "name",
    "uuid",
    "architecture",
    "compute_capability",
    "memory_total_bytes",
    "mig_mode_current",
    "compute_mode",
    "power_limit_enforced_w",
    "clocks_applications",
)


def _text(value: Any) -> str | None:
    return None if value is None else jsonio.canonical(value).decode()


def observed_facts(observed: ObservedRuntime) -> dict[str, str | None]:
    """The stable observed facts (gpuopt's own observation of this host, its GPUs and tools)."""
    out: dict[str, str | None] = {
        "host.host_id": _text(observed.host.host_id),
        "host.cpu_model": _text(observed.host.cpu_model),
        "python": _text(observed.python_version),
        "nvidia.driver_version": _text(None if observed.nvidia is None else observed.nvidia.driver_version),
        "nvidia.cuda_driver_version": _text(
            None if observed.nvidia is None else observed.nvidia.cuda_driver_version
        ),
    }
    for i, gpu in enumerate(observed.gpus):
        dumped = gpu.model_dump(mode="json")
        for name in GPU_FIELDS:
            out[f"gpu.{i}.{name}"] = _text(dumped.get(name))
    for tool in observed.required_tools:
        out[f"tool.{tool.name}.version"] = _text(tool.version)
        out[f"tool.{tool.name}.sha256"] = _text(tool.sha256)
    return out


def reported_facts(reported: ReportedRuntime | None) -> dict[str, str | None]:
    """What the driver reported about its runtime (equal on every call of a Target)."""
    if reported is None:
        return {}
    out: dict[str, str | None] = {
        "reported.gpu_names": _text(reported.gpu_names),
        "reported.driver_version": _text(reported.driver_version),
        "reported.cuda_runtime_version": _text(reported.cuda_runtime_version),
    }
    for name, version in sorted(reported.frameworks.items()):
        out[f"reported.frameworks.{name}"] = _text(version)
    return out


GROUPS = ("reported.", "capture.")
"""Facts one side may not have observed at all (no driver call ran, no capture was given): such a group is
compared only when both sides hold it."""


def _group(name: str) -> str:
    return next((g for g in GROUPS if name.startswith(g)), "")


def differences(baseline: dict[str, str | None], current: dict[str, str | None]) -> list[RuntimeDifference]:
    """Facts whose values differ, or that one side has and the other lacks, in name order."""
    shared = {
        g for g in GROUPS if any(_group(k) == g for k in baseline) and any(_group(k) == g for k in current)
    }
    out = []
    for name in sorted(set(baseline) | set(current)):
        group = _group(name)
        if group and group not in shared:
            continue
        b, c = baseline.get(name), current.get(name)
        if b != c or (name in baseline) != (name in current):
            out.append(RuntimeDifference(name=name, baseline=b, current=c))
    return out
