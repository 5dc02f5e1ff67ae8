"""`gpuopt nsys stats FILE --csv / --json` print bytes the engine made (no DataFrame, no pydantic model):
NVIDIA's own CSV on every fixture, and the envelope pydantic prints of the library's document
(`gpuopt.nsys.table_document`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import _native, nsys
from gpuopt.models.envelope import FileIdentity
from gpuopt.provenance import provenance
from gpuopt.schemas import ENVELOPES
from test_nsys_oracle_public import FIXTURES, nvidia, report_lines

SCHEMA = "gpuopt.nsys.table/v1"
EAGER_BLAKE3 = "d33fbe41bbeb46fa8b11a236154a73a2e10065dafd0da18ea7ea2f56df02b09e"  # b3sum


def _public(shared: Path, fixture: str) -> Path:
    return shared / "public" / "nsys" / f"{fixture}.sqlite"


def _pydantic_envelope(
    path: Path,
    name: str,
    identity: FileIdentity,
    *,
    limit: int,
    window: tuple[int | None, int | None] | None = None,
    nvtx: str | None = None,
) -> str:
    """The envelope as the general path makes it: the library's document (polars frame, pydantic
    models), model_dump_json."""
    data = nsys.table_document(path, name, window=window, nvtx=nvtx, limit=limit).data
    envelope = ENVELOPES[SCHEMA](
        schema=SCHEMA, ok=True, data=data, errors=[], unmodeled=[], provenance=provenance([identity])
    )
    return envelope.model_dump_json(by_alias=True, indent=2)


def _native_envelope(path: Path, name: str, identity: FileIdentity, *, limit: int) -> str:
    from gpuopt import __version__

    native = _native.nsys_open(str(path))
    missing = nsys.open(path).not_captured(name)
    doc = native.stats_doc(name)
    fields = (identity.path, identity.size_bytes, identity.blake3, identity.from_cache)
    return doc.envelope(limit, SCHEMA, __version__, missing, fields)


@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("name", nsys.STATS_REPORTS)
def test_library_csv_equals_nvidia(shared: Path, fixture: str, name: str, tmp_path: Path) -> None:
    # nsys ran on a copy at /tmp/<fixture>.sqlite, and names that path in its SKIPPED lines.
    link = tmp_path / f"{fixture}.sqlite"
    link.symlink_to(_public(shared, fixture))
    ours = nsys.stats_csv(link, name).replace(str(link), f"/tmp/{fixture}.sqlite")
    assert report_lines(ours) == report_lines(nvidia()[f"{fixture}_{name}"])


@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("name", nsys.STATS_REPORTS)
def test_native_envelope_is_byte_identical_to_pydantic(shared: Path, fixture: str, name: str) -> None:
    path = _public(shared, fixture)
    identity = FileIdentity(path=str(path), size_bytes=path.stat().st_size, blake3="0" * 64, from_cache=True)
    for limit in (0, 2):
        assert _native_envelope(path, name, identity, limit=limit) == _pydantic_envelope(
            path, name, identity, limit=limit
        )


@pytest.mark.parametrize("name", nsys.STATS_REPORTS)
def test_cli_csv_is_nvidias_file_byte_for_byte(shared: Path, name: str) -> None:
    eager = shared / "h200" / "nsys" / "eager.sqlite"
    run = gpuopt("nsys", "stats", str(eager), "--report", name, "--csv")
    assert run.code == 0, run.stderr
    assert run.stdout == (eager.parent / f"stats_{name}.csv").read_text()


def test_cli_json_equals_the_general_path_with_window_and_nvtx(shared: Path) -> None:
    eager = shared / "h200" / "nsys" / "eager.sqlite"
    args = ["--report", "cuda_gpu_kern_sum", "--json", "--limit", "3"]
    run = gpuopt("nsys", "stats", str(eager), *args, "--nvtx", "step_3", "--window", "0:")
    assert run.code == 0, run.stderr
    doc = json.loads(run.stdout)
    (identity,) = doc["provenance"]["inputs"]
    assert (identity["size_bytes"], identity["blake3"]) == (442368, EAGER_BLAKE3)
    expected = _pydantic_envelope(
        eager, "cuda_gpu_kern_sum", FileIdentity(**identity), limit=3, window=(0, None), nvtx="step_3"
    )
    assert run.stdout == expected + "\n"
    table = doc["data"]["table"]
    assert (table["total_rows"], table["truncated"], len(table["rows"])) == (7, True, 3)
    assert doc["data"]["selection"] == {"window_start_ns": 0, "window_end_ns": None, "nvtx": "step_3"}


def test_cli_json_of_a_second_read_takes_the_digest_from_the_cache(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eager = shared / "h200" / "nsys" / "eager.sqlite"
    monkeypatch.setenv("GPUOPT_CACHE_DIR", str(tmp_path / "cache"))  # empty: the first read hashes
    inputs = []
    for _ in range(2):
        run = gpuopt("nsys", "stats", str(eager), "--report", "cuda_api_sum", "--json")
        assert run.code == 0, run.stderr
        inputs.append(json.loads(run.stdout)["provenance"]["inputs"][0])
    assert [i["from_cache"] for i in inputs] == [False, True]
    assert {i["blake3"] for i in inputs} == {EAGER_BLAKE3}


def test_sort_and_out_still_take_the_general_path(shared: Path, tmp_path: Path) -> None:
    eager = shared / "h200" / "nsys" / "eager.sqlite"
    out = tmp_path / "k.csv"
    run = gpuopt(
        "nsys", "stats", str(eager), "--report", "cuda_gpu_kern_sum", "--json", "--sort", "instances:asc"
    )
    assert run.code == 0, run.stderr
    rows = json.loads(run.stdout)["data"]["table"]["rows"]
    assert [r["instances"] for r in rows] == sorted(r["instances"] for r in rows)
    run = gpuopt("nsys", "stats", str(eager), "--report", "cuda_gpu_kern_sum", "--csv", "--out", str(out))
    assert run.code == 0, run.stderr
    assert out.read_text().splitlines()[0].startswith("time_pct,total_time_ns,instances")


def test_an_unknown_report_is_the_same_typed_error(shared: Path) -> None:
    eager = shared / "h200" / "nsys" / "eager.sqlite"
    run = gpuopt("nsys", "stats", str(eager), "--report", "cuda_gpu_kern_summ", "--json")
    assert run.code == 2
    doc = json.loads(run.stdout)
    assert (doc["ok"], doc["errors"][0]["code"]) == (False, "nsys_report_unknown")


def test_csv_of_a_file_rewritten_while_read_is_an_error(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --csv states no sha256, so nothing is hashed; the stat key before and after still guards the answer.
    from click.testing import CliRunner

    from gpuopt.cli import cli

    export = tmp_path / "eager.sqlite"
    export.write_bytes((shared / "h200" / "nsys" / "eager.sqlite").read_bytes())
    real_open = _native.nsys_open

    def open_then_rewrite(path: str) -> object:
        report = real_open(path)
        with open(path, "ab") as grow:  # another process appends while gpuopt reads
            grow.write(b"\0" * 512)
        return report

    monkeypatch.setattr(_native, "nsys_open", open_then_rewrite)
    argv = ["nsys", "stats", str(export), "--report", "cuda_gpu_kern_sum", "--csv"]
    changed = CliRunner().invoke(cli, argv)
    assert changed.exit_code == 2
    assert "file_changed_during_read" in changed.output and "Time (%)" not in changed.output
    monkeypatch.setattr(_native, "nsys_open", real_open)
    unchanged = CliRunner().invoke(cli, argv)
    assert unchanged.exit_code == 0 and unchanged.output.startswith("Time (%)")
