"""``gpuopt torch ...`` through the real entry point: envelopes, tables, provenance, not-present facts."""

from __future__ import annotations

from pathlib import Path

import blake3
import polars as pl

from conftest import gpuopt

H200 = "h200/torch/eager_trace.json"
CPU_ONLY = "public/torch/hta_cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"


def test_summary_envelope_with_provenance_and_unmodeled(shared: Path) -> None:
    path = shared / H200
    run = gpuopt("torch", "summary", str(path), "--json")
    assert run.code == 0, run.stderr
    env = run.json()
    assert (env["schema"], env["ok"]) == ("gpuopt.torch.summary/v1", True)
    (trace,) = env["data"]["traces"]
    assert trace["gpu"]["devices"][0]["temporal"]["idle_ns"] == 856630
    (source,) = env["provenance"]["inputs"]
    assert source["blake3"] == blake3.blake3(path.read_bytes()).hexdigest()
    assert {"kind": "event_category", "name": "overhead", "count": 1} in env["unmodeled"]


def test_summary_for_people(shared: Path) -> None:
    run = gpuopt("torch", "summary", str(shared / H200))
    assert run.code == 0, run.stderr
    for text in ("NVIDIA H200", "host wait", "0.701 ms", "Memcpy HtoD (Pinned -> Device)"):
        assert text in run.stdout


def test_kernels_table_limit_and_out(shared: Path, tmp_path: Path) -> None:
    out = tmp_path / "kernels.parquet"
    run = gpuopt("torch", "kernels", str(shared / H200), "--limit", "2", "--out", str(out), "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["not_present"] == []
    table = data["table"]
    assert (table["name"], table["total_rows"], table["truncated"], len(table["rows"])) == (
        "kernels",
        7,
        True,
        2,
    )
    assert table["rows"][0]["total_ns"] == 1657625
    assert pl.read_parquet(out).height == 7


def test_table_commands_run(shared: Path) -> None:
    # The other table commands share this path; their tables are checked in test_torch_trace.py.
    for command, rows in {"timeline": 1, "steps": 3, "collectives": 0}.items():
        run = gpuopt("torch", command, str(shared / H200), "--json")
        assert run.code == 0, (command, run.stderr)
        env = run.json()
        assert env["schema"] == f"gpuopt.torch.{command}/v1"
        assert env["data"]["table"]["total_rows"] == rows, command


def test_cpu_only_trace_says_not_present(shared: Path) -> None:
    run = gpuopt("torch", "kernels", str(shared / CPU_ONLY), "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["table"]["total_rows"] == 0
    (line,) = data["not_present"]
    assert line.startswith("rank 34: not present:") and "cpu_only" in line
    human = gpuopt("torch", "summary", str(shared / CPU_ONLY))
    assert human.code == 0
    assert "not present" in human.stdout


def test_help_lists_the_commands() -> None:
    run = gpuopt("torch", "--help")
    assert run.code == 0
    for command in (
        "summary",
        "kernels",
        "ops",
        "timeline",
        "steps",
        "gaps",
        "launches",
        "transfers",
        "collectives",
    ):
        assert command in run.stdout
