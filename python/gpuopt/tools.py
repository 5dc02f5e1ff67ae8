"""Find NVIDIA command-line tools and record what they are (path, version, sha256).

Search order: PATH, the pip ``nvidia/*/bin`` folders (the ``[cuda-tools]`` extra), ``CUDA_HOME`` /
``CUDA_PATH``, then the standard install folders of the CUDA toolkit and of Nsight Systems/Compute.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from gpuopt.errors import ToolAbsentError
from gpuopt.models.doctor import ToolIdentity
from gpuopt.provenance import file_sha256

TOOL_NAMES = ("nvcc", "ptxas", "cuobjdump", "nvdisasm", "ncu", "nsys", "compute-sanitizer")

_INSTALL_HINT = {
    "nvcc": "pip install 'gpuopt[cuda-tools]' (NVIDIA's nvidia-cuda-nvcc wheel) or the CUDA toolkit",
    "ptxas": "pip install 'gpuopt[cuda-tools]' (NVIDIA's nvidia-cuda-nvcc wheel) or the CUDA toolkit",
    # CUDA 13's cuobjdump calls nvdisasm to print SASS: both wheels, or a toolkit that has both.
    "cuobjdump": "pip install 'gpuopt[cuda-tools]' (NVIDIA's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm "
    "wheels: CUDA 13's cuobjdump needs nvdisasm beside it) or the CUDA toolkit",
    "nvdisasm": "pip install 'gpuopt[cuda-tools]' (NVIDIA's nvidia-cuda-nvdisasm wheel) or the CUDA toolkit",
    "ncu": "NVIDIA Nsight Compute (part of the CUDA toolkit), with ncu on PATH",
    "nsys": "NVIDIA Nsight Systems, with nsys on PATH",
    "compute-sanitizer": "the CUDA toolkit, with compute-sanitizer on PATH",
}

# nvcc family: "Cuda compilation tools, release 13.0, V13.0.88"; Nsight: "Version 2025.3.1.0 (build ...)".
_VERSION_PATTERNS = (
    re.compile(r"\bV(\d+\.\d+(?:\.\d+)*)"),
    re.compile(r"[Vv]ersion\s+(\d+(?:\.\d+)+)"),
)
_VERSION_TIMEOUT_S = 60


def _pip_bin_dirs() -> Iterator[tuple[Path, str]]:
    for base in sys.path:
        nvidia = Path(base or ".") / "nvidia"
        if not nvidia.is_dir():
            continue
        for bin_dir in sorted(nvidia.glob("*/bin")):
            yield bin_dir, f"pip:{bin_dir.parent.name}"


def _standard_dirs(name: str) -> Iterator[tuple[Path, str]]:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            yield Path(root) / "bin", var
    yield Path("/usr/local/cuda/bin"), "/usr/local/cuda"
    if name == "ncu":
        for found in sorted(glob.glob("/opt/nvidia/nsight-compute/*"), reverse=True):
            yield Path(found), "nsight-compute"
        for found in sorted(glob.glob("/usr/local/cuda/nsight-compute-*"), reverse=True):
            yield Path(found), "nsight-compute"
    if name == "nsys":
        for found in sorted(glob.glob("/opt/nvidia/nsight-systems/*/bin"), reverse=True):
            yield Path(found), "nsight-systems"
        for found in sorted(glob.glob("/usr/local/cuda/nsight-systems-*/bin"), reverse=True):
            yield Path(found), "nsight-systems"
        # Nsight Compute ships an nsys of its own.
        for found in sorted(glob.glob("/opt/nvidia/nsight-compute/*/host/target-linux-x64"), reverse=True):
            yield Path(found), "nsight-compute"


def _candidates(name: str) -> Iterator[tuple[Path, str]]:
    on_path = shutil.which(name)
    if on_path:
        yield Path(on_path), "PATH"
    for folder, via in (*_pip_bin_dirs(), *_standard_dirs(name)):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            yield candidate, via


def parse_version(output: str) -> tuple[str | None, str | None]:
    """The version number and the line it came from, from a tool's ``--version`` output."""
    for pattern in _VERSION_PATTERNS:
        for line in output.splitlines():
            match = pattern.search(line)
            if match:
                return match.group(1), line.strip()
    return None, None


def _version(path: Path) -> tuple[str | None, str | None]:
    try:
        done = subprocess.run(
            [str(path), "--version"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    return parse_version(done.stdout + "\n" + done.stderr)


def identify(name: str, path: Path, via: str) -> ToolIdentity:
    """The identity of the tool ``name`` at ``path`` (resolved): its version and sha256."""
    resolved = path.resolve()
    version, line = _version(resolved)
    return ToolIdentity(
        name=name,
        path=str(resolved),
        found_via=via,
        version=version,
        version_text=line,
        sha256=file_sha256(resolved),
    )


def find_tool(name: str) -> ToolIdentity | None:
    """The first usable ``name`` in the search order, identified; None when it is nowhere."""
    for path, via in _candidates(name):
        return identify(name, path, via)
    return None


def require_tool(name: str) -> ToolIdentity:
    """Like :func:`find_tool`, but an absent tool is a ``ToolAbsentError`` (exit 3) saying what to install."""
    found = find_tool(name)
    if found is None:
        raise ToolAbsentError(
            "tool_absent",
            f"{name} was not found on PATH, in pip nvidia/*/bin folders or standard CUDA/Nsight folders",
            expected=_INSTALL_HINT.get(name, name),
        )
    return found
