"""``gpuopt profile diff`` on real captures: comparability, CIs over captures, BH control, bad input.

Captures with k ≥ 2 per side come from real files split honestly: the 5 NVTX steps of one nsys capture
(``h200/nsys/eager.sqlite``) as 5 captures of one step each, and per-capture tables resampled from the
real kernel instances of a capture (the A/A null and an injected change of one kernel).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from conftest import gpuopt
from gpuopt import profile
from gpuopt._profile_sources import Capture, load, normalise
from gpuopt.errors import InputError
from gpuopt.models.profile import NO_UNCERTAINTY, CaptureFacts

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first


@pytest.fixture(scope="module")
def eager(shared: Path) -> Path:
    return shared / "h200" / "nsys" / "eager.sqlite"


def _steps(eager: Path, steps: list[int]) -> list[Capture]:
    return [load(eager, "kernel", nvtx=f"step_{i}") for i in steps]


def test_steps_of_one_capture_are_captures_with_exact_totals(eager: Path) -> None:
    con = sqlite3.connect(eager)
    # Ground truth by SQL: kernels launched inside step_1 (runtime call start within the NVTX range).
    (count, total) = con.execute(
        """SELECT count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k
           JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
           JOIN NVTX_EVENTS n ON n.text = 'step_1' AND r.start >= n.start AND r.start < n.end"""
    ).fetchone()
    capture = load(eager, "kernel", nvtx="step_1")
    assert capture.table["count"].sum() == count
    assert capture.table["total_ns"].sum() == total
    assert capture.facts.kind == "nsys" and capture.facts.gpus == ["NVIDIA H200"]
    assert capture.facts.driver == "580.159.04 (CUDA 13000)"  # TARGET_INFO_SYSTEM_ENV


def test_aa_over_steps_flags_nothing_and_every_ci_is_finite(eager: Path) -> None:
    result = profile.diff(_steps(eager, [1, 3]), _steps(eager, [2, 4]))
    table = result.table
    assert result.counts.flagged == 0
    assert result.counts.new == result.counts.vanished == 0
    assert result.method.pairing == "unpaired"
    assert "Benjamini-Hochberg" in result.method.multiple_comparisons
    assert table["ci_low_ns"].null_count() == 0
    # No flag, so every interval holds 0 (level 1 - 0.05/m).
    assert ((table["ci_low_ns"] <= 0) & (table["ci_high_ns"] >= 0)).all()
    assert result.method.key_ci_level == pytest.approx(1 - 0.05 / result.counts.tested)
    assert not [w for w in result.warnings if w.code == "work_differs"]
    # The change is the difference of the per-capture means, exactly.
    row = table.row(0, named=True)
    assert row["change_ns"] == pytest.approx(row["candidate_mean_ns"] - row["baseline_mean_ns"])


def test_one_capture_per_side_says_it_has_no_uncertainty(shared: Path) -> None:
    nsys = shared / "public" / "nsys"
    result = profile.diff_files([nsys / "mfu_2gpu_before.sqlite"], [nsys / "mfu_2gpu_after.sqlite"])
    assert result.kind == "nsys"
    assert result.method.uncertainty == NO_UNCERTAINTY
    assert result.method.pairing == "none"
    assert result.table["ci_low_ns"].null_count() == result.table.height
    assert result.table["p_value"].null_count() == result.table.height
    assert result.counts.flagged == 0
    assert any(w.code == "no_uncertainty" for w in result.warnings)


def test_the_hta_trace_diff_pair_was_made_on_two_gpu_models(shared: Path) -> None:
    # HTA's own TraceDiff example compares an A100 trace with a V100 trace; gpuopt refuses.
    torch = shared / "public" / "torch"
    with pytest.raises(InputError) as err:
        profile.diff_files(
            [torch / "hta_trace_diff_control_control.json.gz"], [torch / "hta_trace_diff_test_test.json.gz"]
        )
    assert err.value.code == "profile_gpus_differ"
    assert err.value.expected == "NVIDIA A100-PG509-200" and err.value.observed == "Tesla V100-SXM2-16GB"


def test_nsys_ai_before_after_pair_counts_the_detected_iterations(shared: Path) -> None:
    # nsys-ai's diff called this pair "improvement_likely, -29 %" without a warning. The captures hold
    # 4,010 and 3,587 kernels and no step marker; their launch sequences repeat one unit of 157 operations,
    # 16 times before and 14 times after (device 0 of each; device 1 agrees): fewer steps, not only faster
    # ones. gpuopt compares per detected iteration and says so.
    nsys = shared / "public" / "nsys"
    result = profile.diff_files([nsys / "mfu_2gpu_before.sqlite"], [nsys / "mfu_2gpu_after.sqlite"])
    work = result.comparability.work
    assert (result.baseline[0].kernels, result.candidate[0].kernels) == (4010, 3587)
    assert (work.source, work.step_ranges, work.steps_baseline, work.steps_candidate) == (
        "detected",
        [],
        [16],
        [14],
    )
    assert work.per_step and result.method.values == "time per step (step counts differ)"
    warning = next(w for w in result.warnings if w.code == "steps_differ")
    assert (
        "detected from their launch sequences" in warning.message
        and "baseline [16], candidate [14]" in warning.message
    )
    assert not [w for w in result.warnings if w.code in ("work_differs", "work_unknown")]
    assert result.totals[1].name == "GPU time of a detected iteration"
    assert result.totals[1].baseline == [pytest.approx(257977819 / 16)]
    assert result.totals[1].candidate == [pytest.approx(221341272 / 14)]
    # Run identities (session UUID, duration) are not capture settings: no capture_options warning.
    assert not [w for w in result.warnings if w.code == "capture_options_differs"]


def test_work_is_unknown_where_a_capture_has_no_repeat(shared: Path) -> None:
    # ncu reports hold no launch sequence to detect iterations in: the work stays unknown.
    ncu = shared / "h200" / "ncu" / "kernels_full.ncu-rep"
    result = profile.diff_files([ncu], [Path(__file__).parent / "data" / "ncu_collect" / "report.ncu-rep"])
    assert result.comparability.work.source == "unknown"
    warning = next(w for w in result.warnings if w.code == "work_unknown")
    assert "no iterations detected in every capture" in warning.message


@pytest.mark.parametrize("marker", [":aten::copy_", "aten::copy_"])
def test_nvtx_marker_counts_the_steps_and_op_ids_are_stripped(shared: Path, marker: str) -> None:
    nsys = shared / "public" / "nsys"
    before, after = nsys / "mfu_2gpu_before.sqlite", nsys / "mfu_2gpu_after.sqlite"
    result = profile.diff_files([before], [after], by="nvtx", marker=marker)
    work = result.comparability.work
    assert (work.source, work.step_ranges) == ("marker", [":aten::copy_"])
    assert (work.steps_baseline, work.steps_candidate, work.per_step) == ([2840], [2524], True)
    assert result.baseline[0].steps == 2840
    assert result.baseline[0].kernels_per_step == pytest.approx(4010 / 2840)
    assert result.method.values == "time per step (step counts differ)"
    assert any(w.code == "steps_differ" for w in result.warnings)
    row = result.table.filter(pl.col("key") == ":FlashAttnFunc").row(0, named=True)
    assert (row["baseline_count"], row["candidate_count"]) == (67, 60)
    # 18,499 distinct raw ranges ("…, op_id = 999599") collapse to a few hundred keys.
    assert not result.table.filter(pl.col("key").str.contains("op_id")).height
    assert result.baseline[0].keys < 1000


def _instances(path: Path) -> pl.DataFrame:
    con = sqlite3.connect(path)
    rows = con.execute(
        """SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k
           JOIN StringIds s ON s.id = k.demangledName"""
    ).fetchall()
    return pl.DataFrame(rows, schema={"key": pl.String, "ns": pl.Float64}, orient="row")


def _resampled(instances: pl.DataFrame, rng: np.random.Generator, slower: dict[str, float]) -> Capture:
    """One simulated capture: every kernel instance drawn again from the real ones (same counts)."""
    parts = []
    for (key,), group in instances.group_by("key", maintain_order=True):
        ns = group["ns"].to_numpy()
        drawn = rng.choice(ns, size=ns.size, replace=True) * slower.get(str(key), 1.0)
        parts.append((str(key), int(ns.size), float(drawn.sum())))
    table = normalise(pl.DataFrame(parts, schema=["key", "count", "total_ns"], orient="row"), "kernel")
    facts = CaptureFacts(
        path="resampled",
        kind="nsys",
        gpus=["NVIDIA H200"],
        driver=None,
        tool="nsys",
        options={},
        cuda_graph_trace=None,
        keys=table.height,
        events=int(table["count"].sum()),
        total_ns=int(table["total_ns"].sum()),
        kernels=int(table["count"].sum()),
        kernel_time_ns=int(table["total_ns"].sum()),
        steps=None,
        kernels_per_step=None,
    )
    return Capture(facts, table, pl.DataFrame(schema={"name": pl.String, "count": pl.Int64}))


def test_a_changed_kernel_is_flagged_with_a_ci_excluding_zero(eager: Path) -> None:
    instances = _instances(eager)
    heaviest = str(instances.group_by("key").agg(pl.col("ns").sum()).sort("ns")["key"][-1])
    rng = np.random.default_rng(15)
    base = [_resampled(instances, rng, {}) for _ in range(5)]
    cand = [_resampled(instances, rng, {heaviest: 0.6}) for _ in range(5)]
    result = profile.diff(base, cand)
    row = result.table.filter(
        pl.col("key")
        == normalise(pl.DataFrame({"key": [heaviest], "count": [1], "total_ns": [0.0]}), "kernel")["key"][0]
    ).row(0, named=True)
    assert row["flagged"] and row["ci_high_pct"] < 0 and row["ci_low_pct"] < -30
    assert row["change_pct"] == pytest.approx(-40, abs=3)
    assert result.counts.flagged <= 2  # the one changed kernel, and at most one BH false discovery


def test_aa_false_discoveries_stay_at_the_declared_share(shared: Path) -> None:
    # The complete null: every key unchanged, so any flag is a false discovery and BH bounds the
    # chance of flagging anything at the FDR (5 %). 120 A/A diffs of 5 resampled captures a side.
    instances = _instances(shared / "public" / "nsys" / "h100_2gpu_1s.sqlite")
    rng = np.random.default_rng(2026)
    any_flag = 0
    for _ in range(120):
        base = [_resampled(instances, rng, {}) for _ in range(5)]
        cand = [_resampled(instances, rng, {}) for _ in range(5)]
        result = profile.diff(base, cand)
        any_flag += result.counts.flagged > 0
        outside = (result.table["ci_low_ns"] > 0) | (result.table["ci_high_ns"] < 0)
        assert (outside == result.table["flagged"]).all()
    # Binomial(120, 0.05) exceeds 12 with probability < 1 %.
    assert any_flag <= 12, any_flag


def test_paired_needs_equal_counts_and_changes_the_method(eager: Path) -> None:
    base, cand = _steps(eager, [1, 2]), _steps(eager, [3, 4])
    paired = profile.diff(base, cand, paired=True)
    assert paired.method.pairing == "paired"
    with pytest.raises(InputError) as err:
        profile.diff(base, _steps(eager, [0]) + cand, paired=True)
    assert err.value.code == "profile_pairs_unequal"


def test_nvtx_keys_drop_per_op_ids() -> None:
    frame = pl.DataFrame(
        {
            "key": ["aten::add, seq = 12, op_id = 34", "aten::add, seq = 13, op_id = 35", "ProfilerStep#7"],
            "count": [1, 2, 1],
            "total_ns": [10.0, 20.0, 5.0],
        }
    )
    out = normalise(frame, "nvtx")
    assert out.to_dicts() == [
        {"key": "ProfilerStep#*", "count": 1, "total_ns": 5.0},
        {"key": "aten::add", "count": 3, "total_ns": 30.0},
    ]
    spaced = normalise(frame.with_columns(key=pl.lit("void  k<int,\n float>()")), "kernel")
    assert spaced["key"].to_list() == ["void k<int, float>()"]


def test_cli_json_envelope_and_human_output(shared: Path) -> None:
    a, b = (shared / "gpuopt/h200/softmax/nsys" / f"sm_original_{s}_1.sqlite" for s in "ab")
    args = ["profile", "diff", "--baseline", str(a), "--candidate", str(b), "--marker", "measure"]
    run = gpuopt(*args, "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert run.json()["schema"] == "gpuopt.profile.diff/v2"
    assert data["method"]["uncertainty"] == NO_UNCERTAINTY
    assert data["counts"]["flagged"] == 0 and data["counts"]["keys"] == data["table"]["total_rows"]
    assert [f["same"] for f in data["comparability"]["facts"]] == [True] * 5
    assert [t["name"] for t in data["totals"]] == ["kernel time", "GPU time launched in a step"]
    whole = data["totals"][0]
    assert whole["baseline"] == [sum(r["baseline_mean_ns"] for r in data["table"]["rows"])]
    assert whole["ci_low_ns"] is None and whole["p_value"] is None
    human = gpuopt(*args)
    assert human.code == 0 and NO_UNCERTAINTY in human.stdout and "Comparability" in human.stdout
    assert (
        "GPU time launched in a step" in human.stdout
        and "steps             :measure: baseline [2]" in human.stdout
    )


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--baseline", "{eager}", "--candidate", "{torch}"], "profile_kinds_mixed"),
        (["--baseline", "{eager}", "--candidate", "{mock}"], "profile_gpus_differ"),
        (["--baseline", "{eager}", "--candidate", "/nonexistent.sqlite"], "file_not_found"),
        (["--baseline", "{eager}", "--candidate", "{other}", "--by", "op"], "profile_dimension_unavailable"),
        (["--baseline", "{eager}", "--candidate", "{eager}"], "profile_captures_duplicate"),
        (
            ["--baseline", "{eager}", "--baseline", "{eager}", "--candidate", "{other}"],
            "profile_captures_duplicate",
        ),
        (["--baseline", "{eager}", "--candidate", "{other}", "--marker", "stepp_1"], "name_unknown"),
        (["--baseline", "{readme}", "--candidate", "{eager}"], "profile_kind_unknown"),
    ],
)
def test_bad_input_is_a_typed_error(shared: Path, eager: Path, args: list[str], code: str) -> None:
    paths = {
        "eager": eager,
        "torch": shared / "public" / "torch" / "hta_trace_diff_test_test.json.gz",
        "mock": shared / "public" / "nsys" / "mock.sqlite",
        "other": shared / "gpuopt/h200/softmax/nsys/sm_original_a_1.sqlite",
        "readme": shared / "README.md",
    }
    run = gpuopt("profile", "diff", *[a.format(**paths) for a in args], "--json")
    assert run.code == 2, run.stderr
    envelope = json.loads(run.stdout)
    assert envelope["ok"] is False and envelope["errors"][0]["code"] == code


def test_ncu_reports_compare_by_kernel_with_their_collection_settings(shared: Path) -> None:
    ncu = shared / "public" / "ncu"
    result = profile.diff_files([ncu / "cutlass_report.ncu-rep"], [ncu / "cutlass_report-s4.ncu-rep"])
    facts = result.baseline[0]
    assert (result.kind, facts.gpus, facts.tool) == ("ncu", ["NVIDIA A100 80GB PCIe"], "ncu 2024.1.1.0")
    assert facts.options == {"clock_control": "base", "cache_control": "all"}
    assert (result.counts.keys, result.counts.new, result.counts.vanished) == (4, 2, 2)
    assert result.table.filter(pl.col("status") == "vanished")["change_pct"].to_list() == [-100.0, -100.0]
    assert any(w.code == "keys_one_side" for w in result.warnings)


@pytest.mark.parametrize(
    ("by", "keys", "events", "total_ns"),
    [
        ("kernel", 7, 66, 2776630),
        ("op", 28, 483, 10000439),  # the nested aten::sum counted once (issue 12.3): 36,385 ns fewer
        ("nvtx", 3, 3, 3714738),
        ("memcpy", 3, 27, 938108),
    ],
)
def test_torch_dimensions_read_the_torch_trace_tables(
    shared: Path, by: str, keys: int, events: int, total_ns: int
) -> None:
    from gpuopt import torch_trace

    path = shared / "h200" / "torch" / "eager_trace.json"
    facts = load(path, by).facts  # type: ignore[arg-type]
    assert (facts.keys, facts.events, facts.total_ns) == (keys, events, total_ns)
    assert (facts.gpus, facts.driver) == (["NVIDIA H200"], "13000")
    assert (facts.kernels, facts.kernel_time_ns) == (66, 2776630)  # every kernel, whatever the key
    if by == "kernel":
        kernels = torch_trace.open(path).kernels()
        assert (kernels["count"].sum(), kernels["total_ns"].sum()) == (events, total_ns)


def test_truncated_gzip_is_not_a_traceback(tmp_path: Path, eager: Path) -> None:
    bad = tmp_path / "trace.json.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    run = gpuopt("profile", "diff", "--baseline", str(bad), "--candidate", str(eager), "--json")
    assert run.code == 2, run.stderr
    assert run.json()["errors"][0]["code"] == "profile_kind_unknown"


def test_launch_line_is_not_a_capture_setting_but_the_trace_set_is(eager: Path, tmp_path: Path) -> None:
    # Captured through the Target, each call runs the driver with its own call folder and arguments (the
    # H200 A/A run warned `capture_options_differs` for that alone); a different trace set still warns.
    def copy(name: str, updates: list[tuple[str, str]]) -> Path:
        path = tmp_path / name
        path.write_bytes(eager.read_bytes())
        with sqlite3.connect(path) as db:
            for option, value in updates:
                sql = "UPDATE META_DATA_CAPTURE SET value=? WHERE name=?"
                assert db.execute(sql, (value, option)).rowcount
        return path

    launch = [("PROCESS_0:ARGUMENT_0", "/calls/c-2/driver.py"), ("PROCESS_0:WORKING_DIR", "/calls/c-2")]
    base, other = copy("a.sqlite", []), copy("b.sqlite", launch)
    result = profile.diff_files([base], [other])
    assert not [w for w in result.warnings if w.code == "capture_options_differs"]
    traced = copy("c.sqlite", [*launch, ("PROCESS_0:COLLECT_NVTX_TRACE", "false")])
    warnings = profile.diff_files([base], [traced]).warnings
    warning = next(w for w in warnings if w.code == "capture_options_differs")
    assert "PROCESS_0:COLLECT_NVTX_TRACE: ['true', 'false']" in warning.message
    assert "ARGUMENT_0" not in warning.message and "WORKING_DIR" not in warning.message


def test_a_byte_identical_copy_is_refused_naming_both_files(shared: Path, tmp_path: Path) -> None:
    folder = shared / "gpuopt/h200/softmax/torch"
    a1, a2 = folder / "sm_original_a_1.json.gz", folder / "sm_original_a_2.json.gz"
    copy = tmp_path / "copy.json.gz"
    copy.write_bytes(a1.read_bytes())
    with pytest.raises(InputError) as err:
        profile.diff_files([a1, a2], [copy, folder / "sm_original_b_1.json.gz"])
    assert err.value.code == "profile_captures_duplicate"
    assert str(a1) in str(err.value) and str(copy) in str(err.value) and "byte-identical" in str(err.value)


def test_eager_against_cuda_graph_replays_keeps_the_graph_time_and_names_the_trace_modes(
    shared: Path,
) -> None:
    # One capture a side: the eager decode (12 steps, kernels one by one) and the torch.compile decode
    # (12 steps, each one CUDA graph execution in a graph-level trace). `decode_step` finds ':decode_step'.
    eager = shared / "gpuopt/h200/decode/decode_eager.sqlite"
    graph = shared / "h200/graphs/graph_graph.sqlite"
    result = profile.diff_files([eager], [graph], marker="decode_step")
    work = result.comparability.work
    assert (work.step_ranges, work.steps_baseline, work.steps_candidate) == ([":decode_step"], [12], [12])
    row = result.table.filter(pl.col("key") == "[CUDA graph 4 exec 5]").row(0, named=True)
    assert (row["status"], row["candidate_count"], row["candidate_mean_ns"]) == ("new", 12, 2429967)
    cand = result.candidate[0]
    # Both captured with nsys' default graph-level tracing (the eager run simply launched no graph).
    assert cand.cuda_graph_trace == result.baseline[0].cuda_graph_trace == "graph"
    # Kernel time: 148 kernels (596,251 ns) and 12 graph executions (2,429,967 ns).
    assert (cand.kernels, cand.kernel_time_ns) == (160, 596251 + 2429967)
    assert result.totals[0].candidate == [596251 + 2429967]
    # Per step: the GPU time launched inside the decode steps (12 graph executions), not the prefill's.
    assert result.totals[1].name == "GPU time launched in a step"
    assert result.totals[1].candidate == [pytest.approx(2429967 / 12)]
    assert not [
        w for w in result.warnings if w.code in ("work_differs", "work_unknown", "cuda_graph_trace_differs")
    ]
    # The same decode steps traced node by node: the modes differ, and the warning says what that does.
    node = profile.diff_files([graph], [shared / "h200/graphs/graph_node.sqlite"], marker="decode_step")
    warning = next(w for w in node.warnings if w.code == "cuda_graph_trace_differs")
    assert (
        "['graph']" in warning.message
        and "['node']" in warning.message
        and "cudaGraphLaunch" in warning.message
    )


def test_flags_and_intervals_agree_on_real_captures_and_totals_have_their_own_level(shared: Path) -> None:
    folder = shared / "gpuopt/h200/softmax/nsys"
    base = [folder / f"sm_original_a_{i}.sqlite" for i in (1, 2, 3)]
    fast = [folder / f"sm_faster_{i}.sqlite" for i in (1, 2, 3)]
    result = profile.diff_files(base, fast, paired=True, marker="measure")
    table = result.table
    outside = (table["ci_low_ns"] > 0) | (table["ci_high_ns"] < 0)
    assert (outside == table["flagged"]).all() and result.counts.flagged == 6
    assert result.method.key_ci_level == pytest.approx(1 - 6 * 0.05 / 6)
    whole = result.totals[0]
    assert whole.ci_level == pytest.approx(0.95) and whole.ci_high_pct is not None and whole.ci_high_pct < -99


def test_a_marker_that_matches_nothing_lists_the_closest_names(shared: Path) -> None:
    folder = shared / "gpuopt/h200/softmax/nsys"
    with pytest.raises(InputError) as err:
        profile.diff_files(
            [folder / "sm_original_a_1.sqlite"], [folder / "sm_original_b_1.sqlite"], marker="mesure"
        )
    assert err.value.code == "name_unknown" and err.value.observed is not None
    assert err.value.observed.split(", ")[0] == ":measure"
