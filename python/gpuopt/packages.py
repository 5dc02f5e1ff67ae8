"""Versions of the Python packages that shape GPU results, read from installed metadata (never imported)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from gpuopt.models.doctor import PackageIdentity

# What gpuopt runs on, then what decides GPU behaviour of the user's workload.
PACKAGES = (
    "numpy",
    "polars",
    "pydantic",
    "click",
    "torch",
    "triton",
    "ncu-report",
    "nvidia-ml-py",
)

_TORCH_CUDA = re.compile(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)


def _torch_cuda(dist: metadata.Distribution) -> str | None:
    # torch/version.py holds `cuda = '13.0'` (or None for CPU builds); importing torch would take seconds.
    try:
        text = dist.read_text("torch/version.py")
    except OSError:
        text = None
    if text is None:
        try:
            text = Path(str(dist.locate_file("torch/version.py"))).read_text(encoding="utf-8")
        except OSError:
            return None
    match = _TORCH_CUDA.search(text)
    return match.group(1) if match else None


def installed_packages() -> tuple[list[PackageIdentity], list[str]]:
    """(found packages with versions, names not installed)."""
    found: list[PackageIdentity] = []
    absent: list[str] = []
    for name in PACKAGES:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            absent.append(name)
            continue
        cuda = _torch_cuda(dist) if name == "torch" else None
        found.append(PackageIdentity(name=name, version=dist.version, cuda_version=cuda))
    return found, absent
