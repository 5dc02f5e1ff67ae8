"""``gpuopt store verify``: proves that a root holds what its ledger says. The ledger is numbered and
chained; every record matches its newest ledger line and validates; every tree a record references is there
and intact, with its blobs (size; ``deep``: hash); every ledgered invocation's events are numbered, chained
and record its result's hash; the environment key verifies the Target's digests. ``repair`` removes only what
no record can reference (:mod:`gpuopt.evaluation.verify.repair`)."""

from __future__ import annotations

from gpuopt.evaluation.store import Store, scan_records
from gpuopt.evaluation.verify.env import check_env_key
from gpuopt.evaluation.verify.events import check_events
from gpuopt.evaluation.verify.ledger import read_ledger
from gpuopt.evaluation.verify.objects import check_objects
from gpuopt.evaluation.verify.records import check_records
from gpuopt.evaluation.verify.repair import record_temp_files, run_repair
from gpuopt.models.evaluation.store import StoreVerification


def verify(
    store: Store, *, deep: bool = False, repair: bool = False, dry_run: bool = False
) -> StoreVerification:
    """Checks the root (``not_a_store`` for a folder that is none). ``repair`` removes temp files, and blobs
    no manifest lists when nothing else is wrong; with ``dry_run`` it only says what it would remove. Repair
    never waits behind writers (a freeze's blobs are unreferenced until its manifest): while any writer holds
    the root it is ``store_busy``, and writers wait for a running repair."""
    store.require_store()
    with store.lock("root", exclusive=repair, wait=not repair):
        on_disk, misnamed = scan_records(store)
        ledger = read_ledger(store, has_records=bool(on_disk))
        records = check_records(store, ledger.lines, on_disk, misnamed, deep=deep)
        objects = check_objects(store, records.models, deep=deep)
        events_files, event_defects = check_events(store, ledger.lines, records.sha256)
        env_defects = check_env_key(store, records.models.get("target.json"))
        defects = [*ledger.defects, *records.defects, *objects.defects, *event_defects, *env_defects]
        defects.sort(key=lambda d: (d.path, d.code, d.expected))
        temp_files = sorted([*objects.temp_files, *record_temp_files(store)])
        repaired = (
            run_repair(store, temp_files, objects.blobs_unreferenced, clean=not defects, dry_run=dry_run)
            if repair
            else None
        )
    return StoreVerification(
        root=str(store.root),
        deep=deep,
        ok=not defects,
        defects=defects,
        ledger_lines=ledger.count,
        ledger_torn_tail=ledger.torn_tail,
        records=len(on_disk),
        manifests=objects.manifests,
        blobs=objects.blobs,
        events_files=events_files,
        blobs_unreferenced=objects.blobs_unreferenced,
        temp_files=temp_files,
        repair=repaired,
    )
