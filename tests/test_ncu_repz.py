"""Compressed Nsight Compute reports (``.ncu-repz``, ncu 2026.3's default output; issue 12).

NVIDIA documents that ``ncu_report.load_report`` and ``ncu --import`` read them; their container is not
documented, so gpuopt reads them through those readers and never opens them natively. No real
``.ncu-repz`` is in the fixtures yet (``references/ncu.md`` says how the lead makes one): these tests pin
the routing and the bad-input errors.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt._ncu import rep as _ncu_rep


def test_compressed_reports_are_recognised_by_name_and_magic(tmp_path: Path) -> None:
    named = tmp_path / "a.ncu-repz"
    named.write_bytes(b"anything")
    magic = tmp_path / "b.bin"
    magic.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 8)
    plain = tmp_path / "c.ncu-rep"
    plain.write_bytes(b"NVR\0")
    assert _ncu_rep.is_compressed(named) and _ncu_rep.is_compressed(magic)
    assert not _ncu_rep.is_compressed(plain)


def test_empty_ncu_repz_is_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "empty.ncu-repz"
    path.write_bytes(b"")
    run = gpuopt("ncu", "summary", str(path), "--json")
    assert run.code == 2, run.stdout
    assert run.json()["errors"][0]["code"] == "ncu_report_empty"


def test_garbage_ncu_repz_is_exit_2_not_a_crash(tmp_path: Path) -> None:
    pytest.importorskip("ncu_report")
    path = tmp_path / "garbage.ncu-repz"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(range(256)) * 4)
    run = gpuopt("ncu", "summary", str(path), "--reader", "ncu-report", "--json")
    assert run.code == 2, run.stdout + run.stderr
    assert run.json()["errors"][0]["code"] in ("ncu_report_empty", "format_invalid")
