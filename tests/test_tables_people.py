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
    assert "(names shortened in the middle; --json or --out FILE have them whole)" in run.stdout


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


def test_columns_chosen_by_name_are_shown_or_named(shared: Path) -> None:
    """A column chosen with --columns is shown even when the compact view lacks it (ncu launches'
    dram_bandwidth_bytes_per_s), and one that does not fit is named, never dropped silently."""
    ncu = str(shared / "h200/ncu/kernels_full.ncu-rep")
    run = gpuopt("ncu", "launches", ncu, "--columns", "kernel_function,dram_bandwidth_bytes_per_s")
    assert run.code == 0, run.stderr
    header = run.stdout.splitlines()[0].split()
    assert header == ["kernel_function", "dram_bandwidth"]
    assert "4,019.5 GB/s" in run.stdout  # vec_add's first launch, bytes/s scaled to GB/s
    sass = str(shared / "h200/sass/kernels_sm90.nvdisasm.sass")
    wide = "function,registers,frame_size_bytes,min_stack_size_bytes,local_load_count,local_store_count"
    run = gpuopt("sass", "functions", sass, "--columns", wide + ",tensor_core_count")
    assert run.code == 0, run.stderr
    assert "chosen but not shown" in run.stdout and "tensor_core_count" in run.stdout
    assert max(len(line) for line in run.stdout.splitlines()) <= 120


def test_a_listing_without_registers_says_where_they_are(shared: Path) -> None:
    cuobjdump = str(shared / "h200/sass/kernels_sm90.cuobjdump.sass")
    run = gpuopt("sass", "functions", cuobjdump, "--columns", "function,registers")
    assert run.code == 0, run.stderr
    assert "cuobjdump -sass prints none" in run.stdout and "--tool nvdisasm" in run.stdout
    nvdisasm = str(shared / "h200/sass/kernels_sm90.nvdisasm.sass")
    assert "prints none" not in gpuopt("sass", "functions", nvdisasm).stdout


def test_gap_levels_are_explained_and_not_summed(shared: Path) -> None:
    export = str(shared / "h200/nsys/eager.sqlite")
    run = gpuopt("nsys", "gaps", export, "--sort", "duration_ns", "--limit", "4")
    assert run.code == 0, run.stderr
    assert "the whole device was idle" in run.stdout
    assert "total" not in [w for line in run.stdout.splitlines()[4:] for w in line.split()]
    assert "716.32 ms" in run.stdout and "626.53 ms" in run.stdout  # stream 7 and the device, one each


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
    assert "not on this details page" in text and "--page raw" in text  # the reason, in words
    summary = " ".join(
        gpuopt("ncu", "summary", str(shared / "h200/ncu/kernels_full.details.csv")).stdout.split()
    )
    assert "dram_write_bytes" in summary and "not on this details page" in summary
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


def test_sort_and_columns_take_the_header_people_see(shared: Path) -> None:
    """`total_time` (the header on screen) means `total_time_ns`; the JSON keeps its order too."""
    export = str(shared / "h200/nsys/eager.sqlite")
    by_header = gpuopt("nsys", "kernels", export, "--sort", "instances:asc", "--columns", "name,instances")
    by_name = gpuopt("nsys", "kernels", export, "--sort", "instances_ns:asc", "--columns", "name,instances")
    assert by_header.code == 0, by_header.stderr
    assert by_name.code == 2 and "column_unknown" in by_name.stderr + by_name.stdout
    short = gpuopt("nsys", "kernels", export, "--sort", "total_time:asc", "--columns", "name,total_time")
    full = gpuopt("nsys", "kernels", export, "--sort", "total_time_ns:asc", "--columns", "name,total_time_ns")
    assert short.code == 0, short.stderr
    assert short.stdout == full.stdout
    assert short.stdout.splitlines()[1].split() == ["name", "total_time"]
    assert "7.41 ms" in short.stdout  # the totals row


def test_roofline_for_people_shows_the_points_that_say_something(shared: Path) -> None:
    """Rows of a precision a launch never used (0 FLOP) are hidden and counted; precision and region are
    shown; FLOP/s, intensity and shares of the peak carry their units."""
    run = gpuopt("ncu", "roofline", str(shared / "h200/ncu/kernels_full.ncu-rep"), "--limit", "0")
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split() == [
        "arithmetic_intensity",
        "achieved_flops",
        "flop_of_peak",
        "dram_of_peak",
        "kernel_function",
        "region",
        "precision",
    ]
    rows = [line for line in lines[2:] if "FLOP/B" in line]
    # 12 launches: 3 of them (wmma_gemm) with two tensor precisions, the other 9 one row each (42 in all).
    assert len(rows) == 15
    assert "(27 rows of a precision a launch did not use (0 FLOP) hidden" in run.stdout
    assert any("898 FLOP/B" in r and "29.33 TFLOP/s" in r and "compute" in r for r in rows)
    assert max(len(line) for line in lines) <= 120


def test_gaps_of_one_level(shared: Path) -> None:
    """--level device keeps the whole-device gaps (stream empty), also with the top-K heap path, and
    equals the full table filtered by hand."""
    export = str(shared / "h200/nsys/eager.sqlite")
    every = gpuopt("nsys", "gaps", export, "--limit", "0", "--json").json()["data"]["table"]["rows"]
    device = sorted((r for r in every if r["stream_id"] is None), key=lambda r: -r["duration_ns"])
    top = gpuopt(
        "nsys", "gaps", export, "--level", "device", "--sort", "duration_ns", "--limit", "5", "--json"
    )
    rows = top.json()["data"]["table"]["rows"]
    assert [r["duration_ns"] for r in rows] == [r["duration_ns"] for r in device[:5]]
    assert all(r["stream_id"] is None for r in rows)
    assert round(rows[0]["duration_ns"] / 1e4) == 62653  # 626.53 ms, memset to memset
    streams = gpuopt("nsys", "gaps", export, "--level", "stream", "--limit", "0", "--json").json()
    assert len(streams["data"]["table"]["rows"]) == len([r for r in every if r["stream_id"] is not None])
