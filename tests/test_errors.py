"""Errors cross the Rust boundary as the right ``gpuopt.errors`` classes, panics included."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuopt import _native
from gpuopt.errors import (
    AbsentError,
    FormatError,
    GpuoptError,
    InputError,
    InternalError,
    ToolAbsentError,
    from_native,
)
from gpuopt.provenance import file_identity


def test_missing_file_is_input_error_from_rust(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        file_identity(tmp_path / "absent.sqlite")
    assert info.value.code == "file_not_found"
    assert info.value.path == str(tmp_path / "absent.sqlite")
    assert info.value.exit_code == 2


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        file_identity(tmp_path)
    assert info.value.code == "not_a_file"


def test_file_identity_hashes_bytes(tmp_path: Path) -> None:
    path = tmp_path / "abc"
    path.write_bytes(b"abc")
    identity = file_identity(path)
    assert identity.size_bytes == 3
    assert (
        identity.blake3 == "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"
    )  # BLAKE3("abc"), the published test value


def test_rust_panic_becomes_internal_error_not_abort() -> None:
    with pytest.raises(InternalError) as info:
        _native.debug_panic()
    assert info.value.code == "internal_panic"
    assert "deliberate panic" in info.value.message
    # Still an ordinary Exception: `except Exception` catches it (a raw pyo3 PanicException would not be).
    assert isinstance(info.value, Exception)


@pytest.mark.parametrize(
    ("kind", "code", "cls", "exit_code"),
    [
        ("input", "anything_bad", InputError, 2),
        ("input", "format_invalid", FormatError, 2),
        ("absent", "tool_absent", ToolAbsentError, 3),
        ("absent", "gpu_not_found", AbsentError, 3),
        ("internal", "internal_panic", InternalError, 1),
        ("unheard_of", "x", InternalError, 1),
    ],
)
def test_from_native_picks_class_and_exit(
    kind: str, code: str, cls: type[GpuoptError], exit_code: int
) -> None:
    err = from_native(kind, code, "msg", path="p")
    assert type(err) is cls
    assert err.exit_code == exit_code
    assert err.to_dict() == {"code": code, "message": "msg", "path": "p"}


def test_many_identities_arrive_as_a_polars_table(tmp_path: Path) -> None:
    from gpuopt.provenance import file_identities

    paths = []
    for i in range(20):
        path = tmp_path / f"f{i}"
        path.write_bytes(b"abc" * i)
        paths.append(path)
    frame = file_identities(paths)
    assert frame.columns == ["path", "size_bytes", "blake3"]
    assert frame["path"].to_list() == [str(p) for p in paths]  # input order kept
    assert frame["size_bytes"].to_list() == [3 * i for i in range(20)]
    assert frame["blake3"][1] == "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"
    with pytest.raises(InputError):
        file_identities([*paths, tmp_path / "missing"])
