"""Provenance: the identity of input files and of this gpuopt build, attached to every document.

File identity (size and SHA-256) is computed in one place, the native ``identity`` module, through a
cache kept per (device, inode, size, mtime_ns, ctime_ns) in the user's cache folder (``GPUOPT_CACHE_DIR``
overrides it; set it empty for no cache). A command that reads a large file starts its identity with
:func:`identify_in_background` before the engine reads it, so on a first read hashing and the engine's
work overlap; :func:`file_identity` then returns that result, and fails if the file changed between
the start and the end of the command's reading (never an answer mixing two versions).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import _identity, _native
from gpuopt._identity import CACHE_ENV, IdentityCacheWarning, cache_dir, identify_in_background
from gpuopt.models.doctor import NativeBuild
from gpuopt.models.envelope import FileIdentity, Provenance

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "CACHE_ENV",
    "IdentityCacheWarning",
    "cache_dir",
    "file_identities",
    "file_identity",
    "identify_in_background",
    "native_build",
    "provenance",
]


def file_identity(path: str | Path) -> FileIdentity:
    """Size and SHA-256 of a regular file (cached, or hashed natively without the GIL); the result of
    :func:`identify_in_background` when one was started for this path."""
    return FileIdentity.model_validate(_identity.identity(path))


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a regular file's bytes, read now (no cache): where a record names a file by SHA-256
    (store objects, a Target's driver files and tools). Inputs' provenance uses :func:`file_identity`."""
    import hashlib

    from gpuopt._files import open_regular

    h = hashlib.sha256()
    with open_regular(path) as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def file_identities(paths: Iterable[str | Path]) -> pl.DataFrame:
    """``path``, ``size_bytes``, ``blake3`` of many files, hashed in parallel natively."""
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
