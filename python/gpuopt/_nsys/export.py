"""A ``.nsys-rep`` exported to SQLite with ``nsys export --type sqlite``, into gpuopt's cache."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt.errors import InputError

if TYPE_CHECKING:
    from gpuopt.models.nsys import NsysExportTool

#: The suffixes of nsys reports, which are exported before they are read.
REPORT_SUFFIXES = (".nsys-rep", ".qdrep")
_EXPORT_TIMEOUT_S = 3600


def is_report(path: Path) -> bool:
    """Whether ``path`` names an nsys report (``.nsys-rep``, ``.qdrep``) rather than a SQLite export."""
    return path.suffix.lower() in REPORT_SUFFIXES


def _cache_dir() -> Path:
    root = os.environ.get("GPUOPT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gpuopt"
    )
    return Path(root) / "nsys"


def export_report(report: Path) -> tuple[Path, NsysExportTool]:
    """Exports a ``.nsys-rep`` with ``nsys export --type sqlite`` into gpuopt's cache (keyed by the
    report's BLAKE3 and the nsys version), never beside the user's file."""
    from gpuopt.models.nsys import NsysExportTool
    from gpuopt.provenance import file_identity
    from gpuopt.tools import require_tool

    tool = require_tool("nsys")
    identity = file_identity(report)
    version = re.sub(r"[^0-9A-Za-z.]", "_", tool.version or "unknown")
    cache = _cache_dir()
    target = cache / f"{identity.blake3[:32]}-nsys{version}.sqlite"
    facts = dict(report_path=str(report), sqlite_path=str(target), nsys_path=tool.path)
    if target.is_file():
        return target, NsysExportTool(**facts, nsys_version=tool.version, cached=True)
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial.sqlite")
    command = [tool.path, "export", "--type", "sqlite", "--force-overwrite", "true"]
    command += ["--output", str(partial), str(report)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, errors="replace", timeout=_EXPORT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(
            "nsys_export_failed", f"nsys export of {report} failed: {exc}", path=str(report)
        ) from exc
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise InputError(
            "nsys_export_failed",
            f"nsys export of {report} exited {done.returncode}",
            path=str(report),
            observed=" | ".join(tail) or None,
        )
    os.replace(partial, target)
    return target, NsysExportTool(**facts, nsys_version=tool.version, cached=False)
