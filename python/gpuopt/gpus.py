"""Observe the NVIDIA driver and GPUs: NVML when ``nvidia-ml-py`` is installed, else ``nvidia-smi``.

No GPU is a fact, not an error: :func:`observe` then returns ``(None, reason)``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from gpuopt import nvsmi
from gpuopt._files import read_bounded
from gpuopt.models.doctor import GpuClocks, GpuIdentity, NvidiaIdentity

_SMI_TIMEOUT_S = 60
# `nvidia-smi -q -x` of an 8-GPU machine is ~100 KiB; the cap keeps /dev/zero or a sparse file out.
_MAX_XML_BYTES = 64 * 1024 * 1024


def from_xml_file(path: Path) -> NvidiaIdentity:
    """GPU identity from a saved ``nvidia-smi -q -x`` file."""
    data = read_bounded(path, "nvidia-smi XML file", _MAX_XML_BYTES)
    return nvsmi.parse_xml(data, source="nvidia-smi-xml-file", source_detail=str(path))


def _nvml_optional(call: Any, *args: Any) -> Any:
    import pynvml

    try:
        return call(*args)
    except pynvml.NVMLError:
        return None


def _nvml_gpu(pynvml: Any, index: int) -> GpuIdentity:
    h = pynvml.nvmlDeviceGetHandleByIndex(index)
    opt = _nvml_optional
    cc = opt(pynvml.nvmlDeviceGetCudaComputeCapability, h)
    mem = opt(pynvml.nvmlDeviceGetMemoryInfo, h)
    mig = opt(pynvml.nvmlDeviceGetMigMode, h)
    power_mw = opt(pynvml.nvmlDeviceGetEnforcedPowerLimit, h)
    persistence = opt(pynvml.nvmlDeviceGetPersistenceMode, h)
    pci = opt(pynvml.nvmlDeviceGetPciInfo, h)
    compute_mode = opt(pynvml.nvmlDeviceGetComputeMode, h)
    mode_names = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}

    def clocks(getter: Any) -> GpuClocks:
        return GpuClocks(
            graphics_mhz=opt(getter, h, pynvml.NVML_CLOCK_GRAPHICS),
            sm_mhz=opt(getter, h, pynvml.NVML_CLOCK_SM),
            memory_mhz=opt(getter, h, pynvml.NVML_CLOCK_MEM),
        )

    bus = None if pci is None else pci.busId
    return GpuIdentity(
        index=index,
        name=_str(pynvml.nvmlDeviceGetName(h)),
        uuid=_str(pynvml.nvmlDeviceGetUUID(h)),
        pci_bus_id=None if bus is None else _str(bus),
        architecture=None,
        compute_capability=None if cc is None else f"{cc[0]}.{cc[1]}",
        memory_total_bytes=None if mem is None else int(mem.total),
        persistence_mode=None if persistence is None else bool(persistence),
        mig_mode_current=None if mig is None else bool(mig[0]),
        mig_mode_pending=None if mig is None else bool(mig[1]),
        compute_mode=None if compute_mode is None else mode_names.get(compute_mode, str(compute_mode)),
        power_limit_enforced_w=None if power_mw is None else power_mw / 1000.0,
        clocks_max=clocks(pynvml.nvmlDeviceGetMaxClockInfo),
        clocks_applications=clocks(pynvml.nvmlDeviceGetApplicationsClock),
    )


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _from_nvml() -> tuple[NvidiaIdentity | None, str | None]:
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return None, f"NVML could not start: {exc}"
    try:
        cuda = _nvml_optional(pynvml.nvmlSystemGetCudaDriverVersion_v2)
        count = pynvml.nvmlDeviceGetCount()
        return (
            NvidiaIdentity(
                source="nvml",
                source_detail=f"nvidia-ml-py {_nvml_version()}",
                driver_version=_str(pynvml.nvmlSystemGetDriverVersion()),
                cuda_driver_version=None if cuda is None else f"{cuda // 1000}.{cuda % 1000 // 10}",
                gpus=[_nvml_gpu(pynvml, i) for i in range(count)],
            ),
            None,
        )
    finally:
        pynvml.nvmlShutdown()


def _nvml_version() -> str:
    from importlib.metadata import version

    return version("nvidia-ml-py")


def _run_smi(smi: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run([smi, *args], capture_output=True, timeout=_SMI_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _from_nvidia_smi() -> tuple[NvidiaIdentity | None, str | None]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "nvidia-smi is not on PATH"
    done = _run_smi(smi, "-q", "-x")
    if done is None or done.returncode != 0:
        detail = "" if done is None else done.stdout.decode(errors="replace").strip()[:300]
        return None, f"nvidia-smi -q -x failed (no driver or no GPU visible) {detail}".strip()
    identity = nvsmi.parse_xml(done.stdout, source="nvidia-smi", source_detail=f"{smi} -q -x")
    caps = _run_smi(smi, "--query-gpu=uuid,compute_cap", "--format=csv,noheader")
    by_uuid: dict[str, str] = {}
    if caps is not None and caps.returncode == 0:  # older drivers lack compute_cap: leave it null
        for line in caps.stdout.decode(errors="replace").splitlines():
            uuid, _, cap = (part.strip() for part in line.partition(","))
            if uuid and cap and cap[0].isdigit():
                by_uuid[uuid] = cap
    return nvsmi.with_compute_capabilities(identity, by_uuid), None


def observe() -> tuple[NvidiaIdentity | None, str | None]:
    """The live driver and GPUs, or ``(None, why not)``. NVML first, then nvidia-smi."""
    identity, nvml_note = _from_nvml()
    if identity is not None:
        return identity, None
    identity, smi_note = _from_nvidia_smi()
    if identity is not None:
        return identity, None
    return None, f"no NVIDIA GPU observed: {nvml_note}; {smi_note}"
