"""Issue 15's "done when" on real H200 captures: the bundled GPU example's softmax, original and faster
candidate, captured interleaved (original_a, faster, original_b) five times under nsys and torch
(``tests/data/README.md``: ``fixtures/gpuopt/h200/softmax``; recipe ``tests/data/recipes/cap1.sh``).
original_a vs original_b is the A/A pair.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from gpuopt import profile
from gpuopt.models.profile import NO_UNCERTAINTY

SUFFIX = {"nsys": ".sqlite", "torch": ".json.gz"}


def _captures(shared: Path, kind: str, variant: str) -> list[Path]:
    folder = shared / "gpuopt/h200/softmax" / kind
    return [folder / f"sm_{variant}_{i}{SUFFIX[kind]}" for i in range(1, 6)]


@pytest.mark.parametrize("kind", ["nsys", "torch"])
def test_faster_candidate_changes_its_kernels_and_aa_flags_no_more_than_declared(
    shared: Path, kind: str
) -> None:
    original = _captures(shared, kind, "original_a")
    faster = _captures(shared, kind, "faster")
    aa = _captures(shared, kind, "original_b")
    diff = profile.diff_files(original, faster, by="kernel", paired=True, marker="measure")
    flagged = diff.table.filter(pl.col("flagged"))
    assert flagged.height >= 1
    assert ((flagged["ci_high_ns"] < 0) | (flagged["ci_low_ns"] > 0)).all()
    same = profile.diff_files(original, aa, by="kernel", paired=True, marker="measure")
    assert not [w for w in same.warnings if w.code == "work_differs"]
    assert same.counts.flagged <= max(1, round(same.method.fdr * same.counts.tested))
    unchanged = same.table.filter(pl.col("ci_low_ns").is_not_null())
    inside = ((unchanged["ci_low_ns"] <= 0) & (unchanged["ci_high_ns"] >= 0)).mean()
    assert inside is not None and float(inside) >= 0.8
    single = profile.diff_files(original[:1], faster[:1], by="kernel")
    assert single.method.uncertainty == NO_UNCERTAINTY


def test_detected_iterations_of_a_changed_launch_sequence_divide_nothing(shared: Path) -> None:
    # No --marker: the original repeats a 6-kernel unit 512 times a capture, the fused candidate a
    # different unit twice. Dividing by those counts compared different units (the candidate's values
    # came out ~256x too large); the counts stay facts and the values stay per capture.
    diff = profile.diff_files(
        _captures(shared, "nsys", "original_a")[:3], _captures(shared, "nsys", "faster")[:3]
    )
    work = diff.comparability.work
    assert (work.source, work.steps_baseline, work.steps_candidate) == ("detected", [512] * 3, [2] * 3)
    assert (work.same_unit, work.per_step) == (False, False)
    assert [t.name for t in diff.totals] == ["kernel time"]
    warning = next(w for w in diff.warnings if w.code == "steps_differ")
    assert "values are per capture" in warning.message and "--marker" in warning.message
