"""The environment identity reported by ``gpuopt doctor``; reused by readiness and every profiler fact."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model


class HostIdentity(Model):
    hostname: str = Field(description="The host's name (socket.gethostname())")
    host_id: str = Field(description="/etc/machine-id, else the hostname (see host_id_source)")
    host_id_source: Literal["machine-id", "hostname"] = Field(
        description="Where host_id came from: machine-id (/etc/machine-id) or hostname (no machine id "
        "readable)"
    )
    os: str = Field(description="platform.system(), e.g. Linux")
    kernel: str = Field(description="Kernel release, platform.release()")
    os_release: str | None = Field(description="PRETTY_NAME from /etc/os-release, if present")
    arch: str = Field(description="Machine architecture, platform.machine() (x86_64, aarch64, ...)")
    cpu_model: str | None = Field(
        description="CPU model name from /proc/cpuinfo (model name, Model or Hardware), else "
        "platform.processor(); null when neither says"
    )
    cpu_count: int | None = Field(
        description="Logical CPUs of the host (os.cpu_count(), not the process's affinity); null when unknown"
    )
    container_hints: list[str] = Field(
        description="Evidence of a container: /.dockerenv, /run/.containerenv, container cgroup paths"
    )


class PythonIdentity(Model):
    version: str = Field(description="Python version running gpuopt (platform.python_version(), e.g. 3.11.7)")
    implementation: str = Field(description="Python implementation (CPython, PyPy, ...)")
    executable: str = Field(description="Path of the Python interpreter running gpuopt (sys.executable)")


class NativeBuild(Model):
    version: str = Field(description="Version of the native (Rust) crate, from its Cargo manifest")
    build_id: str = Field(description="First 16 hex digits of source_sha256")
    source_sha256: str = Field(description="SHA-256 over the crate's sources and manifests at build time")
    profile: str = Field(description="Cargo build profile of the native module (release, debug)")
    target: str = Field(
        description="Rust target triple the native module was built for (x86_64-unknown-linux-gnu, ...)"
    )
    rustc: str = Field(description="rustc version that compiled the native module (rustc --version)")


class GpuoptIdentity(Model):
    version: str = Field(description="Version of the gpuopt Python package")
    native: NativeBuild = Field(
        description="The native module's build: version, source digest, profile, target and compiler"
    )


class GpuClocks(Model):
    graphics_mhz: int | None = Field(description="Graphics clock (MHz)")
    sm_mhz: int | None = Field(description="SM clock (MHz)")
    memory_mhz: int | None = Field(description="Memory clock (MHz)")


class GpuIdentity(Model):
    index: int = Field(description="nvidia-smi / NVML index")
    name: str = Field(description="Product name")
    uuid: str = Field(description="GPU UUID")
    pci_bus_id: str | None = Field(
        description="PCI bus location as domain:bus:device.function (e.g. 00000000:19:00.0)"
    )
    architecture: str | None = Field(description="Architecture name (Hopper, ...)")
    compute_capability: str | None = Field(
        description="major.minor; null when the source does not state it (nvidia-smi -q -x does not)"
    )
    memory_total_bytes: int | None = Field(description="Device memory (bytes)")
    persistence_mode: bool | None = Field(description="Persistence mode on")
    mig_mode_current: bool | None = Field(description="MIG enabled now")
    mig_mode_pending: bool | None = Field(description="MIG enabled after the next reset")
    compute_mode: str | None = Field(description="Compute mode (Default, Exclusive_Process, ...)")
    power_limit_enforced_w: float | None = Field(
        description="Power limit the driver enforces now, which may be below the board's default (W)"
    )
    clocks_max: GpuClocks = Field(description="Maximum clocks")
    clocks_applications: GpuClocks = Field(description="Application clocks (the defaults work runs at)")


NvidiaSource = Literal["nvml", "nvidia-smi", "nvidia-smi-xml-file"]


class NvidiaIdentity(Model):
    source: NvidiaSource = Field(
        description="Where the identity was read: nvml, nvidia-smi, or an nvidia-smi -q -x file"
    )
    source_detail: str = Field(description="The library version, command or file the facts were read from")
    driver_version: str = Field(description="NVIDIA driver version")
    cuda_driver_version: str | None = Field(description="Highest CUDA version the driver supports")
    gpus: list[GpuIdentity] = Field(description="Every GPU the driver reports, in its index order")


class ToolIdentity(Model):
    name: str = Field(description="Tool name")
    path: str = Field(description="Resolved executable path")
    found_via: str = Field(description="PATH, pip:<folder>, CUDA_HOME, or a standard install folder")
    version: str | None = Field(description="Its version as it reports it")
    version_text: str | None = Field(description="The line the version was read from")
    sha256: str = Field(description="SHA-256 of the executable")


class PackageIdentity(Model):
    name: str = Field(description="Distribution name of the package (numpy, polars, torch, ...)")
    version: str = Field(description="Its installed version, from the distribution's metadata")
    cuda_version: str | None = Field(default=None, description="CUDA the package was built for (torch)")


class DoctorReport(Model):
    host: HostIdentity = Field(description="The host: names, OS, kernel, CPU and container hints")
    python: PythonIdentity = Field(description="The Python interpreter running gpuopt")
    gpuopt: GpuoptIdentity = Field(description="gpuopt's own version and native build")
    gpu_present: bool = Field(
        description="True when the NVIDIA driver (or the nvidia-smi file given) reports at least one GPU"
    )
    gpu_note: str | None = Field(description="Why no GPU facts are shown, when none are")
    nvidia: NvidiaIdentity | None = Field(
        description="The NVIDIA driver and its GPUs; null when neither NVML nor nvidia-smi could be read "
        "(gpu_note says why)"
    )
    tools: list[ToolIdentity] = Field(
        description="The CUDA tools found (nvcc, ptxas, cuobjdump, nvdisasm, ncu, nsys, "
        "compute-sanitizer): path, version and SHA-256"
    )
    tools_absent: list[str] = Field(
        description="Names of the CUDA tools gpuopt looks for that were not found"
    )
    packages: list[PackageIdentity] = Field(
        description="Python packages gpuopt uses or reports that are installed, with their versions"
    )
    packages_absent: list[str] = Field(description="Names of those packages that are not installed")
