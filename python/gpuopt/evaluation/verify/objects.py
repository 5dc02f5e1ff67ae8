"""The object store against the records: every tree a record references is there, every manifest hashes to
its name, every blob it lists is there at the listed size (``deep``: with the listed hash)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from gpuopt import _native
from gpuopt.evaluation.store import Store
from gpuopt.evaluation.verify.refs import object_references
from gpuopt.models.evaluation.store import Defect


@dataclass
class Objects:
    manifests: int
    blobs: int
    blobs_unreferenced: list[str]
    temp_files: list[str]
    defects: list[Defect] = field(default_factory=list)


def references(models: dict[str, BaseModel]) -> dict[str, dict[str, list[str]]]:
    """digest -> {record path -> the JSON paths in it that reference the tree}."""
    out: dict[str, dict[str, list[str]]] = {}
    for rel, record in models.items():
        for where, digest in object_references(record):
            out.setdefault(digest, {}).setdefault(rel, []).append(where)
    return out


def check_objects(store: Store, models: dict[str, BaseModel], *, deep: bool) -> Objects:
    refs = references(models)
    raw: dict[str, Any] = json.loads(_native.store_verify_objects(str(store.root), sorted(refs), deep))
    out = Objects(raw["manifests"], raw["blobs"], raw["blobs_unreferenced"], raw["temp_files"])
    for d in raw["defects"]:
        users = refs.get(d["manifest"] or "", {})
        record = min(users) if users else None
        out.defects.append(
            Defect(
                code=d["code"], path=d["path"], expected=d["expected"], observed=d["observed"], record=record
            )
        )
    for digest in raw["manifests_missing"]:
        for rel, where in sorted(refs[digest].items()):
            out.defects.append(
                Defect(
                    code="object_missing",
                    path=f"objects/trees/{digest}.json",
                    expected=f"the tree manifest {rel} references at {', '.join(where)}",
                    record=rel,
                )
            )
    return out
