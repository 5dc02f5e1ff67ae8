"""Hashing a file or tree exactly as a freeze would, storing nothing (driver inputs, dry runs)."""

from __future__ import annotations

import json
from pathlib import Path

from gpuopt import _native
from gpuopt.models.evaluation.store import FrozenObject, ScanLimits, TreeManifest


def frozen_object(out: bytes) -> FrozenObject:
    """The native freeze's answer without its manifest."""
    raw = json.loads(out)
    raw.pop("manifest", None)
    return FrozenObject.model_validate(raw)


def hash_tree(source: str | Path, *, exclude: list[str], limits: ScanLimits) -> FrozenObject:
    """Hashes a file or tree like a freeze, storing nothing (driver inputs)."""
    return frozen_object(
        _native.store_freeze(
            str(source), None, list(exclude), limits.max_files, limits.max_total_bytes, limits.max_wall_s
        )
    )


def hash_tree_manifest(
    source: str | Path, *, exclude: list[str], limits: ScanLimits
) -> tuple[FrozenObject, TreeManifest]:
    """Hashes a file or tree like a freeze, storing nothing, and returns its manifest (dry runs)."""
    raw = json.loads(
        _native.store_freeze(
            str(source), None, list(exclude), limits.max_files, limits.max_total_bytes, limits.max_wall_s
        )
    )
    manifest = TreeManifest.model_validate(raw.pop("manifest"))
    return FrozenObject.model_validate(raw), manifest
