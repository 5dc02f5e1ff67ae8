"""Where a view writes its text when asked (``report --out``, ``handoff --out``)."""

from __future__ import annotations

from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Writes ``text`` through ``gpuopt._files.write_output``: a path the OS refuses (``/proc/x``, a
    read-only or missing folder) is ``output_unwritable`` (exit 2), an existing FIFO or device
    ``output_not_a_file``, never an internal error or a blocked writer."""
    from gpuopt._files import write_output

    write_output(path, text.encode("utf-8"))
