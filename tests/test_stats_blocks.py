"""The unit of analysis in ``gpuopt stats compare`` (issue 15.3): rows that come in blocks (the same run
or process) are not independent pairs. A block-like column is diagnosed (per-block effects, warning
``dependent_samples_suspected`` when they disagree); ``--block-column`` resamples whole blocks."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import stats


def _files(tmp: Path, speedups: dict[str, float], *, column: str = "run") -> tuple[Path, Path]:
    """10 pairs per block: baseline 10 ms; candidate 10 / (s + 0.001 i) ms for pair i of the block."""
    base, cand = [f"{column},ms"], [f"{column},ms"]
    for block, s in speedups.items():
        for i in range(10):
            base.append(f"{block},10")
            cand.append(f"{block},{10 / (s + 0.001 * i)!r}")
    b, c = tmp / "base.csv", tmp / "cand.csv"
    b.write_text("\n".join(base) + "\n")
    c.write_text("\n".join(cand) + "\n")
    return b, c


def _median_pct(s: float) -> float:
    # The median of ln(s + 0.001 i), i = 0..9, is the mean of the 5th and 6th: ln √((s+.004)(s+.005)).
    return 100 * (math.sqrt((s + 0.004) * (s + 0.005)) - 1)


def test_blocks_that_disagree_warn_with_their_effects(tmp_path: Path) -> None:
    b, c = _files(tmp_path, {"run_a": 1.1, "run_b": 1.5})
    run = gpuopt("stats", "compare", str(b), str(c), "--column", "ms", "--json")
    assert run.code == 0, run.stderr
    comparison = run.json()["data"]["comparison"]
    per_block = {p["case_id"]: p for p in comparison["per_block"]}
    assert per_block["run_a"]["estimate_pct"] == pytest.approx(_median_pct(1.1), rel=1e-12)
    assert per_block["run_b"]["estimate_pct"] == pytest.approx(_median_pct(1.5), rel=1e-12)
    assert per_block["run_a"]["n"] == per_block["run_b"]["n"] == 10
    assert comparison["blocks"] == {"column": "run", "blocks": 2, "resampled": False, "disagree": True}
    warning = next(w for w in comparison["warnings"] if w["code"] == "dependent_samples_suspected")
    assert "run_a" in warning["message"] and "--block-column run" in warning["message"]
    human = gpuopt("stats", "compare", str(b), str(c), "--column", "ms")
    assert "Per block of 'run' (diagnosed only)" in human.stdout


def test_block_column_resamples_blocks_and_widens_the_ci(tmp_path: Path) -> None:
    b, c = _files(tmp_path, {"r1": 1.1, "r2": 1.5, "r3": 1.2, "r4": 1.4})
    pooled = stats.compare_files(b, c, column="ms").result
    blocked = stats.compare_files(b, c, column="ms", block_column="run").result
    assert blocked.blocks is not None and blocked.blocks.resampled and blocked.blocks.blocks == 4
    assert not [w for w in blocked.warnings if w.code == "dependent_samples_suspected"]
    assert blocked.ci_method_run == "percentile"
    assert blocked.estimate_pct == pytest.approx(pooled.estimate_pct)
    assert pooled.ci_low_pct is not None and pooled.ci_high_pct is not None
    assert blocked.ci_low_pct is not None and blocked.ci_high_pct is not None
    width = blocked.ci_high_pct - blocked.ci_low_pct
    assert width > 1.5 * (pooled.ci_high_pct - pooled.ci_low_pct)
    # Seeded and deterministic.
    again = stats.compare_files(b, c, column="ms", block_column="run").result
    assert (again.ci_low_pct, again.ci_high_pct) == (blocked.ci_low_pct, blocked.ci_high_pct)


def test_blocks_that_agree_do_not_warn(tmp_path: Path) -> None:
    b, c = _files(tmp_path, {"p1": 1.2, "p2": 1.2}, column="process")
    comparison = stats.compare_files(b, c, column="ms").result
    assert comparison.blocks is not None and not comparison.blocks.disagree
    assert not [w for w in comparison.warnings if w.code == "dependent_samples_suspected"]


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (["--block-column", "nope"], "column_missing"),
        (["--block-column", "run", "--unpaired"], "statistics_invalid"),
        (["--block-column", "run", "--case-column", "run"], "statistics_invalid"),
    ],
)
def test_bad_block_options_are_typed_errors(tmp_path: Path, extra: list[str], code: str) -> None:
    b, c = _files(tmp_path, {"a": 1.1, "b": 1.5})
    run = gpuopt("stats", "compare", str(b), str(c), "--column", "ms", *extra, "--json")
    assert run.code == 2, run.stderr
    assert run.json()["errors"][0]["code"] == code


def test_jsonl_rows_with_keys_carry_their_block(tmp_path: Path) -> None:
    # Two samples per call (key), calls grouped in two workers; blocks come from each call's rows.
    base, cand = [], []
    for worker, s in (("w0", 1.1), ("w1", 1.5)):
        for call in range(6):
            for _sample in range(2):
                key = f"{worker}-{call}"
                base.append(f'{{"worker": "{worker}", "call": "{key}", "ms": 10}}')
                cand.append(f'{{"worker": "{worker}", "call": "{key}", "ms": {10 / (s + 0.001 * call)!r}}}')
    b, c = tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    b.write_text("\n".join(base) + "\n")
    c.write_text("\n".join(cand) + "\n")
    result = stats.compare_files(b, c, column="ms", key_column="call", block_column="worker").result
    assert result.n == 12 and result.blocks is not None and result.blocks.blocks == 2
    assert [p.case_id for p in result.per_block] == ["w0", "w1"]
    assert [p.n for p in result.per_block] == [6, 6]
    # Six calls: the median of ln(s + 0.001 i), i = 0..5, is ln √((s+.002)(s+.003)).
    expected = 100 * (math.sqrt((1.5 + 0.002) * (1.5 + 0.003)) - 1)
    assert result.per_block[1].estimate_pct == pytest.approx(expected, rel=1e-12)
