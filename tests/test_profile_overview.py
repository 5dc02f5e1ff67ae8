"""``gpuopt profile overview`` (issue 30): one call says what is in a capture of any kind, each section's
numbers equal to those of the command it cites, on the real fixtures; a file that cannot be read is its
own entry, and only when every file fails is the answer an error (exit 2)."""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cli_inproc import run_main
from gpuopt.overview import overview_document
from gpuopt.schemas import json_schema

SCHEMA = "gpuopt.profile.overview/v1"


def _envelope(command: str, *more: str) -> dict[str, Any]:
    """The --json envelope of a cited command, run as an agent would run it."""
    words = shlex.split(command)
    assert words[0] == "gpuopt"
    run = run_main(*words[1:], *more, "--json")
    assert run.code == 0, run.stderr
    return run.json()  # type: ignore[no-any-return]


def _cited(command: str, *more: str) -> dict[str, Any]:
    """The --json data of a cited command."""
    return _envelope(command, *more)["data"]  # type: ignore[no-any-return]


def _first_rows(top: Any) -> list[dict[str, Any]]:
    """The rows a top table shows, as the cited command prints them (its key columns)."""
    cited = _cited(top.command, "--limit", "5")["table"]
    columns = [c.name for c in top.table.columns]
    assert cited["total_rows"] == top.table.total_rows
    return [{c: row[c] for c in columns} for row in cited["rows"]]


@pytest.fixture(scope="module")
def files(shared: Path) -> dict[str, Path]:
    return {
        "nsys": shared / "gpuopt/h200/decode/decode_eager.sqlite",
        "graph": shared / "h200/graphs/graph_graph.sqlite",
        "torch": shared / "gpuopt/h200/decode/decode_eager_trace.json.gz",
        "ncu": shared / "h200/ncu/kernels_full.ncu-rep",
    }


@pytest.fixture(scope="module")
def answer(files: dict[str, Path]) -> Any:
    return overview_document([files["nsys"], files["torch"], files["ncu"], files["graph"]])


def test_every_kind_in_one_call_in_the_order_given(answer: Any, files: dict[str, Path]) -> None:
    data = answer.data
    assert [(f.path, f.kind, f.error) for f in data.files] == [
        (str(files["nsys"]), "nsys", None),
        (str(files["torch"]), "torch", None),
        (str(files["ncu"]), "ncu", None),
        (str(files["graph"]), "nsys", None),
    ]
    assert data.failed == 0 and answer.failure is None
    order = ["nsys", "torch", "ncu", "graph"]
    assert [i.path for i in answer.inputs] == [str(files[k]) for k in order]
    # The envelope's unmodeled lists every file's items; each entry counts its own by kind.
    assert len(answer.unmodeled) == sum(sum(f.unmodeled.values()) for f in data.files)


def test_nsys_sections_equal_the_commands_they_cite(answer: Any, files: dict[str, Path]) -> None:
    f = answer.data.files[0]
    path = shlex.quote(str(files["nsys"]))
    assert f.identity.command == f"gpuopt nsys summary {path}"
    summary = _cited(f.identity.command)
    devices = summary["timeline"]["devices"]
    assert [g.name for g in f.identity.gpus] == [g["name"] for g in summary["info"]["gpus"]]
    assert f.identity.trace_mode == summary["info"]["graph_trace_mode"]
    assert f.totals.kernels == sum(d["kernels"] for d in devices) > 0
    assert f.totals.span_ns == max(d["span_ns"] for d in devices)
    timeline = _cited(f.busy.command)["timeline"]["devices"]
    assert [(d.device, d.busy_ns, d.idle_ns, d.busy_pct) for d in f.busy.devices] == [
        (d["device_id"], d["busy_ns"], d["idle_ns"], d["busy_pct"]) for d in timeline
    ]
    assert f.top_kernels.command == f"gpuopt nsys kernels {path} --sort total_time_ns"
    assert f.top_kernels.table.rows == _first_rows(f.top_kernels)
    kernels = _cited(f.top_kernels.command, "--limit", "0")["table"]["rows"]
    assert f.totals.kernel_time_ns == sum(r["total_time_ns"] for r in kernels)
    assert f.top_ranges.table.rows == _first_rows(f.top_ranges)
    graphs = _cited(f.graphs.command)["graphs"]
    assert (f.graphs.graphs, f.graphs.executions) == (len(graphs["graphs"]), graphs["executions"])


def test_a_graph_level_trace_says_so_and_counts_its_executions(answer: Any) -> None:
    f = answer.data.files[3]
    assert f.identity.trace_mode == "graph"
    graphs = _cited(f.graphs.command)["graphs"]
    assert f.graphs.executions == graphs["executions"] > 0
    assert f.totals.graph_executions == graphs["executions"]


def test_torch_sections_equal_the_commands_they_cite(answer: Any, files: dict[str, Path]) -> None:
    f = answer.data.files[1]
    summary = _cited(f.totals.command)["traces"]
    assert f.totals.kernels == sum(t["counts"]["kernels"] for t in summary) > 0
    assert f.totals.kernel_time_ns == sum(t["gpu"]["kernel_time_ns"] for t in summary)
    device = summary[0]["gpu"]["devices"][0]
    assert (f.busy.devices[0].device, f.busy.devices[0].busy_ns) == (device["device"], device["busy_ns"])
    assert f.busy.devices[0].span_ns == device["last_end_ns"] - device["first_start_ns"]
    assert f.top_kernels.table.rows == _first_rows(f.top_kernels)
    assert f.top_ops.command == f"gpuopt torch ops {shlex.quote(str(files['torch']))} --sort gpu_time_ns"
    assert f.top_ops.table.rows == _first_rows(f.top_ops)
    assert f.top_ranges is None
    assert f.iterations is None  # this trace has no ProfilerStep#N range


def test_profiler_steps_are_the_iterations_torch_steps_lists(shared: Path) -> None:
    # HTA's ns-resolution trace: five ProfilerStep#101..105 ranges.
    trace = shared / "public/torch/hta_ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    it = overview_document(trace).data.files[0].iterations
    steps = _cited(it.command, "--limit", "0")["table"]["rows"]
    profiler = [s for s in steps if s["name"].startswith("ProfilerStep#")]
    assert it.ranges == [f"ProfilerStep#{n}" for n in range(101, 106)] == sorted(s["name"] for s in profiler)
    assert (it.marker, it.steps) == ("ProfilerStep#N", 5)
    assert it.gpu_time_ns == sum(s["gpu_time_ns"] for s in profiler)
    assert it.mean_host_ns == pytest.approx(sum(s["cpu_duration_ns"] for s in profiler) / 5)


def test_ncu_sections_equal_the_commands_they_cite(answer: Any) -> None:
    f = answer.data.files[2]
    envelope = _envelope(f.totals.command)
    report = envelope["data"]["report"]
    assert f.unmodeled == dict(Counter(u["kind"] for u in envelope["unmodeled"]))
    assert f.unmodeled["metric_instances"] > 100
    assert f.totals.kernels == report["launches"] > 0
    assert [g.name for g in f.identity.gpus] == sorted(set(report["devices"]))
    assert f.top_kernels.table.rows == _first_rows(f.top_kernels)
    assert (f.busy, f.graphs, f.iterations) == (None, None, None)


def test_a_marker_counts_steps_and_an_unknown_one_is_that_files_error(files: dict[str, Path]) -> None:
    ranges = _cited(f"gpuopt nsys nvtx {shlex.quote(str(files['nsys']))}", "--limit", "0")["table"]["rows"]
    busiest = max(ranges, key=lambda r: r["instances"])
    text = busiest["range"].removeprefix(":")
    found = overview_document(files["nsys"], marker=text).data.files[0].iterations
    assert (found.ranges, found.steps) == ([busiest["range"]], busiest["instances"])
    assert found.gpu_time_ns == busiest["kernel_inclusive_ns"] + busiest["graph_inclusive_ns"]
    assert found.mean_host_ns == pytest.approx(busiest["cpu_total_ns"] / busiest["instances"])
    missing = overview_document([files["nsys"]], marker="no_such_range_anywhere")
    assert missing.data.files[0].error.code == "name_unknown" and missing.failure is not None


def test_a_bad_file_is_its_own_entry_and_all_bad_exits_2(files: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("not a profile\n")
    run = run_main("profile", "overview", str(files["ncu"]), str(bad), "--json")
    assert run.code == 0, run.stderr
    envelope = run.json()
    jsonschema.validate(envelope, json_schema(SCHEMA))
    entries = envelope["data"]["files"]
    assert [e["kind"] for e in entries] == ["ncu", None]
    assert entries[1]["error"]["code"] == "profile_kind_unknown" and envelope["data"]["failed"] == 1
    run = run_main("profile", "overview", str(bad), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "files_all_failed"
    assert run.json()["data"]["files"][0]["error"]["code"] == "profile_kind_unknown"


def test_people_see_every_section_with_its_command(files: dict[str, Path]) -> None:
    run = run_main("profile", "overview", str(files["nsys"]), str(files["torch"]))
    assert run.code == 0, run.stderr
    text = run.stdout
    for heading in ("nsys — ", "torch — ", "Busy/idle — all: gpuopt nsys timeline", "Top kernels", "Top ops"):
        assert heading in text
    assert "Top NVTX ranges" in text and "CUDA graphs — all: gpuopt nsys graphs" in text
    assert "gpuopt torch ops" in text and "--sort gpu_time_ns" in text
