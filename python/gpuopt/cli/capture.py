"""``gpuopt capture``: profiles captured through the frozen Target's driver."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import RequestFile, RequestSource
from gpuopt.cli.evaluate import lost

if TYPE_CHECKING:
    from gpuopt.models.evaluation.capture import CaptureData


def _render(data: CaptureData) -> str:
    head = "capture (dry run: nothing written)" if data.dry_run is not None else "capture"
    return head + "\n" + "\n".join(f"  {line}" for line in data.summary)


@click.command("capture")
@click.option(
    "--request",
    "request_file",
    required=True,
    type=RequestFile(),
    help="The capture request JSON ('-' = stdin); relative paths are relative to the current folder.",
)
@click.option("--wait", is_flag=True, help="Wait for the result (else return the invocation status at once).")
@click.option(
    "--timeout-s",
    type=click.FloatRange(min=0, min_open=True),
    help="With --wait: stop waiting after this many seconds (default: operation timeout + 120 s).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan, profiler argv and estimate; write nothing.")
@command("gpuopt.capture/v1")
def capture(request_file: RequestSource, wait: bool, timeout_s: float | None, dry_run: bool) -> Outcome:
    """Capture profiles (nsys, ncu or torch) of Target variants through the frozen driver.

    The request names the variants (original, champion, candidate with its experiment), repeats per
    variant (interleaved across variants, same inputs per repeat) and the tool with its options. Each
    call runs the driver under the profiler (torch: the driver's own torch.profiler, a declared
    torch_trace capability); its correctness check runs in the same call and a failed check voids that
    capture. Every report is frozen into the store, bound to the Target, variant, case and profiler
    identity, with the engine's facts beside it. Use the captures in `gpuopt profile diff` as
    cap:INVOCATION/VARIANT. status/cancel work as for evaluations; a missing profiler exits 3.

    \b
    Example request:
      {"root": "root", "tool": "nsys", "plan": {"variants": ["original", "candidate"], "repeats": 5},
       "experiment": {"id": "exp-...", "sha256": "..."}}

    \b
    Examples:
      gpuopt capture --request capture.json --dry-run
      gpuopt capture --request capture.json --wait --json
    """
    from gpuopt.evaluation.capture import operations

    data = operations.run(
        request_file.read(), cwd=Path.cwd(), dry_run=dry_run, wait=wait, timeout_s=timeout_s
    )
    return Outcome(data=data, render=lambda: _render(data), failure=lost(data.submission) if wait else None)
