"""The unit of analysis in ``gpuopt stats compare`` (issue 15.3, and issue 27 for ``--unpaired``): rows
that come in blocks (the same run or process) are not independent. A block-like column is diagnosed
(per-block effects, warning ``dependent_samples_suspected`` when they disagree); ``--block-column``
resamples whole blocks (unpaired: each side's blocks on their own)."""

from __future__ import annotations

import math
import sqlite3
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


def test_a_block_column_missing_from_the_candidate_is_not_diagnosed(tmp_path: Path) -> None:
    # Only the baseline names its runs: no block check (it used to fail with column_missing).
    b, c = _files(tmp_path, {"run_a": 1.1, "run_b": 1.5})
    c.write_text("ms\n" + "\n".join(line.split(",")[1] for line in c.read_text().splitlines()[1:]) + "\n")
    comparison = stats.compare_files(b, c, column="ms").result
    assert comparison.blocks is None and comparison.per_block == []


# ---- unpaired ------------------------------------------------------------------------------------------


def _rsqrt_by_process(shared: Path, tmp: Path) -> tuple[Path, Path]:
    """An A/A across two processes: the same rsqrt kernel in the two ranks of one real job (nsys export
    h100_2gpu_1s, one process per GPU), rank 0's 56 launches as the baseline, rank 1's as the candidate."""
    db = sqlite3.connect(shared / "public/nsys/h100_2gpu_1s.sqlite")
    rows = db.execute(
        "SELECT k.globalPid >> 24, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE '%rsqrt_kernel%' ORDER BY k.start"
    ).fetchall()
    db.close()
    pids = sorted({pid for pid, _ in rows})
    files = []
    for name, pid in zip(("base.csv", "cand.csv"), pids, strict=True):
        path = tmp / name
        path.write_text("process,duration_ns\n" + "".join(f"{p},{d}\n" for p, d in rows if p == pid))
        files.append(path)
    return files[0], files[1]


def test_an_unpaired_aa_across_two_processes_warns_that_blocks_are_too_few(
    shared: Path, tmp_path: Path
) -> None:
    b, c = _rsqrt_by_process(shared, tmp_path)
    run = gpuopt("stats", "compare", str(b), str(c), "--unpaired", "--column", "duration_ns", "--json")
    assert run.code == 0, run.stderr
    comparison = run.json()["data"]["comparison"]
    # Rows resampled as if independent call the A/A a regression ...
    assert (comparison["verdict"], comparison["n_baseline"], comparison["n_candidate"]) == (
        "regressed",
        56,
        56,
    )
    assert comparison["estimate_pct"] == pytest.approx(100 * (1440 / 1536 - 1), rel=1e-12)
    assert (comparison["ci_low_pct"], comparison["ci_high_pct"]) == pytest.approx(
        (100 * (1440 / 1536 - 1), 100 * (1472 / 1536 - 1)), rel=1e-12
    )
    # ... and the process column says why that is not evidence: each side is one process.
    assert comparison["blocks"] == {"column": "process", "blocks": 2, "resampled": False, "disagree": False}
    assert [(p["side"], p["case_id"], p["n"]) for p in comparison["per_block"]] == [
        ("baseline", "16777327", 56),
        ("candidate", "16777328", 56),
    ]
    [warning] = comparison["warnings"]
    assert warning["code"] == "blocks_too_few"
    assert warning["message"].startswith(
        'each side\'s calls come from fewer than 2 blocks (baseline 1, candidate 1) of column "process"'
    )
    # Resampling blocks gives no CI at all: one block per side measures nothing between processes.
    blocked = stats.compare_files(b, c, column="duration_ns", unpaired=True, block_column="process").result
    assert (blocked.verdict, blocked.ci_low_pct, blocked.ci_high_pct) == ("inconclusive", None, None)


def _process_files(tmp: Path) -> tuple[Path, Path]:
    """An A/A of one kernel over six processes, three per side: 40 launches each, 1 % apart inside a
    process, each process at its own level (clocks, placement: the rsqrt ranks above are 6.25 % apart)."""
    files = []
    for name, levels in (
        ("base.csv", {"p0": 1.00, "p1": 1.06, "p2": 0.97}),
        ("cand.csv", {"p3": 1.04, "p4": 0.99, "p5": 1.08}),
    ):
        lines = ["pid,duration_ns"]
        for pid, level in levels.items():
            lines += [f"{pid},{1440 * level * (1 + 0.002 * ((i * 7) % 11 - 5))!r}" for i in range(40)]
        path = tmp / name
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return files[0], files[1]


def test_unpaired_blocks_that_disagree_warn_and_block_resampling_clears_the_false_regression(
    tmp_path: Path,
) -> None:
    b, c = _process_files(tmp_path)
    run = gpuopt("stats", "compare", str(b), str(c), "--unpaired", "--column", "duration_ns", "--json")
    assert run.code == 0, run.stderr
    rows = run.json()["data"]["comparison"]
    # The pooled medians are those of the middle processes, p0 (1.00) and p3 (1.04).
    assert rows["estimate_pct"] == pytest.approx(100 * (1 / 1.04 - 1), rel=1e-9)
    assert rows["verdict"] == "regressed"
    assert (rows["ci_low_pct"], rows["ci_high_pct"]) == pytest.approx(
        (-4.6138492246276535, -2.977341820412494)
    )
    assert rows["blocks"] == {"column": "pid", "blocks": 6, "resampled": False, "disagree": True}
    per_block = {(p["side"], p["case_id"]): p for p in rows["per_block"]}
    # A baseline block against the candidate's pooled median (1.04), a candidate block against the
    # baseline's (1.00): lower is better, so a slower baseline block reads as an improvement.
    assert per_block[("baseline", "p1")]["estimate_pct"] == pytest.approx(100 * (1.06 / 1.04 - 1), rel=1e-9)
    assert per_block[("candidate", "p5")]["estimate_pct"] == pytest.approx(100 * (1 / 1.08 - 1), rel=1e-9)
    [warning] = rows["warnings"]
    assert warning["code"] == "dependent_samples_suspected"
    assert warning["message"].startswith('calls come in 6 blocks of column "pid" whose effects disagree')
    assert "baseline p1: +1.92 %" in warning["message"] and "--block-column pid" in warning["message"]
    human = gpuopt("stats", "compare", str(b), str(c), "--unpaired", "--column", "duration_ns")
    assert (
        "Per block of 'pid' (diagnosed only; each block against the other side's pooled calls)"
        in human.stdout
    )
    assert "candidate p5" in human.stdout
    # Each side's blocks resampled on their own: the same estimate, a CI that holds 0, no verdict.
    blocked = stats.compare_files(b, c, column="duration_ns", unpaired=True, block_column="pid").result
    assert blocked.estimate_pct == pytest.approx(rows["estimate_pct"], rel=1e-12)
    assert blocked.blocks is not None and blocked.blocks.resampled and blocked.ci_method_run == "percentile"
    assert (blocked.verdict, blocked.verdict_reason, blocked.warnings) == (
        "inconclusive",
        "ci_spans_threshold",
        [],
    )
    assert (blocked.ci_low_pct, blocked.ci_high_pct) == pytest.approx((-9.100901706535462, 5.793521698094269))
    again = stats.compare_files(b, c, column="duration_ns", unpaired=True, block_column="pid").result
    assert (again.ci_low_pct, again.ci_high_pct) == (blocked.ci_low_pct, blocked.ci_high_pct)
