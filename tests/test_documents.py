"""The library answers what the CLI prints: each ``*_document`` function returns the very document a
command prints under ``data`` with ``--json``, its whole tables and its inputs (issue 29)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from gpuopt import flops, many, ncu, nsys, profile, sass, torch_trace
from gpuopt.answer import Answer

Case = tuple[list[str], Callable[[Path], Answer[Any]]]


def _eager(shared: Path) -> Path:
    return shared / "h200" / "nsys" / "eager.sqlite"


def _decode(shared: Path) -> Path:
    return shared / "gpuopt" / "h200" / "decode" / "decode_eager_trace.json.gz"


def _public(shared: Path, name: str) -> Path:
    return shared / "public" / "nsys" / f"{name}.sqlite"


CASES: dict[str, Case] = {
    "nsys summary": (
        ["nsys", "summary", "{eager}", "--nvtx", "step_3"],
        lambda s: nsys.summary_document(_eager(s), nvtx="step_3"),
    ),
    "nsys timeline": (
        ["nsys", "timeline", "{eager}", "--limit", "1", "--window", "0:"],
        lambda s: nsys.timeline_document(_eager(s), limit=1, window="0:"),
    ),
    "nsys gaps": (
        ["nsys", "gaps", "{eager}", "--level", "device", "--sort", "duration_ns", "--limit", "3"],
        lambda s: nsys.table_document(_eager(s), "gaps", level="device", sort="duration_ns", limit=3),
    ),
    "nsys nvtx": (
        ["nsys", "nvtx", "{eager}", "--per-instance", "--per-device", "--limit", "4"],
        lambda s: nsys.table_document(_eager(s), "nvtx", per_instance=True, per_device=True, limit=4),
    ),
    "nsys many": (
        ["nsys", "kernels", "{before}", "{after}", "--sort", "total_time_ns:asc", "--limit", "5"],
        lambda s: nsys.table_document(
            [_public(s, "mfu_2gpu_before"), _public(s, "mfu_2gpu_after")],
            "kernels",
            sort="total_time_ns:asc",
            limit=5,
        ),
    ),
    "nsys ranks": (
        ["nsys", "ranks", "{before}", "{after}", "--limit", "2"],
        lambda s: nsys.ranks_document([_public(s, "mfu_2gpu_before"), _public(s, "mfu_2gpu_after")], limit=2),
    ),
    "torch steps": (
        ["torch", "steps", "{torch}", "--window", "1ms:", "--limit", "3"],
        lambda s: torch_trace.table_document(
            s / "h200" / "torch" / "eager_trace.json", "steps", window="1ms:", limit=3
        ),
    ),
    "torch paths": (
        ["torch", "paths", "{torch}", "--window", "1ms:", "--sort", "gpu_inclusive_ns", "--limit", "3"],
        lambda s: torch_trace.table_document(
            s / "h200" / "torch" / "eager_trace.json",
            "paths",
            window="1ms:",
            sort="gpu_inclusive_ns",
            limit=3,
        ),
    ),
    "torch flops": (
        ["torch", "flops", "{decode}", "--sort", "flop", "--limit", "3"],
        lambda s: flops.torch_flops_document(_decode(s), sort="flop", limit=3),
    ),
    "ncu flops": (
        ["ncu", "flops", "{ncu}", "--gpu", "h200", "--limit", "2"],
        lambda s: flops.ncu_flops_document(s / "h200" / "ncu" / "kernels_full.raw.csv", gpu="h200", limit=2),
    ),
    "ncu launches": (
        ["ncu", "launches", "{ncu}", "--kernel", "gemm", "--limit", "2"],
        lambda s: ncu.launches_document(s / "h200" / "ncu" / "kernels_full.raw.csv", kernel="gemm", limit=2),
    ),
    "sass opcodes": (
        ["sass", "opcodes", "{sass}", "--function", "vec", "--limit", "4"],
        lambda s: sass.table_document(
            s / "h200" / "sass" / "kernels_sm90.nvdisasm.sass", "opcodes", function="vec", limit=4
        ),
    ),
    "profile diff": (
        ["profile", "diff", "--baseline", "{before}", "--candidate", "{after}", "--limit", "3"],
        lambda s: profile.diff_document(
            [_public(s, "mfu_2gpu_before")], [_public(s, "mfu_2gpu_after")], limit=3
        ),
    ),
}


def _argv(shared: Path, argv: list[str]) -> list[str]:
    paths = {
        "eager": _eager(shared),
        "before": _public(shared, "mfu_2gpu_before"),
        "after": _public(shared, "mfu_2gpu_after"),
        "torch": shared / "h200" / "torch" / "eager_trace.json",
        "decode": _decode(shared),
        "ncu": shared / "h200" / "ncu" / "kernels_full.raw.csv",
        "sass": shared / "h200" / "sass" / "kernels_sm90.nvdisasm.sass",
    }
    return [a.format(**{k: str(v) for k, v in paths.items()}) for a in argv]


@pytest.mark.parametrize("name", list(CASES))
def test_the_library_returns_the_document_the_cli_prints(shared: Path, name: str) -> None:
    argv, call = CASES[name]
    run = gpuopt(*_argv(shared, argv), "--json")
    assert run.code == 0, run.stderr
    envelope = run.json()
    answer = call(shared)
    assert json.loads(answer.data.model_dump_json(by_alias=True)) == envelope["data"]
    assert [i.model_dump(exclude={"from_cache"}) for i in answer.inputs] == [
        {k: v for k, v in i.items() if k != "from_cache"} for i in envelope["provenance"]["inputs"]
    ]
    assert [u.model_dump() for u in answer.unmodeled] == envelope["unmodeled"]


def test_an_answer_holds_the_whole_table_the_document_begins(shared: Path) -> None:
    answer = nsys.table_document(_eager(shared), "kernels", sort="instances", limit=2)
    table = answer.data.table
    assert answer.table.height == table.total_rows > len(table.rows) == 2
    assert answer.table.head(2).to_dicts() == table.rows
    assert answer.table["instances"].is_sorted(descending=True)


def test_a_bounded_gap_table_reads_only_what_the_document_shows(shared: Path) -> None:
    """Gaps keep only ``limit`` rows while reading, unless the whole table is asked for (``--out``)."""
    bounded = nsys.table_document(_eager(shared), "gaps", limit=3)
    whole = nsys.table_document(_eager(shared), "gaps", limit=3, whole=True)
    assert bounded.table.height == bounded.data.table.total_rows == 3
    assert whole.table.height == whole.data.table.total_rows > 3
    assert bounded.data.table.rows == whole.data.table.rows


def test_every_file_failing_is_the_answers_failure(tmp_path: Path) -> None:
    bad = [tmp_path / "a.sqlite", tmp_path / "b.sqlite"]
    for p in bad:
        p.write_bytes(b"not a database at all")
    answer = nsys.table_document(bad, "kernels", readers=many.Readers(workers=2))
    assert answer.failure is not None and answer.failure.code == "files_all_failed"
    assert answer.data.failed == answer.data.files == 2
