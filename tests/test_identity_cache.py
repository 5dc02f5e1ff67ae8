"""File identity through the identity cache: hits only for the same version, never stale, never fatal.

A digest is cached only for a file last changed more than 2 s before it was hashed (git's racy rule),
so the tests that need a hit wait that long once, for files they made.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt.errors import InputError
from gpuopt.provenance import (
    CACHE_ENV,
    IdentityCacheWarning,
    file_identity,
    identify_in_background,
)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "identity-v1").rglob("*") if p.is_file())


def test_fresh_file_is_hashed_every_time_and_same_size_rewrite_is_seen(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(b"abc")
    first = file_identity(path)
    assert (first.sha256, first.size_bytes, first.from_cache) == (_sha(b"abc"), 3, False)
    path.write_bytes(b"xyz")  # same size, well within one second
    second = file_identity(path)
    assert (second.sha256, second.from_cache) == (_sha(b"xyz"), False)
    assert _entries(cache) == []  # racy: changed within 2 s of hashing, so nothing was stored


def test_old_file_is_cached_then_a_rewrite_is_never_served_stale(
    tmp_path: Path, cache: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept, corrupt, export = tmp_path / "kept.bin", tmp_path / "corrupt.bin", tmp_path / "eager.sqlite"
    kept.write_bytes(b"0123456789")
    corrupt.write_bytes(b"abc")
    shutil.copyfile(shared / "h200" / "nsys" / "eager.sqlite", export)
    time.sleep(2.2)  # older than the racy window: digests may now be stored

    assert file_identity(kept).from_cache is False
    hit = file_identity(kept)
    assert (hit.sha256, hit.size_bytes, hit.from_cache) == (_sha(b"0123456789"), 10, True)
    [entry] = _entries(cache)
    assert entry.read_text() == _sha(b"0123456789") + "\n"

    kept.write_bytes(b"9876543210")  # same size, same inode
    again = file_identity(kept)
    assert (again.sha256, again.from_cache) == (_sha(b"9876543210"), False)
    assert entry.exists()  # the old version's entry is still there, and was not served

    # A corrupt entry is a warning, and the file is hashed.
    file_identity(corrupt)
    [entry] = [p for p in _entries(cache) if p.read_text() == _sha(b"abc") + "\n"]
    entry.write_text("garbage\n")
    with pytest.warns(IdentityCacheWarning, match="corrupt"):
        fixed = file_identity(corrupt)
    assert (fixed.sha256, fixed.from_cache) == (_sha(b"abc"), False)

    # The whole command: first read hashes, the second comes from the cache; same digest.
    cold = gpuopt("nsys", "stats", str(export), "--report", "cuda_gpu_kern_sum", "--json").json()
    warm = gpuopt("nsys", "stats", str(export), "--report", "cuda_gpu_kern_sum", "--json").json()
    [cold_input], [warm_input] = cold["provenance"]["inputs"], warm["provenance"]["inputs"]
    assert cold_input["from_cache"] is False and warm_input["from_cache"] is True
    assert cold_input["sha256"] == warm_input["sha256"] == _sha(export.read_bytes())
    assert cold["data"] == warm["data"]

    # A cache folder that cannot be created is a warning, never an error.
    blocked = tmp_path / "not-a-folder"
    blocked.write_bytes(b"")
    monkeypatch.setenv(CACHE_ENV, str(blocked))
    # (the export, unchanged since before the racy window: a just-rewritten file is never stored, so
    # the cache would not be touched and nothing would warn)
    with pytest.warns(IdentityCacheWarning, match="not writable"):
        plain = file_identity(export)
    assert (plain.sha256, plain.from_cache) == (cold_input["sha256"], False)
    run = gpuopt("nsys", "stats", str(export), "--report", "cuda_gpu_kern_sum", "--json")
    assert run.code == 0
    assert run.json()["provenance"]["inputs"][0]["sha256"] == cold_input["sha256"]


def test_no_cache_when_the_variable_is_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "")
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert file_identity(path).sha256 == _sha(b"abc")


def test_file_changed_while_the_command_read_it_is_an_error(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "export.sqlite"
    path.write_bytes(b"x" * 4096)
    identify_in_background(path)
    with path.open("ab") as grow:  # the engine would be reading now
        grow.write(b"y")
    with pytest.raises(InputError) as caught:
        file_identity(path)
    assert caught.value.code == "file_changed_during_read"
    assert caught.value.path == str(path)
    # Nothing pending is left behind: the next look-up hashes the file as it is now.
    assert file_identity(path).sha256 == _sha(b"x" * 4096 + b"y")


def test_background_identity_of_a_missing_file_leaves_the_error_to_the_reader(tmp_path: Path) -> None:
    identify_in_background(tmp_path / "absent")
    with pytest.raises(InputError) as caught:
        file_identity(tmp_path / "absent")
    assert caught.value.code == "file_not_found"
    assert os.path.exists(tmp_path / "absent") is False
