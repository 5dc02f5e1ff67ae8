"""What ``--repair`` may remove: temp leftovers of interrupted writes, always; blobs no manifest lists, only
when the store otherwise verifies (a missing or damaged manifest or record may be what lists them). Never a
record, a manifest, a listed blob or anything else a record references."""

from __future__ import annotations

from gpuopt.evaluation.store import TEMP_PREFIX, Store
from gpuopt.models.evaluation.store import RepairAction, StoreRepair

RECORD_FOLDERS = ("experiments", "champion/selections", "maps", "champion")
"""Folders whose records are published through a temp file (under the root lock, held shared)."""


def record_temp_files(store: Store) -> list[str]:
    found = []
    for folder in RECORD_FOLDERS:
        base = store.root / folder
        if base.is_dir():
            found += [f"{folder}/{p.name}" for p in base.iterdir() if p.name.startswith(TEMP_PREFIX)]
    return sorted(found)


def run_repair(
    store: Store, temp_files: list[str], unreferenced: list[str], *, clean: bool, dry_run: bool
) -> StoreRepair:
    """Removes (or with ``dry_run`` lists) what may go; the caller holds the root lock exclusively."""
    actions = [RepairAction(path=rel, reason="temp_file") for rel in temp_files]
    if clean:
        actions += [RepairAction(path=rel, reason="unreferenced_blob") for rel in unreferenced]
    removed = actions if dry_run else [a for a in actions if store.remove(a.path)]
    return StoreRepair(
        dry_run=dry_run, removed=removed, kept_unreferenced_blobs=[] if clean else unreferenced
    )
