"""``gpuopt stats compare`` and ``gpuopt stats noise`` through the real entry point, on NVIDIA's own CSV
export, on pairs built from a real Nsight Systems capture, and on every bad-input class (exit 2)."""

from __future__ import annotations

import csv
import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from conftest import gpuopt

TRACE_CSV = "h200/nsys/stats_cuda_gpu_trace.csv"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_compare_nvidia_trace_csv_against_itself(shared: Path) -> None:
    trace = shared / TRACE_CSV
    with trace.open() as f:
        rows = list(csv.DictReader(f))
    run = gpuopt("stats", "compare", str(trace), str(trace), "--column", "Duration (ns)", "--json")
    assert run.code == 0, run.stderr
    env = run.json()
    assert env["schema"] == "gpuopt.stats.compare/v1"
    c = env["data"]["comparison"]
    assert c["n"] == len(rows) == 266
    assert (c["estimate_log"], c["ci_low_log"], c["ci_high_log"]) == (0.0, 0.0, 0.0)
    assert (c["verdict"], c["rng"], c["resamples"], c["seed"]) == ("inconclusive", "gpuopt.rng/v1", 10000, 0)
    files = env["data"]["files"]
    assert files[0]["format"] == "csv" and files[0]["value_column"] == "Duration (ns)"
    unmodeled = {u["name"]: u["count"] for u in env["unmodeled"]}
    assert unmodeled["Name"] == 2 * 266 and "Duration (ns)" not in unmodeled
    assert [p["path"] for p in env["provenance"]["inputs"]] == [str(trace), str(trace)]
    pairs = env["data"]["pairs"]
    assert pairs["total_rows"] == 266 and len(pairs["rows"]) == 50 and pairs["truncated"]
    assert pairs["rows"][2]["baseline_value"] == float(rows[2]["Duration (ns)"])
    # With a minimum effect, identical runs are equivalent.
    eq = gpuopt(
        "stats", "compare", str(trace), str(trace), "--column", "Duration (ns)", "--min-effect", "1", "--json"
    )
    assert eq.json()["data"]["comparison"]["verdict"] == "equivalent"


def _step_pairs(shared: Path) -> list[tuple[str, str, int, int]]:
    """A/A pairs from a real capture: kernel i of step k against kernel i of step k + 1 (same work)."""
    con = sqlite3.connect(f"file:{shared / 'h200/nsys/eager.sqlite'}?mode=ro", uri=True)
    names = dict(con.execute("SELECT id, value FROM StringIds"))
    steps = list(con.execute("SELECT start, end FROM NVTX_EVENTS WHERE text LIKE 'step_%' ORDER BY start"))
    kernels = [
        list(
            con.execute(
                "SELECT shortName, end - start FROM CUPTI_ACTIVITY_KIND_KERNEL "
                "WHERE start >= ? AND end <= ? ORDER BY start",
                (s, e),
            )
        )
        for s, e in steps
    ]
    out = []
    for k in range(1, 4):
        for i, ((name_a, d_a), (name_b, d_b)) in enumerate(zip(kernels[k], kernels[k + 1], strict=True)):
            assert name_a == name_b
            out.append((f"s{k}k{i}", names[name_a], d_a, d_b))
    return out


def test_noise_on_real_kernel_pairs(shared: Path, tmp_path: Path) -> None:
    pairs = _step_pairs(shared)
    aa = tmp_path / "aa.csv"
    with aa.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["pair", "kernel", "first_ns", "second_ns"])
        w.writerows(pairs)
    run = gpuopt(
        "stats", "noise", str(aa), "--first-column", "first_ns", "--second-column", "second_ns",
        "--key-column", "pair", "--min-effect", "1", "--json",
    )  # fmt: skip
    assert run.code == 0, run.stderr
    r = run.json()["data"]["noise"]
    logs = np.log(np.array([p[2] for p in pairs], float) / np.array([p[3] for p in pairs], float))
    assert r["n"] == len(pairs) == 66
    assert r["sd_log"] == pytest.approx(float(np.std(logs, ddof=1)), rel=1e-12)
    assert r["median_log"] == pytest.approx(float(np.median(logs)), abs=1e-15)
    assert [a["n_pairs"] for a in r["at"]] == [10, 66, 132]
    assert r["aa"]["estimate_log"] == pytest.approx(float(np.median(logs)), abs=1e-15)
    assert {u["name"] for u in run.json()["unmodeled"]} == {"kernel"}


def test_compare_real_kernel_pairs_by_key_with_cases(shared: Path, tmp_path: Path) -> None:
    pairs = _step_pairs(shared)
    base = tmp_path / "base.jsonl"
    cand = tmp_path / "cand.jsonl"
    base.write_text("".join(json.dumps({"pair": p, "kernel": k, "ns": a}) + "\n" for p, k, a, _ in pairs))
    # The candidate file lists the same pairs in reverse: pairing is by key, not by line.
    cand.write_text(
        "".join(json.dumps({"pair": p, "kernel": k, "ns": b}) + "\n" for p, k, _, b in pairs[::-1])
    )
    run = gpuopt(
        "stats", "compare", str(base), str(cand), "--column", "ns", "--key-column", "pair",
        "--case-column", "kernel", "--resamples", "2000", "--json",
    )  # fmt: skip
    assert run.code == 0, run.stderr
    c = run.json()["data"]["comparison"]
    kernels = list(dict.fromkeys(k for _, k, _, _ in pairs))
    assert [p["case_id"] for p in c["per_case"]] == kernels
    assert sum(p["n"] for p in c["per_case"]) == c["n"] == 66
    logs = [math.log(a / b) for _, _, a, b in pairs]
    assert c["estimate_log"] == pytest.approx(float(np.median(logs)), abs=1e-15)
    rows = run.json()["data"]["pairs"]["rows"]
    assert rows[0]["key"] == pairs[0][0] and rows[0]["candidate_value"] == pairs[0][3]


def test_compare_bare_values_and_human_output(tmp_path: Path) -> None:
    base = _write(tmp_path / "base.txt", "\n".join(str(10 + 0.01 * (i % 5)) for i in range(20)) + "\n")
    cand = _write(tmp_path / "cand.txt", "\n".join(str(8 + 0.01 * (i % 3)) for i in range(20)) + "\n")
    run = gpuopt("stats", "compare", str(base), str(cand), "--min-effect", "5")
    assert run.code == 0, run.stderr
    assert "verdict" in run.stdout and "improved" in run.stdout
    assert "gpuopt.rng/v1" in run.stdout
    out = tmp_path / "pairs.parquet"
    run = gpuopt("stats", "compare", str(base), str(cand), "--out", str(out), "--json")
    import polars as pl

    assert pl.read_parquet(out).height == 20
    assert run.json()["data"]["comparison"]["verdict"] == "improved"


def test_too_few_pairs_is_inconclusive_and_exit_0(tmp_path: Path) -> None:
    base = _write(tmp_path / "b.csv", "ms\n10\n10.1\n10.2\n")
    cand = _write(tmp_path / "c.csv", "ms\n20\n20.1\n20.2\n")
    run = gpuopt("stats", "compare", str(base), str(cand), "--json")
    assert run.code == 0
    c = run.json()["data"]["comparison"]
    assert (c["verdict"], c["verdict_reason"], c["pairs_needed_estimate"]) == (
        "inconclusive",
        "too_few_pairs",
        10,
    )


def test_unpaired_compare(tmp_path: Path) -> None:
    base = _write(tmp_path / "b.txt", "\n".join(str(10 + 0.1 * (i % 7)) for i in range(30)))
    cand = _write(tmp_path / "c.txt", "\n".join(str(12 + 0.1 * (i % 5)) for i in range(25)))
    run = gpuopt("stats", "compare", str(base), str(cand), "--unpaired", "--direction", "higher", "--json")
    assert run.code == 0, run.stderr
    c = run.json()["data"]["comparison"]
    assert (c["pairing"], c["n_baseline"], c["n_candidate"], c["verdict"]) == ("unpaired", 30, 25, "improved")
    assert run.json()["data"]["pairs"]["name"] == "values"


@pytest.mark.parametrize(
    ("base", "cand", "extra", "code", "path_end"),
    [
        ("ms\n1\n2\n", "ms\n1\n-2\n", [], "nonpositive_metric_value", "c.csv:3"),
        ("ms\n1\n2\n", "ms\n1\n0\n", [], "nonpositive_metric_value", "c.csv:3"),
        ("ms\n1\nnan\n", "ms\n1\n2\n", [], "nonfinite_metric_value", "b.csv:3"),
        ("ms\n1\n2\n", "ms\n1\n2\n3\n", [], "pair_count_mismatch", None),
        ("a,b\n1,2\n", "a,b\n1,2\n", [], "column_missing", None),
        ("ms\n1\n2\n", "ms\n1\n2\n", ["--column", "nope"], "column_missing", None),
        ("ms\n1\nabc\n", "ms\n1\n2\n", [], "format_invalid", "b.csv:3"),
        ("", "ms\n1\n", [], "format_invalid", None),
        ("k,ms\nx,1\ny,2\n", "k,ms\nx,1\nz,2\n", ["--key-column", "k"], "pair_key_unmatched", None),
        (
            "k,ms\nx,1\n",
            "k,ms\nx,1\n",
            ["--within-call", "p95", "--key-column", "k"],
            "samples_too_few",
            None,
        ),
    ],
)
def test_bad_input_exits_2_with_a_code(
    tmp_path: Path, base: str, cand: str, extra: list[str], code: str, path_end: str | None
) -> None:
    b = _write(tmp_path / "b.csv", base)
    c = _write(tmp_path / "c.csv", cand)
    run = gpuopt("stats", "compare", str(b), str(c), *extra, "--json")
    assert run.code == 2, run.stdout + run.stderr
    error = run.json()["errors"][0]
    assert error["code"] == code
    if path_end is not None:
        assert error["path"].endswith(path_end)
    assert "Traceback" not in run.stderr


def test_bad_input_without_json_is_one_line_on_stderr(tmp_path: Path) -> None:
    b = _write(tmp_path / "b.csv", "ms\n1\n2\n")
    c = _write(tmp_path / "c.csv", "ms\n1\n-2\n")
    run = gpuopt("stats", "compare", str(b), str(c))
    assert run.code == 2 and run.stdout == ""
    assert run.stderr.startswith("error[nonpositive_metric_value]: ")
    assert "Traceback" not in run.stderr


def test_bad_jsonl_and_missing_file_exit_2(tmp_path: Path) -> None:
    b = _write(tmp_path / "b.jsonl", '{"ms": 1}\n{"ms": 2\n')
    run = gpuopt("stats", "compare", str(b), str(b), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "format_invalid"
    assert run.json()["errors"][0]["path"].endswith("b.jsonl:2")
    run = gpuopt("stats", "noise", str(tmp_path / "absent.csv"), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "file_not_found"
    few = _write(tmp_path / "aa.csv", "a,b\n1,1\n")
    run = gpuopt("stats", "noise", str(few), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "noise_too_few_pairs"
    run = gpuopt("stats", "compare", str(few), str(few), "--resamples", "10", "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "usage_invalid"


def test_large_effects_print_the_ratio_beside_the_percent(tmp_path: Path) -> None:
    # Candidate 1000 times faster on every pair: effect +99,900 %, printed as 1,000x better.
    base = _write(
        tmp_path / "base.txt", "\n".join(str(10.0 * (1 + 0.001 * (i % 4))) for i in range(20)) + "\n"
    )
    cand = _write(
        tmp_path / "cand.txt", "\n".join(str(0.01 * (1 + 0.001 * (i % 4))) for i in range(20)) + "\n"
    )
    run = gpuopt("stats", "compare", str(base), str(cand), "--min-effect", "5")
    assert run.code == 0, run.stderr
    assert "+99900.000 % (1,000x better)" in run.stdout


def test_ratio_note_reads_both_ways() -> None:
    from gpuopt._effects import ratio_note

    assert ratio_note(106130.0) == " (1,062x better)"
    assert ratio_note(150.0) == " (2.50x better)"
    assert ratio_note(-60.0) == " (2.50x worse)"
    assert ratio_note(40.0) == ""
    assert ratio_note(None) == ""
    from gpuopt._effects import effect

    assert effect(5483.7) == "+5483.70 % (55.84x better)"  # the report and hand-off show it so
    assert effect(5.7) == "+5.70 %" and effect(None) == "—"


def test_a_missing_value_column_names_the_options_that_choose_it(tmp_path: Path) -> None:
    """Several columns could hold the value: the error counts them and names the options (fresh-agent
    trial); the column names themselves are the file's first line, which an error never repeats."""
    lines = "".join(json.dumps({"pair": i, "time_ms": 10.0 + i / 10}) + "\n" for i in range(6))
    a, b = _write(tmp_path / "a.jsonl", lines), _write(tmp_path / "b.jsonl", lines)
    run = gpuopt("stats", "compare", str(a), str(b), "--json")
    assert run.code == 2
    error = run.json()["errors"][0]
    assert error["code"] == "column_missing"
    assert "among the 2 candidate columns" in error["expected"] and "--key-column" in error["expected"]
    assert "time_ms" not in json.dumps(error)
    table = _write(tmp_path / "t.csv", "pair,time_ms,host\n" + "".join(f"{i},{i + 1},h\n" for i in range(6)))
    error = gpuopt("stats", "compare", str(table), str(table), "--json").json()["errors"][0]
    assert "among the 3 candidate columns" in error["expected"] and "host" not in json.dumps(error)
    aa = _write(tmp_path / "aa.csv", "first,second\n" + "".join(f"{i + 1},{i + 1.5}\n" for i in range(6)))
    error = gpuopt("stats", "noise", str(aa), "--json").json()["errors"][0]
    assert (
        error["code"] == "column_missing"
        and "--first-column NAME and --second-column NAME" in error["expected"]
    )
