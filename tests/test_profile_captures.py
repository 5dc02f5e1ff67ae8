"""Issue 15's "done when" on the H200 captures in ``tests/data/profiles/h200`` (skipped until they exist).

Layout and recipe: ``tests/data/profiles/README.md`` and ``benchmarks/profile_captures.py``.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import polars as pl
import pytest

from gpuopt import profile
from gpuopt.models.profile import NO_UNCERTAINTY

H200 = Path(__file__).resolve().parent / "data" / "profiles" / "h200"

pytestmark = pytest.mark.skipif(not H200.is_dir(), reason="no H200 captures in tests/data/profiles/h200 yet")


def _captures(tmp: Path, kind: str, variant: str) -> list[Path]:
    folder = H200 / kind / variant
    out = []
    for path in sorted(folder.iterdir()):
        if path.name.endswith(".fixture.gz"):
            target = tmp / kind / variant / path.name.removesuffix(".fixture.gz")
            target.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(path, "rb") as fin, target.open("wb") as fout:
                shutil.copyfileobj(fin, fout)
            out.append(target)
        else:
            out.append(path)
    return out


@pytest.mark.parametrize("kind", ["nsys", "torch"])
def test_faster_candidate_changes_its_kernels_and_aa_flags_no_more_than_declared(
    tmp_path: Path, kind: str
) -> None:
    original = _captures(tmp_path, kind, "original")
    faster = _captures(tmp_path, kind, "faster")
    aa = _captures(tmp_path, kind, "original_aa")
    diff = profile.diff_files(original, faster, by="kernel", paired=True, marker="iteration")
    flagged = diff.table.filter(pl.col("flagged"))
    assert flagged.height >= 1
    assert ((flagged["ci_high_ns"] < 0) | (flagged["ci_low_ns"] > 0)).all()
    same = profile.diff_files(original, aa, by="kernel", paired=True, marker="iteration")
    assert not [w for w in same.warnings if w.code == "work_differs"]
    assert same.counts.flagged <= max(1, round(same.method.fdr * same.counts.tested))
    unchanged = same.table.filter(pl.col("ci_low_ns").is_not_null())
    inside = ((unchanged["ci_low_ns"] <= 0) & (unchanged["ci_high_ns"] >= 0)).mean()
    assert inside is not None and float(inside) >= 0.8
    single = profile.diff_files(original[:1], faster[:1], by="kernel")
    assert single.method.uncertainty == NO_UNCERTAINTY
