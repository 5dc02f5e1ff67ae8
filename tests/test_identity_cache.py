"""File identity through the identity cache: hits only for the same version, never stale, never fatal.

A digest is cached only for a file last changed more than 2 s before it was hashed (git's racy rule),
so the tests that need a hit wait that long once, for files they made.
"""

from __future__ import annotations

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
    """The file identity's digest by the BLAKE3 team's own binding."""
    import blake3

    return str(blake3.blake3(data).hexdigest())


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "identity-v2").rglob("*") if p.is_file() and p.name != ".key")


def test_fresh_file_is_hashed_every_time_and_same_size_rewrite_is_seen(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(b"abc")
    first = file_identity(path)
    assert (first.blake3, first.size_bytes, first.from_cache) == (_sha(b"abc"), 3, False)
    path.write_bytes(b"xyz")  # same size, well within one second
    second = file_identity(path)
    assert (second.blake3, second.from_cache) == (_sha(b"xyz"), False)
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
    assert (hit.blake3, hit.size_bytes, hit.from_cache) == (_sha(b"0123456789"), 10, True)
    [entry] = _entries(cache)
    assert entry.read_text().startswith(_sha(b"0123456789") + "\n")  # then its tag

    kept.write_bytes(b"9876543210")  # same size, same inode
    again = file_identity(kept)
    assert (again.blake3, again.from_cache) == (_sha(b"9876543210"), False)
    assert entry.exists()  # the old version's entry is still there, and was not served

    # A corrupt entry is a warning, and the file is hashed.
    file_identity(corrupt)
    [entry] = [p for p in _entries(cache) if p.read_text().startswith(_sha(b"abc") + "\n")]
    entry.write_text("garbage\n")
    with pytest.warns(IdentityCacheWarning, match="not written by gpuopt"):
        fixed = file_identity(corrupt)
    assert (fixed.blake3, fixed.from_cache) == (_sha(b"abc"), False)

    # The whole command: first read hashes, the second comes from the cache; same digest.
    cold = gpuopt("nsys", "stats", str(export), "--report", "cuda_gpu_kern_sum", "--json").json()
    warm = gpuopt("nsys", "stats", str(export), "--report", "cuda_gpu_kern_sum", "--json").json()
    [cold_input], [warm_input] = cold["provenance"]["inputs"], warm["provenance"]["inputs"]
    assert cold_input["from_cache"] is False and warm_input["from_cache"] is True
    assert cold_input["blake3"] == warm_input["blake3"] == _sha(export.read_bytes())
    assert cold["data"] == warm["data"]

    # A cache folder that cannot be created is a warning, never an error.
    blocked = tmp_path / "not-a-folder"
    blocked.write_bytes(b"")
    monkeypatch.setenv(CACHE_ENV, str(blocked))
    # (the export, unchanged since before the racy window: a just-rewritten file is never stored, so
    # the cache would not be touched and nothing would warn)
    with pytest.warns(IdentityCacheWarning, match="not writable"):
        plain = file_identity(export)
    assert (plain.blake3, plain.from_cache) == (cold_input["blake3"], False)
    run = gpuopt("nsys", "stats", str(export), "--report", "cuda_gpu_kern_sum", "--json")
    assert run.code == 0
    assert run.json()["provenance"]["inputs"][0]["blake3"] == cold_input["blake3"]


def test_no_cache_when_the_variable_is_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "")
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert file_identity(path).blake3 == _sha(b"abc")


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
    assert file_identity(path).blake3 == _sha(b"x" * 4096 + b"y")


def test_background_identity_of_a_missing_file_leaves_the_error_to_the_reader(tmp_path: Path) -> None:
    identify_in_background(tmp_path / "absent")
    with pytest.raises(InputError) as caught:
        file_identity(tmp_path / "absent")
    assert caught.value.code == "file_not_found"
    assert os.path.exists(tmp_path / "absent") is False


def test_an_entry_gpuopt_did_not_write_is_not_believed(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "kept.bin"
    path.write_bytes(b"0123456789")
    old = time.time() - 10
    os.utime(path, (old, old))  # mtime long past; ctime is now, so wait out the racy window once
    time.sleep(2.2)
    assert file_identity(path).from_cache is False
    [entry] = _entries(cache)
    # A forger who knows the five numbers writes another digest with a made-up tag.
    entry.write_text("1" * 64 + "\n" + "2" * 64 + "\n")
    with pytest.warns(IdentityCacheWarning, match="forged, copied or damaged"):
        got = file_identity(path)
    assert (got.blake3, got.from_cache) == (_sha(b"0123456789"), False)
    # A cache folder others may write is not used at all.
    (cache / "identity-v2").chmod(0o777)
    with pytest.warns(IdentityCacheWarning, match="closed to others"):
        again = file_identity(path)
    assert again.from_cache is False


def test_a_file_appended_to_after_the_command_started_is_refused(tmp_path: Path, cache: Path) -> None:
    from gpuopt import _identity

    path = tmp_path / "trace.json"
    path.write_bytes(b"{}")
    with _identity.scope():
        _identity.touch(path)  # what the command wrapper does for every file argument
        with path.open("ab") as grow:  # appended while the engine parsed the first version
            grow.write(b" ")
        with pytest.raises(InputError) as caught:
            file_identity(path)
    assert caught.value.code == "file_changed_during_read"
    assert file_identity(path).blake3 == _sha(b"{} ")  # outside the command: the file as it is now
