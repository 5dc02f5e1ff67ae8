"""``gpuopt idle-check``: is anything else running on these GPUs (spec §7.4)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import FiniteFloatRange
from gpuopt.cli._render import section, table

if TYPE_CHECKING:
    from gpuopt.models.evaluation.resources import IdleReport


def _render(r: IdleReport) -> str:
    head = section(
        "Idle check",
        [
            ("status", r.status),
            ("source", f"{r.source} ({r.version})"),
            ("window s", r.window_s),
            ("max util %", r.max_util_pct),
            ("ticks", len(r.ticks)),
        ],
    )
    rows = [
        [
            g.uuid,
            g.status,
            g.ticks,
            g.busy_util_ticks,
            g.process_list_readable,
            ", ".join(str(p) for p in g.foreign_processes[:10]) or "-",
        ]
        for g in r.gpus
    ]
    return (
        head
        + "\n\n"
        + table(["gpu", "status", "ticks", "util > max", "process list readable", "foreign pids"], rows)
        + f"\n  {r.detail}"
    )


@click.command("idle-check")
@click.option("--gpu", "gpus", multiple=True, required=True, help="A GPU UUID (repeat for several).")
@click.option(
    "--window-s",
    type=FiniteFloatRange(min=0.05, max=600),
    default=None,
    help="Seconds to sample (default 5, or the Target's contamination.idle.window_s with --root).",
)
@click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Use this root's Target thresholds (max_util_pct, sampler, period, window).",
)
@command("gpuopt.idle-check/v1")
def idle_check(gpus: tuple[str, ...], window_s: float | None, root: Path | None) -> Outcome:
    """Sample GPUs for a window: busy (a foreign compute process, or utilization above the threshold in
    more than 10 % of ticks), idle, or unknown (the process list was unreadable and nothing proved busy).

    The raw ticks are returned. Needs NVML (nvidia-ml-py and a driver) or nvidia-smi: exit 3 without them.

    \b
    Examples:
      gpuopt idle-check --gpu GPU-5d7a0c1e-0000-0000-0000-000000000000
      gpuopt idle-check --gpu GPU-5d7a... --window-s 10 --json
      gpuopt idle-check --gpu GPU-5d7a... --root ./root
    """
    from gpuopt.evaluation import idle

    rep = idle.check(list(gpus), window_s=window_s, root=root)
    return Outcome(data=rep, render=lambda: _render(rep))
