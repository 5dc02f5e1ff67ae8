"""One rule for every command that prints rows (issue 18, items 6 and 7), checked over the whole CLI:
a command whose JSON data holds a table takes ``--limit``, ``--sort``, ``--columns`` and ``--out``; a
document command with an open-ended list (``nsys timeline``'s streams) takes ``--limit``."""

from __future__ import annotations

from pathlib import Path

import click

from conftest import gpuopt
from gpuopt.agent_tools import walk
from gpuopt.cli import cli
from gpuopt.models.table import TableData
from gpuopt.schemas import DATA_MODELS

_TABLE_OPTIONS = {"limit", "sort", "columns", "out"}


def _holds_a_table(schema: str) -> bool:
    model = DATA_MODELS[schema]
    return model is not None and any(
        f.annotation in (TableData, TableData | None) for f in model.model_fields.values()
    )


def test_every_command_printing_a_table_takes_the_table_options() -> None:
    checked = []
    for path, cmd in walk(cli):
        schema = getattr(cmd.callback, "gpuopt_schema", None)
        if isinstance(cmd, click.Group) or schema is None or not _holds_a_table(schema):
            continue
        names = {p.name for p in cmd.params}
        assert names >= _TABLE_OPTIONS, f"gpuopt {' '.join(path)} lacks {sorted(_TABLE_OPTIONS - names)}"
        checked.append(path)
    assert ("ncu", "summary") in checked and ("torch", "api") in checked
    assert len(checked) >= 30


def test_nsys_timeline_limit_keeps_the_busiest_streams(shared: Path) -> None:
    file = str(shared / "h200" / "nsys" / "eager.sqlite")
    full = gpuopt("nsys", "timeline", file, "--json").json()["data"]
    assert [s["stream_id"] for s in full["timeline"]["devices"][0]["streams"]] == [7, 13]
    assert full["streams_left_out"] == 0
    one = gpuopt("nsys", "timeline", file, "--limit", "1", "--json").json()["data"]
    device = one["timeline"]["devices"][0]
    assert [(s["stream_id"], s["busy_ns"]) for s in device["streams"]] == [(7, 14_514_243)]
    assert one["streams_left_out"] == 1
    # The device row still covers every stream.
    assert device["busy_ns"] == full["timeline"]["devices"][0]["busy_ns"]
    people = gpuopt("nsys", "timeline", file, "--limit", "1")
    assert "0/s7" in people.stdout and "0/s13" not in people.stdout
    assert "(1 less busy streams left out; --limit 0 shows all)" in people.stdout


def test_ncu_summary_sorts_and_writes_its_kernel_table(shared: Path, tmp_path: Path) -> None:
    report = str(shared / "h200" / "ncu" / "kernels_full.ncu-rep")
    out = tmp_path / "kernels.csv"
    run = gpuopt("ncu", "summary", report, "--sort", "duration_ns_sum:asc", "--out", str(out), "--json")
    assert run.code == 0, run.stderr
    rows = run.json()["data"]["kernels"]["rows"]
    sums = [r["duration_ns_sum"] for r in rows]
    assert sums == sorted(sums) and len(rows) == 4
    assert out.read_text().count("\n") == 5  # header + 4 kernels, in the same order
