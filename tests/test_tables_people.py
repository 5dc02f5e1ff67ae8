"""Tables for people (cli/_people.py) and the one table-option rule (cli/_tables.py), on real fixtures."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl
import pytest

from conftest import gpuopt
from gpuopt.agent_tools import walk
from gpuopt.cli import _people, cli


def test_units_are_scaled_and_labelled() -> None:
    assert _people.formatter("duration_ns")(716_320_000) == "716.32 ms"
    assert _people.formatter("avg_ns")(432.4) == "432 ns"
    assert _people.formatter("start_ns")(6_398_000_000) == "6.398 s"
    assert _people.formatter("med_ns")(78_527.0) == "78.53 µs"
    assert _people.formatter("bytes")(2_097_152) == "2.10 MB"
    assert _people.formatter("bandwidth_gbps")(23.456) == "23.5 GB/s"
    assert _people.formatter("time_pct")(59.70872) == "59.7 %"
    assert _people.formatter("instances")(12345) == "12,345"
    assert _people.formatter("name")(None) == "—"
    assert _people.label("total_time_ns") == "total_time"


def test_long_names_are_shortened_in_the_middle() -> None:
    name = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
    short = _people.shorten(name, 21)
    assert short == "nvjet_sm90…_coopA_TNT" and len(short) == 21
    assert _people.shorten("vec_add", 21) == "vec_add"


def test_kernel_table_fits_120_columns_with_totals(shared: Path) -> None:
    run = gpuopt("nsys", "kernels", str(shared / "h200" / "nsys" / "eager.sqlite"))
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) <= 120
    assert "59.7 %" in run.stdout and "4.42 ms" in run.stdout and "69.09 µs" in run.stdout
    # totals over all 7 kernels: 7.41 ms of kernel time in 176 launches, 100 % of the time.
    total = [line for line in lines if "176" in line and "7.41 ms" in line]
    assert total and "100.0 %" in total[0]
    assert "nvjet_sm90_ts" in run.stdout  # the name column is kept, shortened in the middle


@pytest.mark.parametrize(
    ("args", "fixture"),
    [
        (["sass", "functions"], "h200/sass/kernels_sm90.cuobjdump.sass"),
        (["torch", "launches"], "h200/torch/eager_trace.json"),
        (["ncu", "launches"], "h200/ncu/kernels_full.ncu-rep"),
    ],
)
def test_wide_tables_are_readable_in_120_columns(shared: Path, args: list[str], fixture: str) -> None:
    run = gpuopt(*args, str(shared / fixture), "--limit", "10")
    assert run.code == 0, run.stderr
    assert max(len(line) for line in run.stdout.splitlines()) <= 120
    assert "more columns" in run.stdout  # what is not shown is named, --columns chooses


def test_sort_orders_rows_and_the_json_follows(shared: Path) -> None:
    file = str(shared / "h200" / "nsys" / "eager.sqlite")
    run = gpuopt("nsys", "gaps", file, "--sort", "duration_ns", "--limit", "3", "--json")
    rows = run.json()["data"]["table"]["rows"]
    assert [r["duration_ns"] for r in rows] == sorted((r["duration_ns"] for r in rows), reverse=True)
    assert [r["duration_ns"] for r in rows[:2]] == [716_323_311, 626_527_704]  # the two longest idle gaps
    asc = gpuopt("nsys", "kernels", file, "--sort", "instances:asc", "--json").json()["data"]["table"]["rows"]
    assert [r["instances"] for r in asc] == [8, 8, 16, 16, 32, 32, 64]
    bad = gpuopt("nsys", "kernels", file, "--sort", "nope", "--json")
    assert bad.code == 2 and bad.json()["errors"][0]["code"] == "column_unknown"


def test_columns_chooses_what_people_see(shared: Path) -> None:
    file = str(shared / "h200" / "nsys" / "eager.sqlite")
    run = gpuopt("nsys", "kernels", file, "--columns", "name,instances", "--limit", "1")
    assert run.code == 0, run.stderr
    header = run.stdout.splitlines()[1].split()
    assert header == ["name", "instances"]
    bad = gpuopt("nsys", "kernels", file, "--columns", "nope")
    assert bad.code == 2 and "column_unknown" in bad.stderr


def test_every_table_command_takes_the_same_table_options() -> None:
    table_commands = [
        (path, cmd)
        for path, cmd in walk(cli)
        if not isinstance(cmd, click.Group) and any(p.name == "out" for p in cmd.params)
    ]
    assert len(table_commands) > 20
    for path, cmd in table_commands:
        names = {p.name for p in cmd.params}
        if "limit" in names:
            assert {"sort", "columns"} <= names, path


def test_frame_render_transposes_few_wide_rows() -> None:
    frame = pl.DataFrame({f"metric_{i}_ns": [i * 1000] for i in range(30)} | {"name": ["k"]})
    text = _people.render(frame, 1)
    assert text.splitlines()[0].split() == ["metric_0_ns", "0", "ns"]
    assert "name" in text and "k" in text


def test_ncu_launches_says_why_a_fact_is_absent(shared: Path) -> None:
    # The details CSV page carries no DRAM/L1/L2 byte counters: the table says so instead of a bare null.
    run = gpuopt("ncu", "launches", str(shared / "h200" / "ncu" / "kernels_full.details.csv"))
    assert run.code == 0, run.stderr
    text = " ".join(run.stdout.split())
    assert "absent: dram_bytes, dram_read_bytes, dram_write_bytes" in text
    assert "the sections that hold them were not collected" in text
    assert max(len(line) for line in run.stdout.splitlines()) <= 120
    full = gpuopt("ncu", "launches", str(shared / "h200" / "ncu" / "kernels_full.ncu-rep"))
    assert "absent:" not in full.stdout


# Documents with a named table part beside other facts; every other table command puts it under data.table.
_NAMED_PARTS = {("stats", "compare"): "pairs", ("stats", "noise"): "pairs", ("ncu", "summary"): "kernels"}
_NAMED_PARTS |= {("nsys", "ranks"): "ranks", ("torch", "ranks"): "ranks"}  # --out writes the per-rank table


def test_one_table_shape_for_every_table_command() -> None:
    from gpuopt.models.table import TableData
    from gpuopt.schemas import DATA_MODELS

    checked = 0
    for path, cmd in walk(cli):
        names = {p.name for p in cmd.params}
        if isinstance(cmd, click.Group) or not {"limit", "out"} <= names:  # nsys timeline: a document
            continue
        schema = getattr(cmd.callback, "gpuopt_schema", None)
        assert schema is not None, path
        model = DATA_MODELS[schema]
        assert model is not None, path
        field = _NAMED_PARTS.get(path, "table")
        assert field in model.model_fields, (path, schema)
        # `show` carries a table only when a part (--pairs, --samples, ...) is asked for.
        assert model.model_fields[field].annotation in (TableData, TableData | None), (path, schema)
        checked += 1
    assert checked >= 25
