"""Where a view writes its text when asked (``report --out``, ``handoff --out``)."""

from __future__ import annotations

from pathlib import Path

from gpuopt.errors import InputError


def write_text(path: Path, text: str) -> None:
    """Writes ``text``; a path the OS refuses (``/proc/x``, a read-only or missing folder) is
    ``output_unwritable`` (exit 2), never an internal error."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(
            "output_unwritable",
            f"cannot write {path}: {exc.strerror or exc}",
            path=str(path),
            expected="a writable file path",
        ) from None
