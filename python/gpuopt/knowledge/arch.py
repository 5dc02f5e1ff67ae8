"""Architecture and version strings as cards and identities state them.

``sm_NN`` is a compute capability's generic target; ``sm_NNa`` the architecture-specific one (features
such as wgmma exist only there) and ``sm_NNf`` the family-specific one; they are different strings and
never match each other, but all three have the compute capability NN/10 . NN%10.
"""

from __future__ import annotations

import re

from gpuopt.errors import InputError

#: Compute capabilities NVIDIA has shipped targets for (CUDA 12.9 / 13.0 nvcc --list-gpu-arch and
#: the Programming Guide's compute-capability table).
KNOWN_CC = frozenset({50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121})
_ARCH = re.compile(r"^sm_(\d{2,3})([af]?)$")
_VERSION = re.compile(r"^\d+(\.\d+){0,3}$")


def parse_arch(text: str) -> tuple[int, int, str]:
    """``"sm_90a"`` -> ``(9, 0, "a")``; unknown or malformed strings are exit 2."""
    match = _ARCH.fullmatch(text)
    cc = int(match.group(1)) if match else -1
    suffix = match.group(2) if match else ""
    valid = (
        match is not None and cc in KNOWN_CC and (suffix != "a" or cc >= 90) and (suffix != "f" or cc >= 100)
    )
    if not valid:
        raise InputError(
            "knowledge_arch_unknown",
            f"{text!r} is not an architecture gpuopt knows",
            expected="sm_NN, sm_NNa (NN >= 90) or sm_NNf (NN >= 100) for a shipped compute capability, "
            "e.g. sm_80, sm_90, sm_90a, sm_100a, sm_120",
            observed=text,
        )
    return cc // 10, cc % 10, suffix


def cc_of(text: str) -> tuple[int, int]:
    major, minor, _ = parse_arch(text)
    return major, minor


def arch_from_cc(cc: str) -> str:
    """``"9.0"`` (what doctor and Targets record) -> ``"sm_90"``."""
    major, _, minor = cc.partition(".")
    arch = f"sm_{major}{minor or '0'}"
    parse_arch(arch)
    return arch


def parse_version(text: str, what: str) -> tuple[int, ...]:
    """``"13.0"`` -> ``(13, 0)``; a local build suffix (``2.11.0+cu130``) is dropped."""
    core = text.split("+", 1)[0].strip()
    if not _VERSION.fullmatch(core):
        raise InputError(
            "knowledge_version_invalid",
            f"{what} version {text!r} is not N[.N[.N]]",
            expected="e.g. 13.0 or 2.11.0",
            observed=text,
        )
    return tuple(int(p) for p in core.split("."))
