"""Bad input fails closed: a typed error with a stable code, exit 2 (3 for an absent nsys), no data."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from gpuopt import errors, nsys
from nsys_db import SCHEMA, Export


def expect_error(path: Path, code: str, *args: str) -> dict[str, Any]:
    run = gpuopt("nsys", "kernels", str(path), "--json", *args)
    assert run.code == 2, run.stdout + run.stderr
    env = run.json()
    assert env["ok"] is False and env["data"] is None
    assert env["errors"][0]["code"] == code, env["errors"]
    return dict(env["errors"][0])


def test_missing_file(tmp_path: Path) -> None:
    expect_error(tmp_path / "nope.sqlite", "file_not_found")


def test_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "report.sqlite"
    path.write_text("Time (%),Total Time (ns)\n")
    err = expect_error(path, "format_invalid")
    assert "SQLite" in err["expected"]
    with pytest.raises(errors.FormatError):
        nsys.open(path)


def test_truncated_export(shared: Path, tmp_path: Path) -> None:
    data = (shared / "h200/nsys/eager.sqlite").read_bytes()
    path = tmp_path / "cut.sqlite"
    path.write_bytes(data[: len(data) // 2])
    expect_error(path, "file_truncated")


def test_damaged_export_of_full_length_is_format_invalid_not_truncated(shared: Path, tmp_path: Path) -> None:
    """A page overwritten in place (the length the header gives, so nothing is cut): SQLite calls it
    malformed, and gpuopt says damaged, not truncated."""
    data = bytearray((shared / "h200/nsys/eager.sqlite").read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[2 * page : 3 * page] = b"\xa5" * page
    path = tmp_path / "damaged.sqlite"
    path.write_bytes(bytes(data))
    err = expect_error(path, "format_invalid")
    assert "damaged" in err["message"] and "truncated" not in err["message"]
    with pytest.raises(errors.FormatError):
        nsys.open(path).kernels()


def test_sqlite_without_nsys_tables(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.commit()
    con.close()
    err = expect_error(path, "version_unsupported")
    assert "META_DATA_EXPORT" in err["expected"]


def test_unknown_schema_major(tmp_path: Path) -> None:
    err = expect_error(Export(schema_version="4.0.0").write(tmp_path / "v4.sqlite"), "version_unsupported")
    assert (err["expected"], err["observed"]) == ("export schema 3.x up to 3.25.x", "4.0.0")
    with pytest.raises(errors.UnsupportedVersionError):
        nsys.open(tmp_path / "v4.sqlite")


def test_missing_string_table(tmp_path: Path) -> None:
    expect_error(Export(drop={"StringIds"}).write(tmp_path / "nostr.sqlite"), "nsys_table_missing")


def test_missing_required_column(tmp_path: Path) -> None:
    kernel = SCHEMA["CUPTI_ACTIVITY_KIND_KERNEL"].replace("shortName INTEGER NOT NULL, ", "")
    e = Export(columns={"CUPTI_ACTIVITY_KIND_KERNEL": kernel})
    err = expect_error(e.write(tmp_path / "nocol.sqlite"), "nsys_column_missing")
    assert "shortName" in err["message"]


def test_null_end(tmp_path: Path) -> None:
    e = Export()
    e.kernel(0, 10)
    e.kernel(20, None)
    err = expect_error(e.write(tmp_path / "null.sqlite"), "nsys_value_null")
    assert "CUPTI_ACTIVITY_KIND_KERNEL.end" in err["message"]


def test_inverted_interval(tmp_path: Path) -> None:
    e = Export()
    e.kernel(30, 20)
    expect_error(e.write(tmp_path / "inverted.sqlite"), "nsys_interval_inverted")


def test_dangling_string_id(tmp_path: Path) -> None:
    e = Export()
    e.kernel(0, 10, name="a")
    e.kernels.append((20, 30, 0, 1, 7, 0, 0, 99, 99, None))
    err = expect_error(e.write(tmp_path / "dangling.sqlite"), "nsys_string_dangling")
    assert err["observed"] == "id 99"


def test_a_data_error_names_the_export_it_was_found_in(shared: Path, tmp_path: Path) -> None:
    """An inverted kernel interval named its table and row but not the file: over several exports
    (`profile diff`, a glob) the user could not tell which one was bad."""
    good = tmp_path / "good.sqlite"
    bad = tmp_path / "bad.sqlite"
    shutil.copy(shared / "h200/nsys/eager.sqlite", good)
    shutil.copy(good, bad)
    with sqlite3.connect(bad) as db:
        db.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 5000000 WHERE rowid = 7')
    for args in (
        ["nsys", "critical-path", str(bad)],
        ["nsys", "timeline", str(bad)],
        ["nsys", "gaps", str(bad)],
        ["profile", "diff", "--baseline", str(good), "--candidate", str(bad)],
    ):
        run = gpuopt(*args, "--json")
        assert run.code == 2, (args, run.stdout)
        error = run.json()["errors"][0]
        assert (error["code"], error["path"]) == ("nsys_interval_inverted", str(bad)), (args, error)


def test_an_open_window_side_is_shown_empty_for_people(shared: Path) -> None:
    """The text header printed Python's `None` for an open side (`window 1:None`)."""
    file = str(shared / "h200/nsys/eager.sqlite")
    assert gpuopt("nsys", "kernels", file, "--window", "1:").stdout.splitlines()[0].endswith(", window 1:")
    timeline = gpuopt("nsys", "timeline", file, "--window", ":5s").stdout
    assert "(window :5000000000)" in timeline.splitlines()[0] and "None" not in timeline


@pytest.mark.parametrize("window", ["5:3", "abc", "1:2:3"])
def test_bad_window(shared: Path, window: str) -> None:
    expect_error(shared / "h200/nsys/eager.sqlite", "window_invalid", "--window", window)


def test_the_users_file_is_never_written(shared: Path, tmp_path: Path) -> None:
    path = shutil.copy(shared / "h200/nsys/eager.sqlite", tmp_path / "eager.sqlite")
    before = (hashlib.sha256(Path(path).read_bytes()).hexdigest(), os.stat(path).st_mtime_ns)
    report = nsys.open(path)
    for name in nsys.STATS_REPORTS:
        report.stats(name)
    report.timeline()
    report.info()
    after = (hashlib.sha256(Path(path).read_bytes()).hexdigest(), os.stat(path).st_mtime_ns)
    assert before == after
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eager.sqlite"]  # no journal, no WAL


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuopt", *args], capture_output=True, text=True, env=env, check=False
    )


def _isolated_env(tmp_path: Path, path_dirs: list[Path]) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(str(p) for p in path_dirs)
    env["GPUOPT_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("CUDA_HOME", None)
    env.pop("CUDA_PATH", None)
    return env


@pytest.mark.skipif(
    any(Path(p).exists() for p in ("/opt/nvidia/nsight-systems", "/usr/local/cuda/bin/nsys")),
    reason="this machine has nsys in a standard location",
)
def test_nsys_rep_without_nsys_is_exit_3(tmp_path: Path) -> None:
    rep = tmp_path / "profile.nsys-rep"
    rep.write_bytes(b"NVIDIA Tegra Profiler Report 2025@3@2@0\n")
    run = _run(["nsys", "kernels", str(rep), "--json"], _isolated_env(tmp_path, [tmp_path / "empty"]))
    assert run.returncode == 3, run.stdout + run.stderr
    err = json.loads(run.stdout)["errors"][0]
    assert err["code"] == "tool_absent"
    assert "nsys" in err["message"]


FAKE_NSYS = """#!/bin/sh
# A stand-in for nsys: prints a version and "exports" by copying a real SQLite export.
if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems version 2025.3.2.0-test"; exit 0; fi
echo "$@" >> "$FAKE_NSYS_LOG"
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--output" ]; then out="$2"; fi
  shift
done
cat "$FAKE_NSYS_SQLITE" > "$out"
"""


def test_nsys_rep_is_exported_once_and_recorded(shared: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nsys"
    fake.write_text(FAKE_NSYS)
    fake.chmod(0o755)
    rep = tmp_path / "profile.nsys-rep"
    rep.write_bytes(b"NVIDIA Tegra Profiler Report 2025@3@2@0\n")
    env = _isolated_env(tmp_path, [bin_dir, Path("/usr/bin"), Path("/bin")])
    env["FAKE_NSYS_SQLITE"] = str(shared / "h200/nsys/eager.sqlite")
    env["FAKE_NSYS_LOG"] = str(tmp_path / "calls.log")
    first = _run(["nsys", "kernels", str(rep), "--json"], env)
    assert first.returncode == 0, first.stdout + first.stderr
    data = json.loads(first.stdout)["data"]
    assert data["source"]["nsys_version"] == "2025.3.2.0"
    assert data["source"]["report_path"] == str(rep)
    assert data["source"]["cached"] is False
    assert data["source"]["sqlite_path"].startswith(str(tmp_path / "cache"))
    assert data["table"]["total_rows"] == 7
    second = json.loads(_run(["nsys", "kernels", str(rep), "--json"], env).stdout)["data"]
    assert second["source"]["cached"] is True
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert len(calls) == 1 and calls[0].startswith("export --type sqlite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "cache", "calls.log", "profile.nsys-rep"]


def _mutated(shared: Path, tmp_path: Path, *sql: str) -> Path:
    path = tmp_path / "mutated.sqlite"
    shutil.copyfile(shared / "h200/nsys/eager.sqlite", path)
    con = sqlite3.connect(path)
    for statement in sql:
        con.execute(statement)
    con.commit()
    con.close()
    return path


def test_sign_bit_flip_is_a_typed_error_naming_table_and_row(shared: Path, tmp_path: Path) -> None:
    # Issue 13.1: this one UPDATE once gave exit 0, `Time % -0.0` and a total of -9223372036854413636.
    path = _mutated(
        shared,
        tmp_path,
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start=start-9223372036854775807-1 WHERE rowid=5",
    )
    run = gpuopt("nsys", "stats", str(path), "--report", "cuda_gpu_kern_sum", "--json")
    assert run.code == 2, run.stdout + run.stderr
    err = run.json()["errors"][0]
    assert err["code"] == "nsys_timestamp_impossible"
    assert "CUPTI_ACTIVITY_KIND_KERNEL row 5" in err["message"]
    report = nsys.open(path)
    for call in (report.timeline, report.gaps, report.kernels, report.kernel_summary):
        with pytest.raises(errors.InputError, match="CUPTI_ACTIVITY_KIND_KERNEL row 5"):
            call()


def test_sums_past_int64_are_typed_errors_not_saturated(shared: Path, tmp_path: Path) -> None:
    # Four kernels of one name, each just under 2^62 ns: their total (~2^64) does not fit an int64.
    path = _mutated(
        shared,
        tmp_path,
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start=0, end=4611686018427387903, demangledName="
        "(SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid=1) WHERE rowid IN (1, 2, 3, 4)",
    )
    with pytest.raises(errors.InputError, match="total_time_ns overflows") as caught:
        nsys.open(path).stats("cuda_gpu_kern_sum")
    assert caught.value.code == "nsys_sum_overflow"
    assert int(caught.value.observed or 0) >= 4 * (2**62 - 1) > 2**63 - 1


def test_inverted_interval_names_the_row(shared: Path, tmp_path: Path) -> None:
    path = _mutated(shared, tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end=start-1 WHERE rowid=3")
    with pytest.raises(errors.InputError, match="CUPTI_ACTIVITY_KIND_MEMCPY row 3 ends before it starts"):
        nsys.open(path).timeline()


@pytest.mark.parametrize("table", ["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"])
def test_negative_bytes_are_a_typed_error_naming_the_row(shared: Path, tmp_path: Path, table: str) -> None:
    # Found by a hostile trial: `bytes = -1` gave exit 0 and a memset total of -58 B (a memcpy's
    # negative size silently lowered the total).
    path = _mutated(
        shared, tmp_path, f"UPDATE {table} SET bytes=-4096 WHERE rowid=(SELECT min(rowid) FROM {table})"
    )
    for command in (
        ["mem"],
        ["stats", "--report", "cuda_gpu_mem_size_sum"],
        ["export", "perfetto", "--out", str(tmp_path / "t.pftrace")],
    ):
        run = gpuopt("nsys", *command, str(path), "--json")
        assert run.code == 2, (command, run.stdout + run.stderr)
        err = run.json()["errors"][0]
        assert err["code"] == "nsys_value_invalid", err
        assert f"{table} row" in err["message"] and "bytes is negative" in err["message"]
        assert err["observed"] == "-4096"


def test_negative_timestamps_of_real_exports_are_kept(shared: Path) -> None:
    # Not every negative is damage: nsys writes graph events from before the session's origin with
    # negative start and end (h200/graphs: 8 CUDA_GRAPH_EVENTS rows of graph_graph.sqlite, 161
    # CUDA_GRAPH_NODE_EVENTS rows of graph_node.sqlite); `nsys graphs` reads the former.
    run = gpuopt("nsys", "graphs", str(shared / "h200/graphs/graph_graph.sqlite"), "--json")
    assert run.code == 0, run.stdout + run.stderr
