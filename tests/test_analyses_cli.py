"""``gpuopt nsys|torch iterations|critical-path|queue|sequences``: the library's answer rendered (exit 0,
the JSON document's shape, the same facts as ``gpuopt.analyses``), and bad input (exit 2, its code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import analyses, nsys, torch_trace

NSYS = "h200/graphs/graph_graph.sqlite"
TORCH = "h200/graphs/graph_trace.json"
FILES = {"nsys": NSYS, "torch": TORCH}


@pytest.mark.parametrize("area", ["nsys", "torch"])
def test_iterations_json_is_the_library_document(shared: Path, area: str) -> None:
    run = gpuopt(area, "iterations", str(shared / FILES[area]), "--json", "--limit", "0")
    assert run.code == 0, run.stderr
    envelope = run.json()
    assert envelope["schema"] == f"gpuopt.{area}.iterations/v1"
    data = envelope["data"]
    assert set(data) == {"path", "traces", "table"}
    answer = analyses.iterations_document(shared / FILES[area], area=area, limit=0)  # type: ignore[arg-type]
    assert data == answer.data.model_dump(mode="json")
    assert data["table"]["name"] == "iterations"
    assert len(data["table"]["rows"]) == answer.table.height
    (trace,) = data["traces"]
    assert trace["used"] == "marker" and trace["marker"]["instances"] == {"nsys": 12, "torch": 6}[area]
    assert [i["path"] for i in envelope["provenance"]["inputs"]] == [str(shared / FILES[area])]


@pytest.mark.parametrize("area", ["nsys", "torch"])
def test_critical_path_step_lists_that_steps_edges(shared: Path, area: str) -> None:
    run = gpuopt(area, "critical-path", str(shared / FILES[area]), "--step", "3", "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["step"] == 3 and data["table"]["name"] == "critical_path"
    rows = data["edges"]["rows"]
    assert rows and {r["row"] for r in rows} == {3}
    (step,) = [s for s in data["table"]["rows"] if s["row"] == 3]
    assert sum(r["duration_ns"] for r in rows) == step["span_ns"]  # the whole path, whatever --limit
    human = gpuopt(area, "critical-path", str(shared / FILES[area]), "--step", "3")
    assert human.code == 0 and "step row 3" in human.stdout
    # A row the capture does not have is an error naming the rows it has (it was exit 0, no edges).
    missing = gpuopt(area, "critical-path", str(shared / FILES[area]), "--step", "9999", "--json")
    assert missing.code == 2, missing.stdout
    (error,) = missing.json()["errors"]
    last = max(s["row"] for s in data["table"]["rows"])
    assert error["code"] == "analysis_step_unknown" and error["expected"].endswith(f"..{last})")


@pytest.mark.parametrize("area", ["nsys", "torch"])
def test_critical_path_document_carries_the_first_edges_of_the_whole_table(shared: Path, area: str) -> None:
    # The document builds only the stretches it shows (a large capture's paths have millions): they
    # must be the first rows of the library's whole table, with its row count.
    path = shared / FILES[area]
    whole = analyses.critical_path(nsys.open(path) if area == "nsys" else torch_trace.open(path)).edges
    answer = analyses.critical_path_document(path, area=area, limit=7)  # type: ignore[arg-type]
    edges = answer.data.edges
    assert whole.height > 7 and edges.total_rows == whole.height and edges.truncated
    assert edges.rows == whole.head(7).to_dicts()
    everything = analyses.critical_path_document(path, area=area, limit=0)  # type: ignore[arg-type]
    assert everything.data.edges.rows == whole.to_dicts() and not everything.data.edges.truncated


@pytest.mark.parametrize("area", ["nsys", "torch"])
@pytest.mark.parametrize(
    ("command", "extra", "table"),
    [
        ("queue", [], "queue"),
        ("queue", ["--series"], "queue_series"),
        ("sequences", ["--n", "4"], "sequences"),
    ],
)
def test_queue_and_sequences_commands(
    shared: Path, area: str, command: str, extra: list[str], table: str
) -> None:
    run = gpuopt(area, command, str(shared / FILES[area]), *extra, "--json", "--limit", "3")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["table"]["name"] == table and len(data["table"]["rows"]) <= 3
    human = gpuopt(area, command, str(shared / FILES[area]), *extra, "--limit", "3")
    assert human.code == 0 and human.stdout.strip()


def test_out_writes_the_whole_table(shared: Path, tmp_path: Path) -> None:
    out = tmp_path / "it.csv"
    run = gpuopt("nsys", "iterations", str(shared / NSYS), "--limit", "1", "--out", str(out))
    assert run.code == 0, run.stderr
    assert len(out.read_text().splitlines()) == 1 + 26  # header + 13 nvtx rows + 13 detected rows


@pytest.mark.parametrize("area", ["nsys", "torch"])
@pytest.mark.parametrize("command", ["iterations", "critical-path", "queue", "sequences"])
def test_missing_file_exits_2(tmp_path: Path, area: str, command: str) -> None:
    run = gpuopt(area, command, str(tmp_path / "absent.sqlite"), "--json")
    assert run.code == 2, run.stdout + run.stderr
    assert run.json()["errors"][0]["code"]


@pytest.mark.parametrize("area", ["nsys", "torch"])
def test_a_file_of_the_wrong_kind_exits_2(tmp_path: Path, area: str) -> None:
    bad = tmp_path / ("bad.sqlite" if area == "nsys" else "bad.json")
    bad.write_text("this is neither an nsys export nor a Kineto trace\n")
    run = gpuopt(area, "iterations", str(bad), "--json")
    assert run.code == 2, run.stdout + run.stderr
    assert run.json()["errors"][0]["code"]


def test_bad_options_exit_2(shared: Path) -> None:
    assert gpuopt("nsys", "critical-path", str(shared / NSYS), "--source", "nope").code == 2
    assert gpuopt("nsys", "sequences", str(shared / NSYS), "--n", "0").code == 2
    unknown = gpuopt("nsys", "iterations", str(shared / NSYS), "--marker", "no_such_range", "--json")
    assert unknown.code == 2, unknown.stdout + unknown.stderr
