"""``gpuopt doctor``: the environment identity, gathered without a GPU requirement and without changes."""

from __future__ import annotations

from pathlib import Path

from gpuopt import gpus, host, packages, tools
from gpuopt.models.doctor import DoctorReport, GpuoptIdentity, NvidiaIdentity
from gpuopt.provenance import native_build


def collect(*, nvidia_smi_xml: Path | None = None) -> DoctorReport:
    """Observes this machine. With ``nvidia_smi_xml``, GPU facts come from that saved file instead."""
    from gpuopt import __version__

    nvidia: NvidiaIdentity | None
    if nvidia_smi_xml is not None:
        nvidia, note = gpus.from_xml_file(nvidia_smi_xml), None
    else:
        nvidia, note = gpus.observe()
    found_tools = [t for t in (tools.find_tool(name) for name in tools.TOOL_NAMES) if t is not None]
    found_names = {t.name for t in found_tools}
    found_packages, absent_packages = packages.installed_packages()
    return DoctorReport(
        host=host.host_identity(),
        python=host.python_identity(),
        gpuopt=GpuoptIdentity(version=__version__, native=native_build()),
        gpu_present=bool(nvidia and nvidia.gpus),
        gpu_note=note if nvidia is None else (None if nvidia.gpus else "the driver reports no GPU"),
        nvidia=nvidia,
        tools=found_tools,
        tools_absent=[name for name in tools.TOOL_NAMES if name not in found_names],
        packages=found_packages,
        packages_absent=absent_packages,
    )
