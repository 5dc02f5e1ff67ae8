"""gpuopt's `nsys stats` reports equal NVIDIA's own output on every public export, byte for byte.

The oracle is nsys 2025.3.1 run on copies of the public fixtures (see tests/data/README.md); nsys prints
a `Processing [...]` banner and blank lines around each report, which are not part of the report.
"""

from __future__ import annotations

import tarfile
from functools import cache
from pathlib import Path

import pytest

from gpuopt import nsys

ORACLE = Path(__file__).parent / "data" / "nsys_oracle" / "nsys2025.3.1_public.tar.xz"
FIXTURES = (
    "fuser_2024.6.2",
    "fuser_h200_2025.1.1",
    "h100_2gpu_1s",
    "mfu_2gpu_after",
    "mfu_2gpu_before",
    "mock",
)


@cache
def nvidia() -> dict[str, str]:
    with tarfile.open(ORACLE, "r:xz") as tar:
        return {
            m.name.removesuffix(".nv.csv"): tar.extractfile(m).read().decode()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


@cache
def opened(path: Path) -> nsys.Report:
    return nsys.open(path)


def report_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("Processing [")]


@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("name", nsys.STATS_REPORTS)
def test_stats_equal_nvidia_on_public_exports(shared: Path, fixture: str, name: str) -> None:
    path = shared / "public" / "nsys" / f"{fixture}.sqlite"
    report = opened(path)
    # nsys ran on a copy at /tmp/<fixture>.sqlite, and names that path in its SKIPPED lines.
    ours = report.stats_csv(name, shown_path=f"/tmp/{fixture}.sqlite")
    assert report_lines(ours) == report_lines(nvidia()[f"{fixture}_{name}"])


def test_oracle_covers_every_fixture_and_report() -> None:
    assert len(nvidia()) == len(FIXTURES) * len(nsys.STATS_REPORTS)


def test_an_export_without_nvtx_is_skipped_like_nsys(shared: Path) -> None:
    report = opened(shared / "public" / "nsys" / "mock.sqlite")
    assert report.not_captured("nvtx_kern_sum") == ["NVTX_EVENTS"]
    assert report.stats("nvtx_kern_sum").height == 0
