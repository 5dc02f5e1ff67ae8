"""Facts about the host: OS, kernel, CPU, container hints. Read-only, no GPU needed."""

from __future__ import annotations

import os
import platform
import socket
import sys
from pathlib import Path

from gpuopt.models.doctor import HostIdentity, PythonIdentity

_CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")
_CGROUP_HINTS = ("docker", "kubepods", "containerd", "libpod", "lxc")


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _os_release() -> str | None:
    text = _read("/etc/os-release") or ""
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "PRETTY_NAME":
            return value.strip().strip('"') or None
    return None


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware"):
            return value.strip() or None
    return platform.processor() or None


def _container_hints() -> list[str]:
    hints = [marker for marker in _CONTAINER_MARKERS if os.path.exists(marker)]
    cgroup = _read("/proc/1/cgroup") or ""
    hints += [f"/proc/1/cgroup mentions {word}" for word in _CGROUP_HINTS if word in cgroup]
    return hints


def host_identity() -> HostIdentity:
    hostname = socket.gethostname()
    machine_id = (_read("/etc/machine-id") or "").strip()
    return HostIdentity(
        hostname=hostname,
        host_id=machine_id or hostname,
        host_id_source="machine-id" if machine_id else "hostname",
        os=platform.system(),
        kernel=platform.release(),
        os_release=_os_release(),
        arch=platform.machine(),
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count(),
        container_hints=_container_hints(),
    )


def python_identity() -> PythonIdentity:
    return PythonIdentity(
        version=platform.python_version(),
        implementation=platform.python_implementation(),
        executable=sys.executable,
    )
