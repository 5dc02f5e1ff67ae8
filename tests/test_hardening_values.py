"""Hardening (issue 13, items 4 and 10): hostile values and versions are typed errors or flagged."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from cli_inproc import run_main
from conftest import Run, gpuopt, gpuopt_in_terminal
from gpuopt import compiler, errors, sass, stats
from gpuopt import map as gmap
from nsys_db import Export

SPARSE_BYTES = (8 << 30) + 1  # one byte past map account's 8 GiB cap, the largest here


def _error(run: Run, code: str) -> dict[str, object]:
    assert run.code == 2, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    env = json.loads(run.stdout)
    assert env["ok"] is False and env["errors"][0]["code"] == code, env["errors"]
    return dict(env["errors"][0])


def test_inproc_matches_the_real_cli(tmp_path: Path) -> None:
    # The corpus test's in-process runner gives the child process's exit code and envelope.
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    for args in (
        ["stats", "compare", "a.txt", "a.txt", "--min-effect", "nan", "--json"],
        ["sass", "scan", "missing.sass", "--json"],
    ):
        real = gpuopt(*args, cwd=tmp_path)
        cwd = Path.cwd()
        os.chdir(tmp_path)
        try:
            mine = run_main(*args)
        finally:
            os.chdir(cwd)
        errors_of = [json.loads(r.stdout)["errors"] for r in (mine, real)]
        assert (mine.code, errors_of[0]) == (real.code, errors_of[1])


@pytest.mark.parametrize(
    "args",
    [
        ["stats", "compare", "{a}", "{a}", "--min-effect", "nan"],
        ["stats", "compare", "{a}", "{a}", "--confidence", "nan"],
        ["stats", "compare", "{a}", "{a}", "--min-effect", "inf"],
        ["stats", "noise", "{aa}", "--confidence", "nan"],
        ["stats", "noise", "{aa}", "--min-effect", "nan"],
        ["stats", "noise", "{aa}", "--power", "nan"],
        ["profile", "diff", "--baseline", "{a}", "--candidate", "{a}", "--min-effect", "nan"],
        ["profile", "diff", "--baseline", "{a}", "--candidate", "{a}", "--fdr", "nan"],
    ],
)
def test_nan_options_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    # Issue 13.4: click's FloatRange let NaN through, and a pydantic ValidationError exited 1.
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    (tmp_path / "aa.csv").write_text("a,b\n1,1.1\n2,2.1\n3,2.9\n")
    filled = [a.format(a=tmp_path / "a.txt", aa=tmp_path / "aa.csv") for a in args]
    err = _error(run_main(*filled, "--json"), "usage_invalid")
    assert "not a finite number" in str(err["message"])


@pytest.mark.parametrize(
    "args",
    [
        ["nsys", "kernels", "{nsys}", "--limit", "{huge}"],
        ["torch", "kernels", "{torch}", "--limit", "{huge}"],
        ["nsys", "kernels", "{nsys}", "{nsys}", "--workers", "{huge}"],
        ["sass", "functions", "{sass}", "--limit", "{huge}"],
    ],
)
def test_a_count_larger_than_64_bits_is_a_usage_error(shared: Path, args: list[str]) -> None:
    # Found by a hostile trial: `--limit 99999999999999999999` was an OverflowError, exit 1.
    files = {
        "nsys": shared / "h200/nsys/eager.sqlite",
        "torch": shared / "h200/torch/eager_trace.json",
        "sass": shared / "h200/sass/kernels_sm90.cuobjdump.sass",
    }
    filled = [a.format(huge="9" * 20, **files) for a in args]
    err = _error(run_main(*filled, "--json"), "usage_invalid")
    assert "larger than gpuopt takes" in str(err["message"])


def test_numbers_in_other_scripts_digits_are_refused(shared: Path) -> None:
    """Python's int() and a Unicode `\\d` read full-width digits (U+FF10..U+FF19); a trial found
    `--limit`, `--window` and `--steps` written in them read as numbers."""

    def full(text: str) -> str:
        return text.translate({ord(d): 0xFF10 + int(d) for d in "0123456789"})

    trace = str(shared / "h200/torch/eager_trace.json")
    err = _error(run_main("torch", "kernels", trace, "--limit", full("5"), "--json"), "usage_invalid")
    assert "ASCII digits" in str(err["message"])
    sqlite = str(shared / "h200/nsys/eager.sqlite")
    _error(run_main("nsys", "kernels", sqlite, "--window", full("12:34"), "--json"), "window_invalid")
    _error(run_main("torch", "kernels", trace, "--steps", full("1:2"), "--json"), "torch_trace_scope_invalid")


def test_a_subnormal_sample_is_bad_input(tmp_path: Path) -> None:
    # Issue 13.4: 4.9e-324 overflowed every percentage to null, then a ValidationError exited 1.
    (tmp_path / "base.txt").write_text("1\n2\n3\n")
    (tmp_path / "cand.txt").write_text("1\n4.9e-324\n3\n")
    err = _error(
        run_main("stats", "compare", str(tmp_path / "base.txt"), str(tmp_path / "cand.txt"), "--json"),
        "metric_ratio_out_of_range",
    )
    assert str(err["path"]) == "pairs[1]"
    with pytest.raises(errors.InputError, match="ratio beyond 1e9"):
        stats.compare_files(tmp_path / "base.txt", tmp_path / "cand.txt", unpaired=True)


def test_duplicate_jsonl_keys_in_a_sample_file_are_refused(tmp_path: Path) -> None:
    # Issue 13.10: the second "value" silently replaced the first (map already refused this).
    path = tmp_path / "dup.jsonl"
    path.write_text('{"value": 1}\n{"value": 2, "value": 30}\n{"value": 3}\n')
    with pytest.raises(errors.FormatError, match=r"dup.jsonl:2: a field name appears twice"):
        stats.compare_files(path, path)


def _deep_python(depth: int) -> str:
    return "x = " + "-" * depth + "1\n"


def test_deeply_nested_inductor_sources_are_not_internal_errors(shared: Path, tmp_path: Path) -> None:
    # Issue 13.4: ast.parse raised RecursionError (exit 1); json.loads of a best_config too.
    lone = tmp_path / "deep.py"
    lone.write_text(_deep_python(200_000))
    _error(run_main("compiler", "inductor", str(lone), "--json"), "inductor_nothing_found")
    cache = tmp_path / "cache"
    shutil.copytree(shared / "h200/inductor", cache)
    (cache / "zz_deep.py").write_text(_deep_python(200_000))
    result = compiler.inductor(cache, sass=False)
    names = [u.name for u in result.unmodeled if u.name.startswith("zz_deep")]
    assert names == ["zz_deep.py (nested too deeply)"]
    config = next(cache.rglob("*.best_config"))
    config.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(errors.FormatError, match="nested too deeply"):
        compiler.inductor(cache, sass=False)


def test_sparse_8_gb_inputs_are_refused_before_reading(tmp_path: Path) -> None:
    # Issue 13.4: whole-input reads of a sparse 8 GB file grew memory without bound; each reader caps.
    def sparse(name: str) -> Path:
        path = tmp_path / name
        with path.open("wb") as fh:
            fh.truncate(SPARSE_BYTES)
        return path

    calls = {
        "ptxas": lambda: compiler.ptxas(sparse("p.txt")),
        "res-usage": lambda: compiler.res_usage(sparse("r.txt")),
        "inductor file": lambda: compiler.inductor(sparse("output_code.py"), sass=False),
        "stats sample file": lambda: stats.compare_files(sparse("s.txt"), sparse("s.txt")),
        "ncu csv": lambda: __import__("gpuopt.ncu").ncu.open(sparse("n.csv")),
        "nvidia-smi xml": lambda: __import__("gpuopt.gpus").gpus.from_xml_file(sparse("x.xml")),
    }
    for what, call in calls.items():
        with pytest.raises(errors.InputError) as caught:
            call()
        assert caught.value.code == "input_too_large", what
    with pytest.raises(errors.InputError) as caught:
        gmap.account(sparse("events.jsonl"), timelines=["*"])
    assert caught.value.code == "events_too_large"
    folder = tmp_path / "cache"
    folder.mkdir()
    os.rename(sparse("big.py"), folder / "big.py")
    with pytest.raises(errors.InputError) as caught:
        compiler.inductor(folder, sass=False)
    assert caught.value.code == "input_too_large"


def _nsys_copy(shared: Path, tmp_path: Path, *sql: str) -> Path:
    path = tmp_path / "edited.sqlite"
    shutil.copyfile(shared / "h200/nsys/eager.sqlite", path)
    con = sqlite3.connect(path)
    for statement in sql:
        con.execute(statement)
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize("version", ["3.99.0", " 3.20.3", "3.20", "3.20.3 ", "4.0.0"])
def test_nsys_schema_versions_are_parsed_strictly(tmp_path: Path, version: str) -> None:
    # Issue 13.10: these were accepted as 3.x.
    path = Export(schema_version=version).write(tmp_path / "v.sqlite")
    _error(run_main("nsys", "kernels", str(path), "--json"), "version_unsupported")


def test_nsys_schema_major_row_must_agree(shared: Path, tmp_path: Path) -> None:
    # Issue 13.10: EXPORT_SCHEMA_VERSION_MAJOR=4 was ignored.
    path = _nsys_copy(
        shared, tmp_path, "UPDATE META_DATA_EXPORT SET value = '4' WHERE name = 'EXPORT_SCHEMA_VERSION_MAJOR'"
    )
    err = _error(run_main("nsys", "summary", str(path), "--json"), "version_unsupported")
    assert "EXPORT_SCHEMA_VERSION_MAJOR" in str(err["message"])


def test_a_view_named_like_an_activity_table_is_refused(shared: Path, tmp_path: Path) -> None:
    # Issue 13.10: a VIEW was invisible, so its kernels were reported "not captured".
    path = _nsys_copy(
        shared,
        tmp_path,
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k_data",
        "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM k_data",
    )
    err = _error(run_main("nsys", "summary", str(path), "--json"), "nsys_table_is_view")
    assert err["observed"] == "view CUPTI_ACTIVITY_KIND_KERNEL"


def test_listings_cut_mid_line_or_mid_function_say_truncated(shared: Path) -> None:
    # Issue 13.10: a listing cut near its end gave exit 0 with silently fewer facts.
    text = (shared / "h200/sass/ptxas_v_sm90.txt").read_text()
    full = compiler.ptxas(text.encode()).report
    with pytest.raises(errors.FormatError) as caught:  # cut inside the last `Used` line
        compiler.ptxas(text[: text.rindex("registers")].encode())
    assert caught.value.code == "file_truncated"
    partial = compiler.ptxas(text.rstrip("\n")[:-2].encode())  # "Compile time = 1.881 " cut
    assert partial.report.functions[:3] == full.functions[:3]
    assert partial.report.functions[3].compile_time_ms is None
    assert [u.kind for u in partial.unmodeled][:2] == ["truncation", "truncation"]
    no_time = text[: text.rindex("ptxas info    : Compile time")]
    flagged = compiler.ptxas(no_time.encode())
    assert any(u.kind == "truncation" and "Compile time" in u.name for u in flagged.unmodeled)
    res = (shared / "h200/sass/kernels_sm90.res-usage.txt").read_text()
    with pytest.raises(errors.FormatError) as caught:  # cut inside the last resource line
        compiler.res_usage(res[: res.rindex("SAMPLER")].encode())
    assert caught.value.code == "file_truncated"
    cut = compiler.res_usage(res[: res.rindex(" Function ") + 12].encode())  # its `Function` line cut
    assert [u.kind for u in cut.unmodeled][:1] == ["truncation"]
    assert len(cut.report.functions) == 3
    listing = (shared / "h200/sass/kernels_sm90.cuobjdump.sass").read_bytes()
    end = listing.rindex(b"..........")
    for at in (end, end - 300, listing.rindex(b"Function :") + 40):
        with pytest.raises(errors.FormatError) as caught:
            sass.scan(listing[:at])
        assert caught.value.code == "file_truncated", at


def test_audit_versions_of_deep_or_duplicate_json_is_bad_input(tmp_path: Path) -> None:
    """A trial found 100,000 levels of nesting a RecursionError (exit 1) and a duplicated `schema` key
    read (the last one won); the message names the place in a few words, whatever the depth."""
    doctor = run_main("doctor", "--json")
    assert doctor.code == 0
    (tmp_path / "d.json").write_text(doctor.stdout)
    (tmp_path / "deep.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    (tmp_path / "dup.json").write_text(doctor.stdout.replace('"schema"', '"schema": "x", "schema"', 1))
    for name in ("deep.json", "dup.json"):
        run = run_main("audit", "versions", str(tmp_path / "d.json"), str(tmp_path / name), "--json")
        err = _error(run, "audit_record_invalid")
        assert len(json.dumps(err)) < 1000


def test_names_from_a_file_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A timeline named with an ESC sequence retitled the terminal through `map account`'s table, and NUL
    and CR were printed raw; they are escapes now (--json escapes them as JSON does)."""
    name = "g\x1b]0;PWNED\x07\x00"
    event = {"timeline": name, "start_ns": 0, "end_ns": 10, "category": "k", "name": "a\x1b[2J"}
    (tmp_path / "e.jsonl").write_text(json.dumps(event))
    run = run_main("map", "account", str(tmp_path / "e.jsonl"))
    assert run.code == 0, run.stderr
    assert "\x1b" not in run.stdout and "\x00" not in run.stdout and "\x07" not in run.stdout
    assert "\\x1b]0;PWNED\\x07" in run.stdout


def test_colour_sequences_from_a_file_are_shown_as_text_at_a_terminal(tmp_path: Path) -> None:
    """A colour sequence (SGR) in a name passed to a person's terminal, where it could recolour or hide
    what followed (`\x1b[8m` conceals): gpuopt writes no colour of its own on stdout, so every control
    character from a file is shown as an escape there, as off a terminal."""
    event = {"timeline": "g\x1b[8mhidden\x1b[0m", "start_ns": 0, "end_ns": 10, "category": "k", "name": "a"}
    (tmp_path / "e.jsonl").write_text(json.dumps(event))
    code, out = gpuopt_in_terminal("map", "account", str(tmp_path / "e.jsonl"))
    assert code == 0, out
    table = out.rpartition("\x1b[?25h")[2]  # after rich's spinner on stderr, if any
    assert "\\x1b[8mhidden\\x1b[0m" in table and "\x1b[8m" not in table


def test_json_output_stays_json_when_a_name_holds_c1_controls(tmp_path: Path) -> None:
    """JSON writers escape U+0000..U+001F only; a name with DEL or a C1 control (U+009B is a one-byte
    CSI) was then written `\\x9b`, an invalid JSON escape: `--json` output no longer parsed."""
    event = {"timeline": "g\u009b2J\u007fx", "start_ns": 0, "end_ns": 10, "category": "k", "name": "a"}
    (tmp_path / "e.jsonl").write_text(json.dumps(event, ensure_ascii=False))
    run = run_main("map", "account", str(tmp_path / "e.jsonl"), "--json")
    assert run.code == 0, run.stderr
    assert "\u009b" not in run.stdout and "\\u009b2J\\u007fx" in run.stdout
    assert "g\u009b2J\u007fx" in json.dumps(json.loads(run.stdout), ensure_ascii=False)


def test_small_things_a_trial_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`skill install ''` wrote into the current folder; `--framework torch=2.11 --framework torch=2.1`
    kept the last silently; `schema <100,000 characters>` echoed the name twice (205 KB)."""
    monkeypatch.chdir(tmp_path)
    _error(run_main("skill", "install", "", "--json"), "usage_invalid")
    assert list(tmp_path.iterdir()) == []
    twice = ["--framework", "torch=2.11", "--framework", "torch=2.1"]
    err = _error(run_main("knowledge", "query", *twice, "--json"), "usage_invalid")
    assert "twice" in str(err["message"])
    run = run_main("schema", "x" * 100_000, "--json")
    assert len(run.stdout) < 20_000
    _error(run, "schema_unknown")


def test_a_confidence_next_to_one_is_refused_by_its_own_value(tmp_path: Path) -> None:
    """0.9999999999999999 reached the engine as 1.0 (serde_json's float reading was off by one unit in
    the last place) and was refused as "1"; read exactly, its normal quantile is infinite and every
    interval null (exit 1). A level is now at most 1 - 1e-9, refused with the value as given."""
    (tmp_path / "b.txt").write_text("".join(f"{v}\n" for v in range(1, 11)))
    base = str(tmp_path / "b.txt")
    err = _error(run_main("stats", "compare", base, base, "--confidence", "0.9999999999999999", "--json"),
                 "statistics_invalid")  # fmt: skip
    assert err["observed"] == "0.9999999999999999"
    assert run_main("stats", "compare", base, base, "--confidence", "0.999999999", "--json").code == 0


def test_a_target_with_a_level_next_to_one_is_refused_when_it_is_read() -> None:
    """A Target could hold confidence 0.9999999999999999 (< 1), refused only when the statistics ran."""
    from pydantic import ValidationError

    from gpuopt.models.evaluation.target import StatisticsSettings

    for level in ({"confidence": 0.9999999999999999}, {"power": 0.9999999999999999}):
        with pytest.raises(ValidationError):
            StatisticsSettings.model_validate({"seed": 1, **level})
    assert StatisticsSettings.model_validate({"seed": 1, "confidence": 0.999}).confidence == 0.999
