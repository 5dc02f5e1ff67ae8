"""Provenance: the identity of input files and of this gpuopt build, attached to every document."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import _native
from gpuopt.models.doctor import NativeBuild
from gpuopt.models.envelope import FileIdentity, Provenance

if TYPE_CHECKING:
    import polars as pl


def file_identity(path: str | Path) -> FileIdentity:
    """Size and SHA-256 of a regular file (hashed natively, without the GIL)."""
    return FileIdentity.model_validate_json(_native.file_identity_json(str(path)))


def file_identities(paths: Iterable[str | Path]) -> pl.DataFrame:
    """``path``, ``size_bytes``, ``sha256`` of many files, hashed in parallel natively."""
    from gpuopt._tables import to_polars

    return to_polars(_native.file_identities_table([str(p) for p in paths]))


@lru_cache(maxsize=1)
def native_build() -> NativeBuild:
    """What native code this is: version, source digest, compiler and target."""
    return NativeBuild.model_validate_json(_native.build_info_json())


def provenance(inputs: Iterable[FileIdentity] = ()) -> Provenance:
    from gpuopt import __version__

    return Provenance(
        gpuopt_version=__version__, native_build_id=native_build().build_id, inputs=list(inputs)
    )
