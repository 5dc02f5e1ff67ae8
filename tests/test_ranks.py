"""``ranks``: per collective the latest rank and skew, per rank the wait, and the stragglers, against
truth computed from the SQLite rows (nsys) and the JSON events (Kineto) of the fixtures."""

from __future__ import annotations

import gzip
import json
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import nsys, torch_trace

TORCH = ("hta_timeline_analysis_sampled_rank-0.json.gz", "hta_trace_filter_sampled_rank-1.json.gz")


def _truth(per_rank: list[list[tuple[int, int]]]) -> dict[str, list[int]]:
    """Latest rank, skew and waits of the k-th collective of every rank (the definition, spelled out)."""
    n = min(len(c) for c in per_rank)
    latest, skew, wait, last_count = [], [], [0] * len(per_rank), [0] * len(per_rank)
    caused = [0] * len(per_rank)
    for k in range(n):
        starts = [sorted(c)[k][0] for c in per_rank]
        last = max(starts)
        who = starts.index(last)
        latest.append(who)
        skew.append(last - min(starts))
        for r, s in enumerate(starts):
            wait[r] += last - s
        last_count[who] += 1
        caused[who] += sum(last - s for s in starts)
    return {"latest": latest, "skew": skew, "wait": wait, "last": last_count, "caused": caused}


def _nsys_collectives(path: Path) -> list[list[tuple[int, int]]]:
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    rows = db.execute(
        "SELECT k.globalPid >> 24, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE 'nccl%'"
    ).fetchall()
    return [[(s, e) for p, s, e in rows if p == pid] for pid in sorted({r[0] for r in rows})]


def test_nsys_ranks_equal_sqlite_truth(shared: Path) -> None:
    path = shared / "public/nsys/mfu_2gpu_before.sqlite"
    truth = _truth(_nsys_collectives(path))
    r = nsys.ranks([path])
    assert r.rank_source == "file_order"
    assert r.collectives.height == 33
    assert r.collectives["latest_rank"].to_list() == truth["latest"]
    assert r.collectives["skew_ns"].to_list() == truth["skew"]
    assert r.ranks["collective_wait_ns"].to_list() == truth["wait"]
    assert r.ranks["arrived_last"].to_list() == truth["last"]
    assert r.stragglers["rank"].to_list() == [0, 1]
    assert r.stragglers["others_wait_ns"].to_list() == truth["caused"]
    assert "pid 144 (device 0)" in r.ranks["label"][0]


def _kineto_collectives(path: Path) -> list[tuple[int, int]]:
    doc = json.loads(gzip.decompress(path.read_bytes()))

    def ns(us: float | int | str) -> int:
        return int(Decimal(str(us)) * 1000)

    return [
        (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
        for e in doc["traceEvents"]
        if e.get("cat") == "kernel" and e.get("name", "").startswith("nccl")
    ]


def test_torch_ranks_equal_json_truth(shared: Path) -> None:
    paths = [shared / "public/torch" / n for n in TORCH]
    truth = _truth([_kineto_collectives(p) for p in paths])
    r = torch_trace.open_paths(paths).ranks()
    assert r.rank_source == "distributedInfo"
    assert r.collectives["latest_rank"].to_list() == truth["latest"]
    assert r.collectives["skew_ns"].to_list() == truth["skew"]
    assert r.ranks["collective_wait_ns"].to_list() == truth["wait"]
    assert r.ranks["arrived_last"].to_list() == truth["last"] == [2, 8]
    assert r.stragglers["others_wait_ns"].to_list() == truth["caused"]
    assert r.ranks["steps"].to_list() == [2, 2]  # ProfilerStep#N ranges


def test_torch_ranks_without_rank_metadata_use_the_order_given(shared: Path, tmp_path: Path) -> None:
    copies = []
    for name in reversed(TORCH):  # rank 1's trace first
        doc = json.loads(gzip.decompress((shared / "public/torch" / name).read_bytes()))
        doc.pop("distributedInfo")
        out = tmp_path / name
        out.write_bytes(gzip.compress(json.dumps(doc).encode()))
        copies.append(out)
    r = torch_trace.open_paths(copies).ranks()
    assert r.rank_source == "file_order"
    truth = _truth([_kineto_collectives(p) for p in copies])
    assert r.ranks["arrived_last"].to_list() == truth["last"] == [8, 2]
    assert r.ranks["collective_wait_ns"].to_list() == truth["wait"]


def test_ranks_cli_json_and_bad_input(shared: Path, tmp_path: Path) -> None:
    run = gpuopt("torch", "ranks", *(str(shared / "public/torch" / n) for n in TORCH), "--json")
    assert run.code == 0, run.stderr
    data = json.loads(run.stdout)["data"]
    assert data["rank_source"] == "distributedInfo"
    assert [row["rank"] for row in data["stragglers"]["rows"]] == [0, 1]
    bad = tmp_path / "garbage.sqlite"
    bad.write_bytes(b"not sqlite")
    run = gpuopt("nsys", "ranks", str(bad), "--json")
    assert run.code == 2
    assert json.loads(run.stdout)["errors"][0]["code"] == "format_invalid"


@pytest.mark.parametrize("name", ["mfu_2gpu_before"])
def test_nsys_ranks_cli_renders_three_tables(shared: Path, name: str) -> None:
    run = gpuopt("nsys", "ranks", str(shared / f"public/nsys/{name}.sqlite"))
    assert run.code == 0, run.stderr
    assert "rank from file_order" in run.stdout
    assert "Stragglers" in run.stdout


def test_nsys_export_without_the_session_clock_uses_its_own(shared: Path) -> None:
    """Exports of older nsys versions record TARGET_INFO_SESSION_START_TIME without systemClockNs: the
    files keep their own clock (``clock: file``) instead of failing; one rank, the process with kernels."""
    folder = shared / "gpuopt/h200/softmax/nsys"
    paths = [folder / "sm_original_a_2.sqlite", folder / "sm_faster_4.sqlite"]
    db = sqlite3.connect(f"file:{paths[0]}?mode=ro&immutable=1", uri=True)
    columns = {row[1] for row in db.execute("PRAGMA table_info(TARGET_INFO_SESSION_START_TIME)")}
    assert "utcEpochNs" in columns and "systemClockNs" not in columns
    r = nsys.ranks(paths)
    assert r.clock == "file"
    pids = [
        {
            p
            for (p,) in sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True).execute(
                "SELECT DISTINCT globalPid >> 24 FROM CUPTI_ACTIVITY_KIND_KERNEL"
            )
        }
        for path in paths
    ]
    assert r.ranks.height == sum(len(p) for p in pids)
    run = gpuopt("nsys", "ranks", *map(str, paths), "--json")
    assert run.code == 0, run.stderr
    assert run.json()["data"]["clock"] == "file"
