"""`gpuopt store verify` proves what it claims, on a real root (one run of the bundled example, copied per
test): it refuses what is not a store, finds each planted defect with its code and path, and `--repair` never
removes what a record references (`--dry-run` changes nothing)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from subprocess import PIPE
from typing import Any

import jsonschema
import pytest

from conftest import Example, gpuopt
from gpuopt import _native
from gpuopt.evaluation.store import ENV_KEY, Store, env_digest, scan_records
from gpuopt.evaluation.verify import verify
from gpuopt.evaluation.verify.env import check_env_key
from gpuopt.evaluation.verify.objects import references
from gpuopt.evaluation.verify.records import check_records
from gpuopt.evaluation.verify.sequence import read_sequence
from gpuopt.models.evaluation.driver import InheritedVariable
from gpuopt.models.evaluation.store import LedgerLine
from gpuopt.models.evaluation.target import Target
from gpuopt.schemas import json_schema

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first


@pytest.fixture(scope="module")
def example_root(example_made_once: Example) -> Path:
    """The example's root as ``gpuopt example run`` made it (each test copies it: :func:`root`)."""
    return example_made_once.folder / "root"


@pytest.fixture
def root(example_root: Path, tmp_path: Path) -> Path:
    """A private copy of the example's root (records keep their 0444 mode)."""
    copy = tmp_path / "root"
    shutil.copytree(example_root, copy, symlinks=True)
    return copy


def _snapshot(root: Path) -> dict[str, str]:
    """Every file below the root: its mode and the hash of its bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = str(path.relative_to(root))
            out[rel] = f"{path.stat().st_mode & 0o7777:o} {hashlib.sha256(path.read_bytes()).hexdigest()}"
    return out


def _writable(path: Path) -> Path:
    path.chmod(0o644)
    return path


def _results(root: Path) -> list[tuple[str, dict[str, Any]]]:
    found = sorted(root.glob("invocations/*/result.json"))
    return [(str(p.relative_to(root)), json.loads(p.read_bytes())) for p in found]


def _verify_json(root: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    run = gpuopt("store", "verify", str(root), *flags, "--json")
    assert "Traceback" not in run.stderr, run.stderr
    envelope = run.json()
    jsonschema.validate(envelope, json_schema("gpuopt.store-verify/v2"))
    return run.code, envelope


# ---- a clean root ----------------------------------------------------------------------------------------


def test_the_example_root_verifies_and_its_records_reference_every_tree(root: Path) -> None:
    report = verify(Store(root), deep=True)
    assert report.ok, report.defects
    assert report.defects == [] and report.blobs_unreferenced == [] and report.temp_files == []
    assert report.records > 10 and report.events_files > 5
    manifests = {p.name[: -len(".json")] for p in (root / "objects" / "trees").iterdir()}
    on_disk, _ = scan_records(Store(root))
    models = check_records(Store(root), Store(root).ledger(), on_disk, [], deep=False).models
    assert set(references(models)) == manifests, "every tree in the example is referenced by a record"
    code, envelope = _verify_json(root)
    assert code == 0 and envelope["data"]["ok"] is True


# ---- not a store -----------------------------------------------------------------------------------------


def _project(path: Path) -> Path:
    (path / "src").mkdir(parents=True)
    (path / "src" / "main.py").write_text("print('hi')\n")
    (path / "README.md").write_text("a project, not a store\n")
    return path


@pytest.mark.parametrize(
    ("make", "observed"),
    [
        (lambda p: p, "an empty folder"),
        (_project, "neither"),
    ],
    ids=["empty-folder", "a-project-folder"],
)
def test_a_folder_that_is_not_a_store_is_refused_and_left_alone(
    tmp_path: Path, make: Callable[[Path], Path], observed: str
) -> None:
    folder = make(tmp_path / "folder")
    folder.mkdir(exist_ok=True)
    before = _snapshot(folder), sorted(p.name for p in folder.iterdir())
    for flags in ((), ("--deep",), ("--repair",), ("--repair", "--dry-run")):
        run = gpuopt("store", "verify", str(folder), *flags, "--json")
        assert run.code == 2 and "Traceback" not in run.stderr
        error = run.json()["errors"][0]
        assert (error["code"], error["observed"]) == ("not_a_store", observed)
        assert "target.json" in error["message"] and "ledger/records.jsonl" in error["message"]
    assert (_snapshot(folder), sorted(p.name for p in folder.iterdir())) == before, "no lock, no ledger"
    human = gpuopt("store", "verify", str(folder))
    assert human.code == 2 and "not_a_store" in human.stderr and "a store (artifact root) is" in human.stderr


def test_a_store_s_objects_folder_is_not_a_store_and_a_missing_path_is_root_not_found(root: Path) -> None:
    run = gpuopt("store", "verify", str(root / "objects"), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "not_a_store"
    run = gpuopt("store", "verify", str(root / "nowhere"), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "root_not_found"


def test_dry_run_needs_repair(root: Path) -> None:
    run = gpuopt("store", "verify", str(root), "--dry-run")
    assert run.code == 2 and "--dry-run goes with --repair" in run.stderr


# ---- planted defects -------------------------------------------------------------------------------------


def _delete_a_result_s_bundle_tree(root: Path) -> tuple[str, str]:
    """Removes the manifest of a call's output bundle that a result references (its blobs are then listed by
    no manifest: the old `--repair` deleted them)."""
    for _, result in _results(root):
        for receipt in result.get("call_receipts", []):
            digest = receipt.get("bundle")
            if digest:
                (root / "objects" / "trees" / f"{digest}.json").unlink()
                return "object_missing", f"objects/trees/{digest}.json"
    raise AssertionError("no result references a bundle")


def _duplicate_a_ledger_line(root: Path) -> tuple[str, str]:
    ledger = _writable(root / "ledger" / "records.jsonl")
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join([*lines[:3], lines[2], *lines[3:]]))
    return "ledger_line_duplicated", "ledger/records.jsonl"


def _edit_an_event(root: Path) -> tuple[str, str]:
    """Changes a finished call's return code, in the middle of an event log."""
    for path in sorted(root.glob("invocations/*/events.jsonl")):
        lines = path.read_bytes().splitlines(keepends=True)
        for index, raw in enumerate(lines[:-1]):
            event = json.loads(raw)
            if event["event"] == "call_finished" and "returncode" in event:
                event["returncode"] = event["returncode"] + 1
                edited = json.dumps(event, sort_keys=True, separators=(",", ":")).encode() + b"\n"
                _writable(path).write_bytes(b"".join([*lines[:index], edited, *lines[index + 1 :]]))
                return "event_chain_broken", str(path.relative_to(root))
    raise AssertionError("no call_finished event with a return code")


def _empty_the_env_key(root: Path) -> tuple[str, str]:
    (root / "keys" / "env.key").write_bytes(b"")
    return "env_key_invalid", "keys/env.key"


def _truncate_a_blob(root: Path) -> tuple[str, str]:
    for path in sorted((root / "objects" / "blobs").rglob("*")):
        if path.is_file() and path.stat().st_size >= 2:
            data = path.read_bytes()
            _writable(path).write_bytes(data[: len(data) // 2])
            return "blob_size_mismatch", str(path.relative_to(root))
    raise AssertionError("no blob of 2 bytes or more")


def _edit_a_record(root: Path) -> tuple[str, str]:
    rel, result = _results(root)[0]
    result["verdict"] = "passed" if result["verdict"] != "passed" else "failed"
    _writable(root / rel).write_bytes(
        json.dumps(result, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    )
    return "record_changed", rel


def _relabel_a_ledger_line(root: Path) -> tuple[str, str]:
    """A ledger line's keys say a result passed; the chain is kept intact (re-hashed), so only the keys
    compared with the record tell."""
    ledger = _writable(root / "ledger" / "records.jsonl")
    lines = [json.loads(raw) for raw in ledger.read_bytes().splitlines()]
    line = next(e for e in lines if e["kind"] == "result" and e["keys"].get("verdict") != "passed")
    line["keys"]["verdict"] = "passed"
    out, prev = [], None
    for entry in lines:
        if prev is not None:
            entry["prev_sha256"] = prev
        raw = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode()
        prev = hashlib.sha256(raw).hexdigest()
        out.append(raw + b"\n")
    ledger.write_bytes(b"".join(out))
    return "ledger_mismatch", "ledger/records.jsonl"


def _delete_an_event_log(root: Path) -> tuple[str, str]:
    rel, _ = _results(root)[0]
    events = root / rel.replace("result.json", "events.jsonl")
    events.unlink()
    return "events_missing", str(events.relative_to(root))


def _remove_the_last_event(root: Path) -> tuple[str, str]:
    """The log's last line (`supervisor_finished`) removed: the chain before it is intact, so only the
    rule that a finished supervisor's log ends with that line tells (a trial found verify passed it)."""
    rel, _ = _results(root)[0]
    events = root / rel.replace("result.json", "events.jsonl")
    lines = events.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[-1])["event"] == "supervisor_finished"
    _writable(events).write_bytes(b"".join(lines[:-1]))
    return "events_unfinished", str(events.relative_to(root))


PLANTED = {
    "deleted-tree-a-result-references": _delete_a_result_s_bundle_tree,
    "duplicated-ledger-line": _duplicate_a_ledger_line,
    "edited-event-line": _edit_an_event,
    "emptied-env-key": _empty_the_env_key,
    "truncated-blob": _truncate_a_blob,
    "edited-record": _edit_a_record,
    "relabelled-ledger-line": _relabel_a_ledger_line,
    "deleted-event-log": _delete_an_event_log,
    "removed-last-event": _remove_the_last_event,
}


@pytest.mark.parametrize("plant", list(PLANTED.values()), ids=list(PLANTED))
def test_a_planted_defect_fails_verify_and_repair_keeps_every_referenced_file(
    root: Path, plant: Callable[[Path], tuple[str, str]]
) -> None:
    unreferenced_before = verify(Store(root)).blobs_unreferenced
    code, path = plant(root)
    leftover = root / "objects" / "tmp" / ".tmp-1-2-3"
    leftover.parent.mkdir(exist_ok=True)
    leftover.write_bytes(b"half a blob")

    exit_code, envelope = _verify_json(root)  # no --deep: each of these is found without it
    assert exit_code == 2 and envelope["errors"][0]["code"] == "store_corrupt"
    defects = envelope["data"]["defects"]
    assert (code, path) in [(d["code"], d["path"]) for d in defects], defects
    assert all(d["expected"] for d in defects)
    assert code in envelope["errors"][0]["message"]

    before = _snapshot(root)
    exit_code, envelope = _verify_json(root, "--repair", "--dry-run")
    assert exit_code == 2
    assert _snapshot(root) == before, "--dry-run changed the root"
    repair = envelope["data"]["repair"]
    assert repair["dry_run"] is True
    assert [(a["reason"], a["path"]) for a in repair["removed"]] == [("temp_file", "objects/tmp/.tmp-1-2-3")]

    exit_code, envelope = _verify_json(root, "--repair")
    assert exit_code == 2, "a repair does not make a corrupt store pass"
    del before["objects/tmp/.tmp-1-2-3"]
    assert _snapshot(root) == before, "repair removed something other than the temp file"
    kept = envelope["data"]["repair"]["kept_unreferenced_blobs"]
    assert set(kept) >= set(unreferenced_before)
    assert (code, path) in [(d["code"], d["path"]) for d in envelope["data"]["defects"]]


def test_the_blobs_of_a_deleted_tree_survive_repair(root: Path) -> None:
    """The campaign's case: with a referenced manifest gone its blobs look unreferenced, and the old repair
    deleted them; now they are listed as kept and stay."""
    _, path = _delete_a_result_s_bundle_tree(root)
    report = verify(Store(root), repair=True)
    assert report.blobs_unreferenced, "the deleted tree's blobs are listed by no manifest"
    assert report.repair is not None and report.repair.removed == []
    assert report.repair.kept_unreferenced_blobs == report.blobs_unreferenced
    assert all((root / rel).is_file() for rel in report.blobs_unreferenced)
    missing = [d for d in report.defects if d.code == "object_missing"]
    assert [d.path for d in missing] == [path] * len(missing)
    assert all(d.record and d.record.endswith("result.json") for d in missing)


def test_a_changed_table_is_found_with_deep_and_a_missing_one_without(root: Path) -> None:
    rel, result = _results(root)[0]
    folder = root / rel.rsplit("/", 1)[0]
    samples = folder / result["tables"]["samples"]["path"]
    _writable(samples).write_bytes(samples.read_bytes()[::-1])
    assert verify(Store(root)).ok, "a table's bytes are hashed with --deep only"
    deep = verify(Store(root), deep=True)
    assert [(d.code, d.path, d.record) for d in deep.defects] == [
        ("table_changed", str(samples.relative_to(root)), rel)
    ]
    samples.unlink()
    assert [(d.code, d.path) for d in verify(Store(root)).defects] == [
        ("table_missing", str(samples.relative_to(root)))
    ]


def test_repair_of_a_clean_root_removes_only_temp_files_and_orphan_blobs(root: Path) -> None:
    orphan = root / "objects" / "blobs" / "ab" / ("ab" + "0" * 62)
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"nobody lists me")
    (root / "experiments" / ".tmp-9").parent.mkdir(exist_ok=True)
    (root / "experiments" / ".tmp-9").write_bytes(b"{")
    before = _snapshot(root)
    dry = verify(Store(root), repair=True, dry_run=True)
    assert _snapshot(root) == before
    assert dry.ok and dry.repair is not None
    expected = [("temp_file", "experiments/.tmp-9"), ("unreferenced_blob", f"objects/blobs/ab/ab{'0' * 62}")]
    assert [(a.reason, a.path) for a in dry.repair.removed] == expected
    done = verify(Store(root), repair=True)
    assert done.repair is not None and [(a.reason, a.path) for a in done.repair.removed] == expected
    del before["experiments/.tmp-9"], before[f"objects/blobs/ab/ab{'0' * 62}"]
    assert _snapshot(root) == before
    assert verify(Store(root), deep=True).ok


def test_help_says_what_is_checked_and_what_repair_never_removes() -> None:
    run = gpuopt("store", "verify", "--help")
    assert run.code == 0
    for word in (
        "not_a_store",
        "object_missing",
        "blob_size_mismatch",
        "event_chain_broken",
        "env_key_invalid",
        "--dry-run",
        "never removes a record",
    ):
        assert word in run.stdout, word


# ---- the pieces ------------------------------------------------------------------------------------------


def test_an_env_key_under_which_a_recorded_value_does_not_verify_is_a_mismatch(root: Path) -> None:
    """The example records no inherited value (``env_record: []``), so the Target here records one: its
    digest verifies under the root's key, and no longer under another well-formed key."""
    store = Store(root)
    target = Target.model_validate_json((root / "target.json").read_bytes())
    key = bytes.fromhex((root / ENV_KEY).read_text().strip())
    path = InheritedVariable(name="PATH", hmac_sha256=env_digest(key, "PATH", "/usr/bin"), value="/usr/bin")
    recorded = target.model_copy(update={"driver": target.driver.model_copy(update={"inherited": [path]})})
    assert check_env_key(store, recorded) == []
    (root / ENV_KEY).write_text("ab" * 32 + "\n")
    [defect] = check_env_key(store, recorded)
    assert (defect.code, defect.path, defect.record) == ("env_key_mismatch", ENV_KEY, "target.json")
    assert "PATH" in (defect.observed or "")
    (root / ENV_KEY).unlink()
    assert [d.code for d in check_env_key(store, recorded)] == ["env_key_missing"]


def _chained(entries: list[dict[str, Any]], tmp_path: Path) -> bytes:
    for entry in entries:
        _native.ledger_append(str(tmp_path), "log.jsonl", json.dumps(entry).encode())
    return (tmp_path / "log.jsonl").read_bytes()


def _codes(data: bytes) -> list[tuple[str, str]]:
    found = read_sequence(data, "log.jsonl", LedgerLine, prefix="ledger").defects
    return [(d.code, d.expected.split(":")[0]) for d in found]


def _line(i: int) -> dict[str, Any]:
    return {
        "at_epoch": i,
        "kind": "map",
        "id": f"m{i}",
        "path": f"maps/m{i}.json",
        "sha256": "0" * 64,
        "keys": {},
    }


def test_a_chained_file_shows_a_removed_an_inserted_and_a_rewritten_line(tmp_path: Path) -> None:
    data = _chained([_line(i) for i in range(5)], tmp_path)
    lines = data.splitlines(keepends=True)
    assert _codes(data) == []
    assert _codes(data + b'{"torn') == [], "a torn tail is no defect"
    assert _codes(b"".join(lines[:2] + lines[3:])) == [
        ("ledger_seq_invalid", "line 3"),
        ("ledger_chain_broken", "line 3"),
    ]
    assert _codes(b"".join([*lines[:2], lines[0], *lines[2:]])) == [("ledger_line_duplicated", "line 3")]
    rewritten = json.loads(lines[1])
    rewritten["id"] = "edited"
    edited = json.dumps(rewritten, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    assert _codes(b"".join([lines[0], edited, *lines[2:]])) == [("ledger_chain_broken", "line 3")]
    assert _codes(b"".join(lines[:4]) + b"{}\n" + lines[4]) == [
        ("ledger_line_invalid", "line 5"),
        ("ledger_seq_invalid", "line 6"),
        ("ledger_chain_broken", "line 6"),
    ]


def test_lines_written_before_the_chain_are_read_and_the_chain_holds_from_its_first_link(
    tmp_path: Path,
) -> None:
    legacy = b"".join(
        json.dumps({**_line(i), "seq": i + 1}, sort_keys=True, separators=(",", ":")).encode() + b"\n"
        for i in range(2)
    )
    (tmp_path / "log.jsonl").write_bytes(legacy)
    data = _chained([_line(2), _line(3)], tmp_path)
    assert _codes(data) == []
    lines = data.splitlines(keepends=True)
    unlinked = json.loads(lines[3])
    del unlinked["prev_sha256"]
    cut = json.dumps(unlinked, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    assert _codes(b"".join([*lines[:3], cut])) == [("ledger_chain_broken", "line 4")]


def _fifo_in_place_of(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def test_a_fifo_planted_in_a_store_is_refused_not_waited_on(example_root: Path, tmp_path: Path) -> None:
    # Found by a hostile trial: opening a store file that is a FIFO waited for a writer, so `store
    # verify`, `ls` and `report` hung. Each now ends at once with a typed error.
    def plant_blob(root: Path) -> None:
        _fifo_in_place_of(next(p for p in sorted((root / "objects" / "blobs").rglob("*")) if p.is_file()))

    def plant_events(root: Path) -> None:
        rel, _ = _results(root)[0]
        _fifo_in_place_of(root / rel.replace("result.json", "events.jsonl"))

    def plant_ledger(root: Path) -> None:
        _fifo_in_place_of(root / "ledger" / "records.jsonl")

    runs = []
    for name, plant in (("blob", plant_blob), ("events", plant_events), ("ledger", plant_ledger)):
        root = tmp_path / name / "root"
        shutil.copytree(example_root, root, symlinks=True)
        plant(root)
        commands = [["store", "verify", str(root)], ["store", "verify", str(root), "--repair", "--dry-run"]]
        if name == "ledger":
            commands += [["ls", str(root)], ["report", str(root)]]
        runs += [(name, c) for c in commands]
    procs = [
        (
            name,
            cmd,
            subprocess.Popen([sys.executable, "-m", "gpuopt", *cmd, "--json"], stdout=PIPE, stderr=PIPE),
        )
        for name, cmd in runs
    ]
    for name, cmd, proc in procs:
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            for _, _, p in procs:
                p.kill()
            raise AssertionError(f"{cmd} hung on a FIFO {name}") from None
        assert proc.returncode == 2, (name, cmd, proc.returncode, out, err)
        assert b"Traceback" not in err, (name, cmd, err)
        assert json.loads(out)["ok"] is False
