"""The artifact store: content-addressed trees, create-once records, ledger, reindex, and verify on synthetic
roots (verify against planted defects in a real root: ``test_store_verify.py``)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation.store import Store, hash_tree, reindex
from gpuopt.evaluation.verify import verify
from gpuopt.models.evaluation.store import ScanLimits

LIMITS = ScanLimits()


def _tree(base: Path) -> Path:
    src = base / "src"
    (src / "pkg" / "empty").mkdir(parents=True)
    (src / ".git").mkdir()
    (src / "pkg" / "a.py").write_text("shared\n")
    (src / "pkg" / "b.py").write_text("shared\n")
    (src / "main.py").write_text("print('hi')\n")
    (src / ".git" / "HEAD").write_text("ref: main\n")
    return src


def _store(tmp_path: Path) -> Store:
    """A root with an empty ledger (which makes it a store for ``verify``) and nothing else."""
    root = tmp_path / "root"
    (root / "ledger").mkdir(parents=True)
    (root / "ledger" / "records.jsonl").touch()
    return Store(root)


def _files(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def test_freeze_twice_one_digest_chmod_changes_it_excluded_path_does_not(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    store = _store(tmp_path)
    first = store.freeze(src, exclude=[".git/**"], limits=LIMITS)
    again = store.freeze(src, exclude=[".git/**"], limits=LIMITS)
    assert first.digest == again.digest
    assert (first.file_count, first.blobs_new, again.blobs_new) == (3, 2, 0)  # a.py and b.py share one blob
    manifest = store.manifest(first.digest)
    assert [e.path for e in manifest.entries] == ["main.py", "pkg", "pkg/a.py", "pkg/b.py", "pkg/empty"]
    (src / ".git" / "HEAD").write_text("ref: other\n")
    assert store.freeze(src, exclude=[".git/**"], limits=LIMITS).digest == first.digest
    (src / "main.py").chmod(0o600)
    assert store.freeze(src, exclude=[".git/**"], limits=LIMITS).digest != first.digest
    assert hash_tree(src, exclude=[".git/**"], limits=LIMITS).digest != first.digest


def test_shared_file_is_one_blob(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    store = _store(tmp_path)
    store.freeze(src, exclude=[".git/**"], limits=LIMITS)
    blobs = [p for p in (store.root / "objects" / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) == 2
    assert all(p.stat().st_mode & 0o777 == 0o444 for p in blobs)


def _nothing_published(store: Store) -> None:
    trees = store.root / "objects" / "trees"
    assert not trees.exists() or not any(trees.iterdir())


def test_symlink_is_refused_and_nothing_published(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    (src / "pkg" / "link.py").symlink_to(src / "main.py")
    store = _store(tmp_path)
    with pytest.raises(InputError) as err:
        store.freeze(src, exclude=[], limits=LIMITS)
    assert (err.value.code, err.value.path) == ("object_symlink", "pkg/link.py")
    _nothing_published(store)


def test_fifo_is_refused(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    os.mkfifo(src / "pipe")
    store = _store(tmp_path)
    with pytest.raises(InputError) as err:
        store.freeze(src, exclude=[], limits=LIMITS)
    assert err.value.code == "object_special_file"
    _nothing_published(store)


def test_file_modified_while_hashed_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "big"
    src.mkdir()
    target = src / "data.bin"
    target.write_bytes(os.urandom(1 << 20) * 16)
    stop = threading.Event()

    def touch() -> None:
        with open(target, "ab") as f:
            while not stop.is_set():
                f.write(b"x")
                f.flush()
                time.sleep(0.001)

    writer = threading.Thread(target=touch)
    writer.start()
    try:
        store = _store(tmp_path)
        with pytest.raises(InputError) as err:
            store.freeze(src, exclude=[], limits=LIMITS)
    finally:
        stop.set()
        writer.join()
    assert err.value.code == "object_changed_during_read"
    _nothing_published(store)


def test_tree_over_max_files_is_refused_with_limit_and_count(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    store = _store(tmp_path)
    with pytest.raises(InputError) as err:
        store.freeze(src, exclude=[], limits=ScanLimits(max_files=3))
    assert (err.value.code, err.value.expected, err.value.observed) == (
        "object_limit_exceeded",
        "3",
        "4 files",
    )
    with pytest.raises(InputError) as err:
        store.freeze(src, exclude=[], limits=ScanLimits(max_total_bytes=10))
    assert err.value.code == "object_limit_exceeded"
    _nothing_published(store)


def test_materialize_verifies_and_refuses_existing_destination(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    store = _store(tmp_path)
    frozen = store.freeze(src, exclude=[".git/**"], limits=LIMITS)
    dest = tmp_path / "copy"
    store.materialize(frozen.digest, dest)
    assert (dest / "pkg" / "a.py").read_text() == "shared\n"
    assert (dest / "pkg" / "empty").is_dir()
    assert not (dest / ".git").exists()
    assert (dest / "main.py").stat().st_mode & 0o777 == (src / "main.py").stat().st_mode & 0o777
    assert store.freeze(dest, exclude=[".git/**"], limits=LIMITS).digest == frozen.digest
    with pytest.raises(InputError) as err:
        store.materialize(frozen.digest, dest)
    assert err.value.code == "destination_exists"


def test_altered_blob_is_object_corrupt_and_destination_absent(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    store = _store(tmp_path)
    frozen = store.freeze(src, exclude=[], limits=LIMITS)
    entry = next(e for e in store.manifest(frozen.digest).entries if e.path == "main.py")
    blob = store.root / "objects" / "blobs" / entry.sha256[:2] / entry.sha256  # type: ignore[union-attr]
    blob.chmod(0o644)
    blob.write_text("print('tampered')\n")
    dest = tmp_path / "copy"
    with pytest.raises(InputError) as err:
        store.materialize(frozen.digest, dest)
    assert err.value.code == "object_corrupt"
    assert entry.sha256 in err.value.message  # type: ignore[union-attr]
    assert not dest.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []
    report = verify(store, deep=True)
    blob_rel = f"objects/blobs/{entry.sha256[:2]}/{entry.sha256}"  # type: ignore[union-attr]
    assert [(d.code, d.path) for d in report.defects] == [("blob_size_mismatch", blob_rel)]
    assert not report.ok
    blob.write_text("print('HI')\n")  # the same size: only a deep verify sees it
    assert verify(store).ok
    assert [(d.code, d.path) for d in verify(store, deep=True).defects] == [("blob_corrupt", blob_rel)]


def test_records_are_create_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = store.write_record("experiments/exp-" + "a" * 64 + ".json", {"b": 1, "a": 2})
    assert first.created
    assert (store.root / first.rel).read_bytes() == b'{"a":2,"b":1}\n'
    assert not store.write_record(first.rel, {"a": 2, "b": 1}).created
    with pytest.raises(InputError) as err:
        store.write_record(first.rel, {"a": 3})
    assert err.value.code == "record_conflict"


@pytest.mark.parametrize("bad", ["../escape.json", "a/../../x", "/etc/passwd", "link/x.json", "a//b"])
def test_unsafe_paths_are_refused(tmp_path: Path, bad: str) -> None:
    store = _store(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (store.root / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError) as err:
        store.write_record(bad, {})
    assert err.value.code == "path_unsafe"
    assert not any((tmp_path / "elsewhere").iterdir())


@pytest.mark.parametrize(
    "bad", ["inv-../../x", "inv-0123", "sel-" + "g" * 32, "INV-" + "0" * 32, "inv-" + "0" * 32 + "/x"]
)
def test_ids_are_validated_before_any_path(bad: str) -> None:
    kind = "selection" if bad.startswith("sel") else "invocation"
    with pytest.raises(InputError) as err:
        _native.validate_id(kind, bad)
    assert err.value.code == "path_unsafe"


def test_cli_status_with_a_traversal_id_is_path_unsafe(tmp_path: Path) -> None:
    store = _store(tmp_path)
    run = gpuopt("status", str(store.root), "inv-../../etc", "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "path_unsafe"


def _published_store(tmp_path: Path) -> Store:
    store = _store(tmp_path)
    for i in range(3):
        pub = store.write_record(
            f"experiments/exp-{i:064x}.json", {"id": f"exp-{i:064x}", "mechanism": f"m{i}"}
        )
        store.ledger_append("experiment", f"exp-{i:064x}", pub, {"mechanism": f"m{i}"})
    return store


def test_torn_ledger_line_is_ignored_then_cut_by_the_next_writer(tmp_path: Path) -> None:
    store = _published_store(tmp_path)
    ledger = store.root / "ledger" / "records.jsonl"
    with open(ledger, "ab") as f:
        f.write(b'{"at_epoch":1,"kind":"experi')
    assert [line.seq for line in store.ledger()] == [1, 2, 3]
    assert verify(store).ledger_torn_tail
    pub = store.write_record("experiments/exp-" + "f" * 64 + ".json", {"id": "exp-" + "f" * 64})
    line = store.ledger_append("experiment", "exp-" + "f" * 64, pub, {})
    assert line.seq == 4
    assert ledger.read_bytes().endswith(b"\n")
    assert [entry.seq for entry in store.ledger()] == [1, 2, 3, 4]


def test_reindex_rebuilds_a_deleted_ledger_identically(tmp_path: Path) -> None:
    store = _published_store(tmp_path)
    target_id = "tgt-" + "0" * 64
    store.ledger_append("target", target_id, store.write_record("target.json", {"id": target_id}), {})
    ledger = store.root / "ledger" / "records.jsonl"
    before = ledger.read_bytes()
    ledger.unlink()
    out = reindex(store)
    assert ledger.read_bytes() == before, "the rebuilt ledger is chained as the appends were"
    assert out.lines == 4
    run = gpuopt("store", "reindex", str(store.root), "--json")
    assert run.code == 0
    assert run.json()["data"]["identical"] is True


def test_reindex_refuses_a_folder_that_is_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a store")
    run = gpuopt("store", "reindex", str(tmp_path), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "not_a_store"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"], "reindex wrote nothing"


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_verify_repair_removes_temp_files_and_unreferenced_blobs(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    store = _store(tmp_path)
    store.freeze(src, exclude=[], limits=LIMITS)
    (store.root / "objects" / "tmp" / ".tmp-1-2-3").write_text("half a blob")
    orphan = store.root / "objects" / "blobs" / "ab"
    orphan.mkdir()
    (orphan / ("ab" + "0" * 62)).write_text("nobody")
    report = verify(store, repair=True)
    assert report.blobs_unreferenced == ["objects/blobs/ab/ab" + "0" * 62]
    assert report.repair is not None
    assert [(a.reason, a.path) for a in report.repair.removed] == [
        ("temp_file", "objects/tmp/.tmp-1-2-3"),
        ("unreferenced_blob", "objects/blobs/ab/ab" + "0" * 62),
    ]
    assert verify(store).blobs_unreferenced == []


def test_repair_during_a_freeze_removes_nothing_the_freeze_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A freeze publishes blobs before the manifest that references them: a repair running in between (here
    from another process, at the exact moment the native freeze runs) must not delete them."""
    src = _tree(tmp_path)
    store = _store(tmp_path)
    sha = _sha(b"shared\n")  # pkg/a.py and pkg/b.py: a blob this freeze has already published
    blob = store.root / "objects" / "blobs" / sha[:2] / sha
    half = store.root / "objects" / "tmp" / ".tmp-1-2-3"
    real = _native.store_freeze
    seen: dict[str, object] = {}

    def freeze_with_a_concurrent_repair(*args: object) -> bytes:
        blob.parent.mkdir(parents=True)
        blob.write_bytes(b"shared\n")
        half.parent.mkdir(parents=True)
        half.write_bytes(b"a blob being written")
        run = gpuopt("store", "verify", str(store.root), "--repair", "--json")
        seen["code"], seen["errors"] = run.code, run.json()["errors"]
        try:
            verify(store, repair=True)
        except InputError as exc:
            seen["in_process"] = exc.code
        seen["left"] = (blob.exists(), half.exists())
        half.unlink(missing_ok=True)
        return real(*args)  # type: ignore[no-any-return]

    monkeypatch.setattr(_native, "store_freeze", freeze_with_a_concurrent_repair)
    frozen = store.freeze(src, exclude=[".git/**"], limits=LIMITS)
    monkeypatch.undo()
    assert seen["left"] == (True, True), "repair deleted what a running freeze wrote"
    assert (seen["code"], seen["in_process"]) == (2, "store_busy")
    assert [e["code"] for e in seen["errors"]] == ["store_busy"]  # type: ignore[union-attr]
    assert frozen.blobs_existing == 2  # the freeze reused the blob it had written before the repair
    after = verify(store, deep=True)
    assert after.ok and after.blobs_unreferenced == []
    store.materialize(frozen.digest, tmp_path / "out")
    assert (tmp_path / "out" / "pkg" / "a.py").read_text() == "shared\n"
    # Once no writer holds the root, repair runs (and waits for nobody).
    assert verify(store, repair=True).repair is not None


def test_storage_probe_passes_here(tmp_path: Path) -> None:
    checks = json.loads(_native.storage_probe(str(tmp_path)))
    assert {c["name"]: c["ok"] for c in checks} == {
        "create_exclusive": True,
        "noreplace_rename": True,
        "atomic_replace": True,
        "ordered_append": True,
        "nonblocking_flock": True,
        "directory_fsync": True,
    }
    assert list(tmp_path.iterdir()) == []
