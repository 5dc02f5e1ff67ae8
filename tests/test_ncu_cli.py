"""``gpuopt ncu ...`` through the real entry point: envelopes, exit codes, collection."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import gpuopt
from gpuopt._ncu import collect as _ncu_collect
from gpuopt.schemas import json_schema


@pytest.fixture(scope="module")
def stem(shared: Path) -> Path:
    return shared / "h200" / "ncu" / "kernels_full"


def envelope(args: list[str], code: int = 0) -> dict[str, object]:
    run = gpuopt(*args, "--json")
    assert run.code == code, run.stderr + run.stdout
    doc = run.json()
    jsonschema.validate(doc, json_schema(doc["schema"]))
    return doc  # type: ignore[no-any-return]


def test_summary_of_a_rep(stem: Path) -> None:
    doc = envelope(["ncu", "summary", str(stem.with_suffix(".ncu-rep"))])
    assert doc["schema"] == "gpuopt.ncu.summary/v1"
    data = doc["data"]
    assert data["report"]["tool"]["version"] == "2025.3.1.0"  # type: ignore[index]
    assert data["report"]["launches"] == 12  # type: ignore[index]
    kernels = data["kernels"]  # type: ignore[index]
    assert [r["launches"] for r in kernels["rows"]] == [3, 3, 3, 3]
    assert [r["kernel_function"] for r in kernels["rows"]] == [
        "vec_add",
        "strided_copy",
        "local_spill",
        "wmma_gemm",
    ]
    assert doc["provenance"]["inputs"][0]["size_bytes"] == 17758457  # type: ignore[index]
    unmodeled = {u["name"] for u in doc["unmodeled"]}  # type: ignore[union-attr]
    assert "launch__func_cache_config" in unmodeled
    assert "gpu__time_duration.sum" not in unmodeled


def test_launches_from_raw_csv_with_session(stem: Path) -> None:
    doc = envelope(
        [
            "ncu",
            "launches",
            str(stem.with_suffix(".raw.csv")),
            "--session",
            str(stem.with_suffix(".session.csv")),
            "--kernel",
            "local_spill",
            "--limit",
            "0",
        ]
    )
    rows = doc["data"]["table"]["rows"]  # type: ignore[index]
    assert [r["launch_id"] for r in rows] == [2, 6, 10]
    assert {r["local_store_inst"] for r in rows} == {8388608.0}
    assert {r["tool_version"] for r in rows} == {"2025.3.1.0"}
    assert len(doc["provenance"]["inputs"]) == 2  # type: ignore[index]


def test_launches_human_output_and_out_file(stem: Path, tmp_path: Path) -> None:
    out = tmp_path / "launches.parquet"
    run = gpuopt("ncu", "launches", str(stem.with_suffix(".raw_base.csv")), "--out", str(out))
    assert run.code == 0, run.stderr
    assert "wmma_gemm" in run.stdout
    import polars as pl

    assert pl.read_parquet(out).height == 12


def test_table_rules_and_stalls(stem: Path) -> None:
    doc = envelope(["ncu", "table", str(stem.with_suffix(".details.csv")), "rules", "--limit", "0"])
    assert doc["data"]["table"]["total_rows"] == 129  # type: ignore[index]
    doc = envelope(["ncu", "table", str(stem.with_suffix(".raw_base.csv")), "warp_stalls", "--limit", "3"])
    assert doc["data"]["table"]["truncated"] is True  # type: ignore[index]


def test_roofline_with_measured_peaks(stem: Path) -> None:
    args = [
        "ncu",
        "roofline",
        str(stem.with_suffix(".raw_base.csv")),
        "--peak-flops",
        "fp32=5e13",
        "--limit",
        "0",
    ]
    doc = envelope(args)
    rows = [r for r in doc["data"]["table"]["rows"] if r["precision"] == "fp32"]  # type: ignore[index]
    assert {r["peak_flop_source"] for r in rows} == {"user"}
    assert {r["peak_dram_source"] for r in rows} == {"report"}
    bad = envelope(
        ["ncu", "roofline", str(stem.with_suffix(".raw_base.csv")), "--peak-flops", "fp32"], code=2
    )
    assert bad["errors"][0]["code"] == "ncu_peak_invalid"  # type: ignore[index]


def test_compare_rep_with_csv_of_the_same_report(stem: Path) -> None:
    doc = envelope(
        [
            "ncu",
            "compare",
            str(stem.with_suffix(".ncu-rep")),
            str(stem.with_suffix(".raw_base.csv")),
            "--limit",
            "0",
        ]
    )
    rows = doc["data"]["table"]["rows"]  # type: ignore[index]
    durations = [r for r in rows if r["metric"] == "duration_ns"]
    assert len(durations) == 4
    assert {r["delta"] for r in durations} == {0.0}  # durations print exactly in base units
    assert {(r["a_launches"], r["b_launches"]) for r in durations} == {(3, 3)}


def test_bad_inputs_exit_2(tmp_path: Path, stem: Path) -> None:
    garbage = tmp_path / "x.ncu-rep"
    garbage.write_bytes(b"garbage" * 10)
    doc = envelope(["ncu", "summary", str(garbage)], code=2)
    assert doc["errors"][0]["code"] == "format_invalid"  # type: ignore[index]
    doc = envelope(["ncu", "launches", str(tmp_path / "missing.csv")], code=2)
    assert doc["errors"][0]["code"] == "file_not_found"  # type: ignore[index]
    doc = envelope(["ncu", "launches", str(stem.with_suffix(".raw.csv")), "--kernel", "vec_add("], code=2)
    assert doc["errors"][0]["code"] == "usage_invalid"  # type: ignore[index]
    cut = tmp_path / "cut.csv"
    cut.write_text(stem.with_suffix(".raw.csv").read_text()[:-3000])
    doc = envelope(["ncu", "launches", str(cut)], code=2)
    assert doc["errors"][0]["code"] == "file_truncated"  # type: ignore[index]


# --- collection ----------------------------------------------------------------------------------------


def _no_ncu_env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}


def test_collect_without_ncu_is_exit_3(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuopt",
            "ncu",
            "collect",
            "--out",
            str(tmp_path / "o"),
            "--json",
            "--",
            "true",
        ],
        capture_output=True,
        text=True,
        env=_no_ncu_env(tmp_path),
        check=False,
    )
    assert done.returncode == 3, done.stderr
    error = json.loads(done.stdout)["errors"][0]
    assert error["code"] == "tool_absent"
    assert "Nsight Compute" in error["expected"]


def test_collect_command_construction() -> None:
    options = _ncu_collect.CollectOptions(
        kernel="gemm|conv",
        launch_skip=2,
        launch_count=3,
        sections=("SpeedOfLight", "Occupancy"),
        nvtx_include=("step/",),
    )
    argv = _ncu_collect.build_command(
        "/opt/ncu", Path("/runs/a"), ["python", "bench.py", "--n", "4096"], options
    )
    assert argv == [
        "/opt/ncu",
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--kernel-name",
        "regex:gemm|conv",
        "--launch-skip",
        "2",
        "--launch-count",
        "3",
        "--section",
        "SpeedOfLight",
        "--section",
        "Occupancy",
        "--nvtx",
        "--nvtx-include",
        "step/",
        "--export",
        "/runs/a/report",
        "python",
        "bench.py",
        "--n",
        "4096",
    ]
    full = _ncu_collect.build_command(
        "ncu", Path("o"), ["./app"], _ncu_collect.CollectOptions(set_name="full")
    )
    assert full == [
        *["ncu", "--clock-control", "none", "--target-processes", "all", "--set", "full"],
        *["--export", "o/report", "./app"],
    ]


def test_collect_rejects_set_with_section_and_base_clock_is_explicit() -> None:
    from gpuopt.errors import InputError

    with pytest.raises(InputError):
        _ncu_collect.build_command(
            "ncu", Path("o"), ["./app"], _ncu_collect.CollectOptions(set_name="full", sections=("Occupancy",))
        )
    base = _ncu_collect.build_command(
        "ncu", Path("o"), ["./app"], _ncu_collect.CollectOptions(clock_control="base")
    )
    assert base[1:3] == ["--clock-control", "base"]


FAKE_NCU = """#!{python}
# A stand-in for ncu on a machine without one: prints ncu's real banner and either writes a copy of a
# real report where --export points, or prints ncu's real counter-permission error.
import shutil, sys
args = sys.argv[1:]
if args == ["--version"]:
    sys.stdout.write(open({banner!r}).read())
    sys.exit(0)
mode = {mode!r}
print("==PROF== Connected to process 4242 (/tmp/app)")
if mode == "denied":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance"
          " Counters on the target device 0.")
    sys.exit(1)
out = args[args.index("--export") + 1]
# ncu 2026.3 writes the compressed .ncu-repz when the --export name has no extension.
shutil.copyfile({report!r}, out + (".ncu-repz" if mode == "repz" else ".ncu-rep"))
print("==PROF== Disconnected from process 4242")
"""


def _fake_ncu(tmp_path: Path, stem: Path, mode: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ncu"
    fake.write_text(
        FAKE_NCU.format(
            python=sys.executable,
            banner=str(stem.parent / "ncu_version.txt"),
            report=str(stem.with_suffix(".ncu-rep")),
            mode=mode,
        )
    )
    fake.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}:/usr/bin:/bin"}


def _collect(tmp_path: Path, env: dict[str, str]) -> tuple[int, dict[str, object]]:
    import subprocess

    out = tmp_path / "run"
    args = [
        "ncu",
        "collect",
        "--out",
        str(out),
        "--set",
        "full",
        "--launch-count",
        "4",
        "--json",
        "--",
        "true",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", *args], capture_output=True, text=True, env=env, check=False
    )
    return done.returncode, json.loads(done.stdout)


def test_collect_records_command_version_and_report(tmp_path: Path, stem: Path) -> None:
    env = _fake_ncu(tmp_path, stem, "ok")
    code, doc = _collect(tmp_path, env)
    assert code == 0, doc
    data = doc["data"]
    out = tmp_path / "run"
    assert data["report_path"] == str(out / "report.ncu-rep")  # type: ignore[index]
    assert data["clock_control"] == "none"  # type: ignore[index]
    assert data["ncu"]["version"] == "2025.3.1.0"  # type: ignore[index]
    argv = data["argv"]  # type: ignore[index]
    assert argv[1:] == [
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--launch-count",
        "4",
        "--set",
        "full",
        "--export",
        str(out / "report"),
        "true",
    ]
    assert data["command_line"] == shlex.join(argv)  # type: ignore[index]
    record = json.loads((out / "gpuopt-collect.json").read_text())
    assert record["argv"] == argv
    assert record["files"][0]["sha256"] == hashlib.sha256((out / "report.ncu-rep").read_bytes()).hexdigest()
    summary = envelope(["ncu", "summary", str(out / "report.ncu-rep")])
    assert summary["data"]["report"]["launches"] == 12  # type: ignore[index]
    again, second = _collect(tmp_path, env)
    assert again == 2
    assert second["errors"][0]["code"] == "ncu_output_exists"  # type: ignore[index]


def test_collect_finds_a_compressed_report(tmp_path: Path, stem: Path) -> None:
    """ncu 2026.3 writes report.ncu-repz for --export DIR/report: the record names it, not "no report"."""
    code, doc = _collect(tmp_path, _fake_ncu(tmp_path, stem, "repz"))
    assert code == 0, doc
    assert doc["data"]["report_path"] == str(tmp_path / "run" / "report.ncu-repz")  # type: ignore[index]


def test_collect_counter_permission_is_typed_and_changes_nothing(tmp_path: Path, stem: Path) -> None:
    code, doc = _collect(tmp_path, _fake_ncu(tmp_path, stem, "denied"))
    assert code == 3
    error = doc["errors"][0]  # type: ignore[index]
    assert error["code"] == "ncu_counter_access_denied"
    assert "NVreg_RestrictProfilingToAdminUsers=0" in error["message"]
    assert "gpuopt changes nothing" in error["message"]
    assert "ERR_NVGPUCTRPERM" in error["observed"]
    record = json.loads((tmp_path / "run" / "gpuopt-collect.json").read_text())
    assert record["report_path"] is None
    assert record["exit_code"] == 1
