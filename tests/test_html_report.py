"""HTML reports (``gpuopt nsys report``, ``gpuopt torch report``, ``gpuopt report --html``): what the
plots hold (exact counts from the real fixtures, the binning rule by hand), bad input (an empty capture,
a trace without GPU events, a root with no evaluations: a page that says so; unwritable paths: exit 2;
plotly absent: exit 3), and each page opened in headless Chromium: no console message, every plot
rendered (SVG/canvas layers with drawn traces), a screenshot saved under the test's tmp path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import browser
from conftest import gpuopt
from gpuopt import analyses, nsys
from gpuopt.html import iterations, profiles, timeline
from gpuopt.html.page import Page
from nsys_db import GLOBAL_PID, Export

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

pytest.importorskip("plotly")

CPU_ONLY = "public/torch/hta_cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
needs_chromium = pytest.mark.skipif(
    browser.find() is None,
    reason="no chromium/chromium-browser/google-chrome on PATH (CI installs the Debian chromium package)",
)


def _traces(fig: Any) -> dict[str, Any]:
    return {t.name: t for t in fig.data}


def test_timeline_draws_every_operation_of_a_small_export(shared: Path) -> None:
    report = nsys.open(shared / "h200/nsys/eager.sqlite")
    ops = report.operations()
    gaps = report.gaps().filter(pl.col("stream_id").is_not_null())
    fig, note = timeline.figure(ops, gaps=lambda: gaps, ranges=None)
    traces = _traces(fig)
    # 176 kernels, 32 memcpys, 58 memsets (tests/data/fixtures/README.md), one bar each.
    assert (len(traces["kernel"].x), len(traces["memcpy"].x), len(traces["memset"].x)) == (176, 32, 58)
    assert len(traces["idle gap"].x) == gaps.height > 0
    # The bars' lengths add up to NVIDIA's cuda_gpu_kern_sum total.
    kernel_total_ns = report.kernel_summary()["total_time_ns"].sum()
    assert sum(traces["kernel"].x) * 1e6 == pytest.approx(kernel_total_ns, abs=1)
    assert set(traces["kernel"].y) <= {"GPU 0 · stream 7", "GPU 0 · stream 13"}
    assert note.startswith("266 operations, each drawn")


def test_graph_executions_are_their_own_bars(shared: Path) -> None:
    report = nsys.open(shared / "h200/graphs/graph_graph.sqlite")
    fig, _ = timeline.figure(report.operations(), gaps=None, ranges=None)
    traces = _traces(fig)
    assert len(traces["graph"].x) == 12  # 12 decode steps, one graph replay each
    assert traces["graph"].hovertext[0].startswith("[CUDA graph ")


def test_graph_level_top_kernels_include_the_graph_executions(shared: Path, tmp_path: Path) -> None:
    """graph_graph.sqlite records 12 executions of graph 4 (exec 5), 2,429,967 ns, and none of their
    kernels: the top-kernels plot has one green bar for them, named, and says what it is; a node-level
    trace lists the graphs' kernels as kernels and gets no such bar."""
    path = shared / "h200/graphs/graph_graph.sqlite"
    report = nsys.open(path)
    frame, note = profiles._kernels_and_graphs(report, None, None)
    assert frame.filter(kind="graph").rows() == [("CUDA graph 4 (exec 5), 12 executions", 2_429_967, "graph")]
    assert frame.filter(kind="kernel")["total"].sum() == report.kernels()["total_time_ns"].sum()
    assert "12 CUDA-graph executions (2.430 ms)" in note
    data = _report("nsys", "report", str(path), "--html", str(tmp_path / "g.html"))
    [plot] = [p for p in data["plots"] if p["name"] == "kernels"]
    assert plot["title"] == "Top kernels and CUDA-graph executions by total GPU time"
    assert "12 CUDA-graph executions (2.430 ms)" in plot["note"]
    assert "CUDA graph 4 (exec 5), 12 executions" in (tmp_path / "g.html").read_text()
    node, node_note = profiles._kernels_and_graphs(
        nsys.open(shared / "h200/graphs/graph_node.sqlite"), None, None
    )
    assert (node.filter(kind="graph").height, node_note) == (0, "")
    # Inside --nvtx prefill no graph was launched: kernels only.
    assert profiles._kernels_and_graphs(report, None, "prefill")[1] == ""


def test_binning_rule_by_hand() -> None:
    # t0 = 0, t1 = 3000 -> 1,000 bins of 3 ns.
    ops = pl.DataFrame(
        {
            "lane": ["L", "L", "L"],
            "kind": ["kernel", "memcpy", "kernel"],
            "start_ns": [0, 15, 2990],
            "end_ns": [10, 20, 3000],
        }
    )
    cells, width = timeline.busy_cells(ops, 0, 3000)
    assert width == 3
    busy = dict(zip(cells["bin"].to_list(), cells["busy"].to_list(), strict=True))
    assert busy == {0: 3, 1: 3, 2: 3, 3: 1, 5: 3, 6: 2, 996: 1, 997: 3, 998: 3, 999: 3}
    starts = {
        r["bin"]: (r["kernel"], r["memcpy"])
        for r in cells.iter_rows(named=True)
        if r["kernel"] or r["memcpy"]
    }
    assert starts == {0: (1, 0), 5: (0, 1), 996: (1, 0)}


def test_many_operations_are_binned_not_drawn() -> None:
    n = 10_000  # > RAW_LIMIT; span 99,995 ns -> bins of 100 ns, each holding 10 operations of 5 ns
    assert n > timeline.RAW_LIMIT
    ops = pl.DataFrame(
        {
            "device_id": [0] * n,
            "stream_id": [7] * n,
            "kind": ["kernel"] * n,
            "start_ns": [10 * i for i in range(n)],
            "end_ns": [10 * i + 5 for i in range(n)],
            "name": ["k"] * n,
        }
    )
    fig, note = timeline.figure(ops, gaps=pytest.fail, ranges=pytest.fail)  # not asked for when binned
    (heat,) = fig.data
    assert heat.type == "heatmap" and len(heat.z) == 1 and len(heat.z[0]) == timeline.BINS
    assert list(heat.z[0]) == [0.5] * timeline.BINS
    assert heat.text[0][0] == "10 kernel"
    assert f"{n:,} operations: more than" in note


def _report(*args: str) -> dict[str, Any]:
    run = gpuopt(*args, "--json")
    assert run.code == 0, run.stderr
    data: dict[str, Any] = run.json()["data"]
    return data


def _drawn(data: dict[str, Any]) -> dict[str, bool]:
    return {p["name"]: p["drawn"] for p in data["plots"]}


def test_iterations_section_draws_each_step_of_the_graph_level_decode(shared: Path) -> None:
    """graph_graph.sqlite: 12 decode_step ranges (the first a warm-up) and the prefill outside them. The
    section draws one bar per row of ``gpuopt nsys iterations``' marker rows, spans and GPU busy equal to
    that table's, odd rows grey, and the note gives the regular rows' medians."""
    report = nsys.open(shared / "h200/graphs/graph_graph.sqlite")
    found = analyses.iterations(report)
    page = Page(title="t")
    assert iterations.draw(page, found) == 11
    [plot] = page.plots
    assert plot.drawn and plot.note is not None
    rows = found.table.filter(pl.col("source") == "nvtx").sort("start_ns")
    regular = rows.filter(pl.col("odd").is_null())
    assert rows.filter(pl.col("odd") == "warm_up")["iteration"].to_list() == [1]
    assert rows.filter(pl.col("name") == "decode_step").height == 12
    assert plot.note.startswith("11 regular iterations on device 0, from the step marker 'decode_step'")
    median = regular["span_ns"].median()
    assert isinstance(median, float | int)
    assert f"span {median / 1e6:,.3f} ms" in plot.note
    fig = page_figure(found)
    span, busy = fig.data
    assert span.y == pytest.approx([v / 1e6 for v in rows["span_ns"].to_list()], abs=1e-9)
    assert busy.y == pytest.approx([v / 1e6 for v in rows["gpu_busy_ns"].to_list()], abs=1e-9)
    grey = [c == "#9aa5b1" for c in span.marker.color]
    assert grey == [o is not None for o in rows["odd"].to_list()]
    # A window around no whole iteration: the section says so instead of drawing.
    empty = Page(title="t")
    assert iterations.draw(empty, found, window=(0, 1)) == 0
    assert "inside the window" in (empty.plots[0].note or "")


def page_figure(found: Any) -> Any:
    """The figure :func:`iterations.draw` adds, taken from a throwaway page."""
    captured: list[Any] = []
    page = Page(title="t")
    page.figure = lambda name, title, fig, note=None: captured.append(fig)  # type: ignore[method-assign]
    iterations.draw(page, found)
    return captured[0]


def test_empty_capture_says_so(tmp_path: Path) -> None:
    export = Export().write(tmp_path / "empty.sqlite")
    data = _report("nsys", "report", str(export), "--html", str(tmp_path / "empty.html"))
    assert _drawn(data) == {"timeline": False, "iterations": False, "kernels": False, "nvtx": False}
    assert "no GPU operations" in data["plots"][0]["note"]
    assert "no GPU operations" in (tmp_path / "empty.html").read_text()


def test_trace_without_gpu_events_says_so(shared: Path, tmp_path: Path) -> None:
    trace = shared / CPU_ONLY
    data = _report("torch", "report", str(trace), "--html", str(tmp_path / "cpu.html"))
    assert _drawn(data) == {"timeline": False, "iterations": False, "kernels": False, "ops": False}
    assert "no GPU events" in data["plots"][0]["note"] and "cpu_only" in data["plots"][0]["note"]


@pytest.mark.parametrize(
    ("out", "code"),
    [
        ("folder", "output_is_folder"),
        ("missing/r.html", "output_folder_missing"),
        ("/proc/gpuopt.html", None),
    ],
)
def test_unwritable_destination_is_exit_2(shared: Path, tmp_path: Path, out: str, code: str | None) -> None:
    (tmp_path / "folder").mkdir()
    target = out if out.startswith("/") else str(tmp_path / out)
    run = gpuopt("nsys", "report", str(shared / "h200/nsys/eager.sqlite"), "--html", target, "--json")
    assert run.code == 2, run.stderr
    error = run.json()["errors"][0]
    assert error["code"] == (code or "output_unwritable")


def test_plotly_absent_is_exit_3(shared: Path, tmp_path: Path) -> None:
    shim = tmp_path / "shim" / "plotly"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('hidden for the test', name='plotly')\n")
    env = {**os.environ, "PYTHONPATH": str(shim.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", "torch", "report", str(shared / "h200/torch/eager_trace.json"),
         "--html", str(tmp_path / "t.html")],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "pip install 'gpuopt[html]'" in done.stderr
    assert not (tmp_path / "t.html").exists()


def _empty_root(base: Path) -> Path:
    from gpuopt.example.runner import Runner

    runner = Runner(base / "demo", gpu=False, progress=lambda _line: None)
    runner.prepare()
    runner.readiness()
    return base / "demo" / "root"


@pytest.fixture(scope="module")
def pages(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One page of each kind, written through the CLI."""
    out = tmp_path_factory.mktemp("html")
    root = _empty_root(out)
    made = {
        "nsys-eager": ("nsys", "report", str(shared / "h200/nsys/eager.sqlite")),
        "nsys-graphs": ("nsys", "report", str(shared / "h200/graphs/graph_graph.sqlite")),
        "nsys-empty-window": ("nsys", "report", str(shared / "h200/nsys/eager.sqlite"), "--window", "0:1"),
        "torch-eager": ("torch", "report", str(shared / "h200/torch/eager_trace.json")),
        "torch-cpu-only": ("torch", "report", str(shared / CPU_ONLY)),
        "root-no-evaluations": ("report", str(root)),
    }  # fmt: skip
    many = Export()
    name_id = many.string("void binned_kernel(float*)")
    for i in range(timeline.RAW_LIMIT + 1000):  # binned: more than RAW_LIMIT operations
        many.kernels.append(
            (1_000 * i, 1_000 * i + 600, i % 2, 1, 7, i + 1, GLOBAL_PID, name_id, name_id, None)
        )
    made["nsys-binned"] = ("nsys", "report", str(many.write(out / "many.sqlite")))
    paths = {}
    for name, args in made.items():
        path = out / f"{name}.html"
        run = gpuopt(*args, "--html", str(path))
        assert run.code == 0, (name, run.stderr)
        paths[name] = path
    return paths


def test_root_with_no_evaluations_says_so(pages: dict[str, Path]) -> None:
    text = pages["root-no-evaluations"].read_text()
    assert "No completed invocation with a primary estimate in this root yet." in text
    assert "No noise (A/A) result in this root yet." in text


SHOT = {"nsys-eager", "torch-eager"}


@needs_chromium
@pytest.mark.parametrize(
    ("name", "drawn", "empty"),
    [
        ("nsys-eager", {"timeline", "iterations", "kernels", "nvtx"}, []),
        ("nsys-graphs", {"timeline", "iterations", "kernels", "nvtx"}, []),
        ("nsys-binned", {"timeline", "iterations", "kernels"}, ["nvtx"]),
        ("nsys-empty-window", set(), ["timeline", "iterations", "kernels", "nvtx"]),
        ("torch-eager", {"timeline", "iterations", "kernels", "ops"}, []),
        ("torch-cpu-only", set(), ["timeline", "iterations", "kernels", "ops"]),
        ("root-no-evaluations", set(), ["effects", "noise", "cases"]),
    ],
)
def test_page_renders_in_chromium(
    pages: dict[str, Path], tmp_path: Path, name: str, drawn: set[str], empty: list[str]
) -> None:
    # One screenshot per engine (a second Chromium start each): the DOM dump already proves the drawing.
    shot = tmp_path / f"{name}.png" if name in SHOT else None
    seen = browser.render(pages[name], screenshot=shot)
    assert seen.console == [], seen.console
    assert seen.status == "ok", seen.status
    assert set(seen.plots) == drawn
    assert all(layers > 0 and traces > 0 for layers, traces in seen.plots.values()), seen.plots
    assert seen.empty_sections == empty
    assert shot is None or shot.stat().st_size > 10_000  # a real picture, kept under the test's tmp path


def test_binned_page_grows_with_bins_not_operations(pages: dict[str, Path]) -> None:
    from plotly.offline import get_plotlyjs

    # 6,000 kernels on 2 lanes: beyond plotly.js the page holds 2 x 1,000 cells, a few hundred KB at most.
    own = pages["nsys-binned"].stat().st_size - len(get_plotlyjs().encode())
    assert 0 < own < 400_000
    assert "6,000 operations: more than 5,000" in pages["nsys-binned"].read_text()


def test_table_only_report_page_renders_emphasis_not_underscores() -> None:
    from gpuopt.evaluation.views.report import to_html

    page = to_html("# R\n_A view of the records, never evidence._\nplain_line_\n")
    assert "<p><em>A view of the records, never evidence.</em></p>" in page
    assert "<p>plain_line_</p>" in page


def test_library_report_refuses_a_format_it_does_not_write(tmp_path: Path) -> None:
    """``report(fmt="html")`` once wrote HTML; it must not now write Markdown into ``r.html`` silently."""
    from gpuopt.errors import InputError
    from gpuopt.evaluation.views.report import report

    with pytest.raises(InputError) as caught:
        report(tmp_path, fmt="html", out=tmp_path / "r.html")
    assert caught.value.code == "format_unknown"
    assert not (tmp_path / "r.html").exists()
