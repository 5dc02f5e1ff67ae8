"""The environment identity reported by ``gpuopt doctor``; reused by readiness and every profiler fact."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model


class HostIdentity(Model):
    hostname: str
    host_id: str = Field(description="/etc/machine-id, else the hostname (see host_id_source)")
    host_id_source: Literal["machine-id", "hostname"]
    os: str = Field(description="platform.system(), e.g. Linux")
    kernel: str = Field(description="Kernel release, platform.release()")
    os_release: str | None = Field(description="PRETTY_NAME from /etc/os-release, if present")
    arch: str
    cpu_model: str | None
    cpu_count: int | None
    container_hints: list[str] = Field(
        description="Evidence of a container: /.dockerenv, /run/.containerenv, container cgroup paths"
    )


class PythonIdentity(Model):
    version: str
    implementation: str
    executable: str


class NativeBuild(Model):
    version: str
    build_id: str = Field(description="First 16 hex digits of source_sha256")
    source_sha256: str = Field(description="SHA-256 over the crate's sources and manifests at build time")
    profile: str
    target: str
    rustc: str


class GpuoptIdentity(Model):
    version: str
    native: NativeBuild


class GpuClocks(Model):
    graphics_mhz: int | None
    sm_mhz: int | None
    memory_mhz: int | None


class GpuIdentity(Model):
    index: int
    name: str
    uuid: str
    pci_bus_id: str | None
    architecture: str | None
    compute_capability: str | None = Field(
        description="major.minor; null when the source does not state it (nvidia-smi -q -x does not)"
    )
    memory_total_bytes: int | None
    persistence_mode: bool | None
    mig_mode_current: bool | None
    mig_mode_pending: bool | None
    compute_mode: str | None
    power_limit_enforced_w: float | None
    clocks_max: GpuClocks
    clocks_applications: GpuClocks


NvidiaSource = Literal["nvml", "nvidia-smi", "nvidia-smi-xml-file"]


class NvidiaIdentity(Model):
    source: NvidiaSource
    source_detail: str = Field(description="The library version, command or file the facts were read from")
    driver_version: str
    cuda_driver_version: str | None = Field(description="Highest CUDA version the driver supports")
    gpus: list[GpuIdentity]


class ToolIdentity(Model):
    name: str
    path: str
    found_via: str = Field(description="PATH, pip:<folder>, CUDA_HOME, or a standard install folder")
    version: str | None
    version_text: str | None = Field(description="The line the version was read from")
    sha256: str


class PackageIdentity(Model):
    name: str
    version: str
    cuda_version: str | None = Field(default=None, description="CUDA the package was built for (torch)")


class DoctorReport(Model):
    host: HostIdentity
    python: PythonIdentity
    gpuopt: GpuoptIdentity
    gpu_present: bool
    gpu_note: str | None = Field(description="Why no GPU facts are shown, when none are")
    nvidia: NvidiaIdentity | None
    tools: list[ToolIdentity]
    tools_absent: list[str]
    packages: list[PackageIdentity]
    packages_absent: list[str]
