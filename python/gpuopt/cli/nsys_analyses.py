"""``gpuopt nsys export perfetto``: an nsys export as a Perfetto trace with gpuopt's facts as tracks.

The command joins the ``gpuopt nsys`` group of :mod:`gpuopt.cli.nsys` (the registry loads ``nsys`` from
here, so the group has it whenever it is shown); it is its options and one call to
:func:`gpuopt.perfetto.export_nsys_document`.
"""

from __future__ import annotations

from pathlib import Path

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import output_path
from gpuopt.cli._render import render_export
from gpuopt.cli._tables import answered
from gpuopt.cli.nsys import _file_argument, _selection_options, nsys

__all__ = ["nsys"]


@nsys.group(name="export")
def export() -> None:
    """Write the export in another tool's format (perfetto: the Perfetto UI's own trace format)."""


@export.command(name="perfetto")
@_file_argument
@_selection_options
@click.option("--out", "out", required=True, type=output_path(), help="The trace to write.")
@click.option(
    "--all-api",
    is_flag=True,
    help="Every CUDA API call (default: the calls that launched GPU work, each with a flow to its work).",
)
@click.option(
    "--diff",
    "diff",
    type=click.Path(path_type=Path),
    help="A saved `gpuopt profile diff --json --limit 0` envelope: its flagged keys become a track.",
)
@command("gpuopt.nsys.export/v1")
def perfetto(
    file: Path, window: str | None, nvtx: str | None, out: Path, all_api: bool, diff: Path | None
) -> Outcome:
    """A Perfetto trace (open it in ui.perfetto.dev): GPU streams, launching calls, NVTX, gpuopt's facts.

    Tracks: per GPU stream the kernels, memcpys, memsets (and graph executions of a graph-level
    trace); per host thread the CUDA API calls that launched GPU work (each with a flow to the first
    operation it launched; --all-api: every call) and the NVTX ranges; and gpuopt's facts: idle gaps
    per device and per stream, CUDA graph executions, and with --diff the occurrences of the keys a
    profile diff flagged. Protobuf TracePackets (references/perfetto.md says why).

    \b
    Examples:
      gpuopt nsys export perfetto profile.sqlite --out profile.pftrace
      gpuopt nsys export perfetto profile.sqlite --out p.pftrace --window 7.2s:7.3s --diff diff.json
    """
    from gpuopt import perfetto as lib

    answer = lib.export_nsys_document(file, out, window=window, nvtx=nvtx, all_api=all_api, diff=diff)
    return answered(answer, lambda: render_export(answer.data))
