"""Provenance: the identity of input files and of this gpuopt build, attached to every document."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from gpuopt import _native
from gpuopt.models.doctor import NativeBuild
from gpuopt.models.envelope import FileIdentity, Provenance


def file_identity(path: str | Path) -> FileIdentity:
    """Size and SHA-256 of a regular file (hashed natively, without the GIL)."""
    return FileIdentity.model_validate_json(_native.file_identity_json(str(path)))


@lru_cache(maxsize=1)
def native_build() -> NativeBuild:
    """What native code this is: version, source digest, compiler and target."""
    return NativeBuild.model_validate_json(_native.build_info_json())


def provenance(inputs: Iterable[FileIdentity] = ()) -> Provenance:
    from gpuopt import __version__

    return Provenance(
        gpuopt_version=__version__, native_build_id=native_build().build_id, inputs=list(inputs)
    )
