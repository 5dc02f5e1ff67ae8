"""Hardening (issue 28): bytes that are not UTF-8 and output paths the OS refuses are typed errors (exit 2)
or one file's error row, never an internal error (exit 1) or a lost run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_inproc import run_main

NOT_UTF8 = b"\xff".decode("utf-8", "surrogateescape")  # what Python's argv holds for the byte 0xff


def _error(args: list[str], code: str) -> dict[str, object]:
    run = run_main(*args, "--json")
    assert run.code == 2, (args, run.code, run.stdout, run.stderr)
    env = json.loads(run.stdout)
    assert env["errors"][0]["code"] == code, env["errors"]
    return dict(env["errors"][0])


@pytest.fixture
def export(shared: Path) -> Path:
    return shared / "public/nsys/mfu_2gpu_after.sqlite"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["nsys", "kernels", "{export}", "--nvtx", NOT_UTF8], "--nvtx"),
        (["nsys", "timeline", "{export}", "--nvtx", "a" + NOT_UTF8], "--nvtx"),
        (["show", "{tmp}", "tgt-" + NOT_UTF8], "RECORD_ID"),
        (["show", "{tmp}", NOT_UTF8], "RECORD_ID"),
        (["stats", "compare", "{export}", "{export}", "--column", NOT_UTF8], "--column"),
        (["nsys", "kernels", "{export}", "--sort", NOT_UTF8], "--sort"),
        (["nsys", "kernels", "{export}", "--columns", NOT_UTF8], "--columns"),
    ],
)
def test_text_arguments_that_are_not_utf8_are_bad_input(
    args: list[str], named: str, export: Path, tmp_path: Path
) -> None:
    filled = [a.format(export=export, tmp=tmp_path) for a in args]
    error = _error(filled, "argument_not_utf8")
    assert error["path"] == named
    assert error["observed"] is not None and "\\xff" in str(error["observed"])
    human = run_main(*filled)
    assert human.code == 2 and f"error[argument_not_utf8]: {named} is not UTF-8 text" in human.stderr


@pytest.mark.parametrize("out", ["/proc/gpuopt-test.json", "/proc/gpuopt-test.csv", "/proc/self/x.parquet"])
def test_out_where_the_os_refuses_is_bad_input(export: Path, out: str) -> None:
    error = _error(["nsys", "kernels", str(export), "--out", out], "output_unwritable")
    assert error["path"] == out


def test_a_glob_match_that_is_not_utf8_is_its_own_row(export: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(export, runs / "a.sqlite")
    odd = runs / ("b" + NOT_UTF8 + ".sqlite")
    shutil.copy(export, odd)
    (runs / ("c" + NOT_UTF8 + ".sqlite")).write_bytes(b"")
    run = run_main("nsys", "kernels", str(runs / "*.sqlite"), "--limit", "0", "--json")
    assert run.code == 0, (run.stdout, run.stderr)
    rows = json.loads(run.stdout)["data"]["table"]["rows"]
    by_file: dict[str, set[object]] = {}
    for row in rows:
        by_file.setdefault(row["file"], set()).add(row["error_code"])
    assert by_file == {
        str(runs / "a.sqlite"): {None},
        str(runs / "b\\xff.sqlite"): {None},
        str(runs / "c\\xff.sqlite"): {"format_invalid"},
    }
    a = [r for r in rows if r["file"] == str(runs / "a.sqlite")]
    b = [r for r in rows if r["file"] == str(runs / "b\\xff.sqlite")]
    assert [r["total_time_ns"] for r in a] == [r["total_time_ns"] for r in b]
    # Provenance names the files as the table does (it wrote U+FFFD, which two names can share).
    inputs = {i["path"] for i in json.loads(run.stdout)["provenance"]["inputs"]}
    assert {str(runs / "a.sqlite"), str(runs / "b\\xff.sqlite")} <= inputs, inputs
    people = run_main("nsys", "kernels", str(runs / "*.sqlite"))
    assert people.code == 0 and "3 files (1 failed)" in people.stdout
