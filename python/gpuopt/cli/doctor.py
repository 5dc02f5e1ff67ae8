"""``gpuopt doctor``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._render import section, table

if TYPE_CHECKING:
    from gpuopt.models.doctor import DoctorReport


def _render(r: DoctorReport) -> str:
    parts = [
        section(
            "Host",
            [
                ("hostname", r.host.hostname),
                ("os", r.host.os_release or r.host.os),
                ("kernel", r.host.kernel),
                ("arch", r.host.arch),
                ("cpu", r.host.cpu_model),
                ("cpu count", r.host.cpu_count),
                ("container hints", ", ".join(r.host.container_hints) or "none"),
            ],
        ),
        section(
            "gpuopt",
            [
                ("version", r.gpuopt.version),
                ("native build", r.gpuopt.native.build_id),
                ("python", f"{r.python.implementation} {r.python.version} ({r.python.executable})"),
            ],
        ),
    ]
    if r.nvidia is None:
        parts.append(f"NVIDIA\n  no GPU: {r.gpu_note}")
    else:
        nv = r.nvidia
        parts.append(
            section(
                "NVIDIA",
                [
                    ("driver", nv.driver_version),
                    ("CUDA (driver)", nv.cuda_driver_version),
                    ("source", f"{nv.source}: {nv.source_detail}"),
                ],
            )
        )
        parts.append(
            table(
                ["#", "name", "uuid", "cc", "memory GiB", "persistence", "MIG", "power W", "max SM MHz"],
                [
                    [
                        g.index,
                        g.name,
                        g.uuid,
                        g.compute_capability,
                        None if g.memory_total_bytes is None else round(g.memory_total_bytes / 2**30, 1),
                        g.persistence_mode,
                        g.mig_mode_current,
                        g.power_limit_enforced_w,
                        g.clocks_max.sm_mhz,
                    ]
                    for g in nv.gpus
                ],
            )
        )
    parts.append(
        "Tools\n"
        + table(
            ["name", "version", "found via", "path"],
            [[t.name, t.version, t.found_via, t.path] for t in r.tools],
        )
    )
    if r.tools_absent:
        parts.append(f"  absent: {', '.join(r.tools_absent)}")
    parts.append(
        "Packages\n"
        + table(["name", "version", "cuda"], [[p.name, p.version, p.cuda_version] for p in r.packages])
    )
    if r.packages_absent:
        parts.append(f"  absent: {', '.join(r.packages_absent)}")
    return "\n\n".join(parts)


@click.command()
@click.option(
    "--nvidia-smi-xml",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Read GPU facts from a saved `nvidia-smi -q -x` file instead of this machine.",
)
@command("gpuopt.doctor/v1")
def doctor(nvidia_smi_xml: Path | None) -> Outcome:
    """Report this machine's identity: OS, CPU, Python, gpuopt, NVIDIA driver and GPUs, CUDA tools, packages.

    Needs no GPU and changes nothing. Without a GPU it says so and exits 0.

    \b
    Examples:
      gpuopt doctor
      gpuopt doctor --json | jq .data.nvidia.gpus
      gpuopt doctor --nvidia-smi-xml saved/nvidia-smi-q.xml
    """
    from gpuopt import doctor as lib
    from gpuopt.provenance import file_identity

    inputs = [file_identity(nvidia_smi_xml)] if nvidia_smi_xml is not None else []
    report = lib.collect(nvidia_smi_xml=nvidia_smi_xml)
    return Outcome(data=report, render=lambda: _render(report), inputs=inputs)
