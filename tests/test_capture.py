"""``gpuopt capture`` wired end to end on the CPU example with profiler stand-ins
(``eval_support/capture.py``): interleaving, freezing, facts, ``cap:`` references whose diff equals the
diff of the recorded files themselves (paired, since the capture interleaved them), the A/A, dry run,
refusals, typed profiler failures, ncu, cancel and correctness voiding."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from eval_support.capture import FAKE_NCU, PLAN, Example, code, example, nsys_ab, stand_in
from gpuopt import profile
from gpuopt.evaluation import invocation
from gpuopt.evaluation.capture import operations, refs
from gpuopt.evaluation.records import read_result
from gpuopt.evaluation.store import Store

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

__all__ = ["example", "nsys_ab"]  # module fixtures, imported


def test_nsys_capture_interleaves_and_freezes_every_report(example: Example, nsys_ab: Any) -> None:
    result = nsys_ab.result
    assert result is not None, nsys_ab.summary
    assert (result.verdict, result.execution_status, result.measurement_validity) == (
        "passed",
        "succeeded",
        "valid",
    )
    caps = result.captures
    assert [(c.variant, c.repeat) for c in caps] == [
        (v, r)
        for r in range(5)
        for v in (["original", "candidate"] if r % 2 == 0 else ["candidate", "original"])
    ]
    assert all(c.status == "captured" for c in caps)
    # Same inputs within a repeat: the driver got one seed per repeat and case.
    store = Store.open(example.root)
    seeds = {}
    for c in caps:
        req = json.loads(
            (
                example.root
                / "invocations"
                / result.invocation_id
                / "calls"
                / f"{c.call_index:04d}"
                / "request.json"
            ).read_text()
        )
        seeds.setdefault(c.repeat, set()).add(req["sampling"]["input_seed"])
    assert all(len(s) == 1 for s in seeds.values()) and len({min(s) for s in seeds.values()}) == 5
    # Each report and its export are frozen, content-addressed, and the blob is the recorded file.
    first = caps[0]
    assert [a.kind for a in first.artifacts] == ["nsys-rep", "nsys-sqlite"]
    blob = store.path(f"objects/blobs/{first.artifacts[1].sha256[:2]}/{first.artifacts[1].sha256}")
    recorded = example.shared / "gpuopt/h200/softmax/nsys/sm_original_a_1.sqlite"
    assert blob.read_bytes() == recorded.read_bytes()
    # The engine's facts beside it equal what the diff engine reads from the recorded file.
    truth = profile.load(recorded, "kernel").facts
    assert first.facts is not None
    assert (first.facts.keys, first.facts.events, first.facts.total_ns) == (
        truth.keys,
        truth.events,
        truth.total_ns,
    )
    settings = result.capture
    assert settings.tool == "nsys" and settings.profiler is not None
    assert settings.profiler.version == "2025.3.1.90"
    assert settings.options["cuda-graph-trace"] == "graph" and settings.options["trace"] == "cuda,nvtx,osrt"
    assert settings.argv[:2] == [settings.profiler.path, "profile"]
    # gpuopt report lists the captures with their facts.
    from gpuopt.evaluation.views import report

    md = report.report(example.root, result.invocation_id).text or ""
    assert f"`cap:{result.invocation_id}/VARIANT` in gpuopt profile diff" in md
    assert "| 0 | original | rows512 | 0 | captured | — | nsys-rep " in md
    assert f"| {truth.events} | {truth.total_ns} |" in md


def test_capture_refs_diff_equals_the_recorded_files_diff(example: Example, nsys_ab: Any) -> None:
    inv = nsys_ab.result.invocation_id
    folder = example.shared / "gpuopt/h200/softmax/nsys"
    original = [folder / f"sm_original_a_{i}.sqlite" for i in range(1, 6)]
    faster = [folder / f"sm_faster_{i}.sqlite" for i in range(1, 6)]
    truth = profile.diff_files(original, faster, by="kernel", paired=True)
    run = gpuopt(
        "profile", "diff", "--root", str(example.root),
        "--baseline", f"cap:{inv}/original", "--candidate", f"cap:{inv}/candidate", "--json",
    )  # fmt: skip
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["method"]["pairing"] == "paired"
    assert data["counts"]["flagged"] == truth.counts.flagged >= 1
    assert [b["path"] for b in data["baseline"]] == [f"cap:{inv}/original/rows512#{r}" for r in range(5)]
    rows = {r["key"]: r for r in data["table"]["rows"]}
    for row in truth.table.iter_rows(named=True):
        assert rows[row["key"]]["change_ns"] == pytest.approx(row["change_ns"])
        assert rows[row["key"]]["ci_low_ns"] == pytest.approx(row["ci_low_ns"])
    # A capture reference beside a plain file (one capture on that side): unpaired, no uncertainty.
    one = gpuopt(
        "profile", "diff", "--root", str(example.root),
        "--baseline", f"cap:{inv}/original", "--candidate", str(faster[0]), "--json",
    )  # fmt: skip
    assert one.code == 0
    assert one.json()["data"]["method"]["pairing"] == "none"
    assert "no_uncertainty" in [w["code"] for w in one.json()["data"]["warnings"]]


def test_aa_capture_of_original_and_champion(example: Example) -> None:
    fake = example.nsys("aa")
    out = operations.run(
        example.request("nsys", ["original", "champion"], profiler=str(fake)), cwd=example.dir, wait=True
    )
    result = out.result
    assert result is not None and result.verdict == "passed", out.summary
    variants = {v.variant: v for v in result.capture.variants}
    assert variants["original"].digest == variants["champion"].digest  # the Champion is the original
    a = refs.resolve(f"cap:{result.invocation_id}/original", example.root)
    b = refs.resolve(f"cap:{result.invocation_id}/champion", example.root)
    assert refs.paired(a, b)
    diff = profile.diff_files([x.path for x in a], [x.path for x in b], paired=True)
    assert diff.counts.flagged <= max(1, round(diff.method.fdr * diff.counts.tested))


def test_dry_run_writes_nothing_and_shows_the_plan(example: Example, tmp_path: Path) -> None:
    fake = example.nsys("dry")
    before = sorted(p.name for p in (example.root / "invocations").iterdir())
    out = operations.run(
        example.request(
            "nsys", ["original", "candidate"], profiler=str(fake), nsys={"capture_range": "cudaProfilerApi"}
        ),
        cwd=example.dir,
        dry_run=True,
    )
    assert out.dry_run is not None and out.dry_run.calls.total == 10
    assert out.dry_run.calls.by_role == {"original": 5, "candidate": 5}
    argv = out.dry_run.request["capture"]["argv"]
    assert "--capture-range=cudaProfilerApi" in argv and "--capture-range-end=stop" in argv
    assert sorted(p.name for p in (example.root / "invocations").iterdir()) == before
    assert out.summary[2:5] == [
        "  call 0: rows512 repeat 0 original",
        "  call 1: rows512 repeat 0 candidate",
        "  call 2: rows512 repeat 1 candidate",
    ]


def test_request_time_refusals(example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = operations.run
    d = example.dir
    # A driver without the torch_trace capability cannot capture with torch.
    assert code(run, example.request("torch", ["original"]), cwd=d, dry_run=True) == (
        "driver_capability_missing",
        2,
    )
    # A missing profiler: exit 3 naming what to install.
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("GPUOPT_NSYS", raising=False)
    monkeypatch.setattr("gpuopt.tools._standard_dirs", lambda name: iter(()))
    assert code(run, example.request("nsys", ["original"]), cwd=d, dry_run=True) == ("tool_absent", 3)
    monkeypatch.setenv("GPUOPT_NSYS", str(tmp_path / "nope"))
    assert code(run, example.request("nsys", ["original"]), cwd=d, dry_run=True) == ("tool_absent", 3)
    monkeypatch.setenv("PATH", path)  # the Target froze PATH: a changed PATH is environment_changed
    monkeypatch.setenv("GPUOPT_NSYS", str(example.nsys("env")))
    assert code(run, example.request("nsys", ["original"]), cwd=d, dry_run=True) == ("ok", 0)
    # The candidate needs its Experiment; a variant listed twice; nvtx range without a name.
    req = example.request("nsys", ["candidate"])
    del req["experiment"]
    assert code(run, req, cwd=d, dry_run=True)[0] == "field_invalid"
    assert (
        code(run, example.request("nsys", ["original", "original"]), cwd=d, dry_run=True)[0]
        == "field_invalid"
    )
    bad = example.request("nsys", ["original"], nsys={"capture_range": "nvtx"})
    assert code(run, bad, cwd=d, dry_run=True)[0] == "field_invalid"


def test_profiler_without_report_is_a_typed_failure(example: Example) -> None:
    fake = example.nsys("noreport", mode="no_report")
    out = operations.run(
        example.request(
            "nsys", ["original"], profiler=str(fake), plan={**PLAN, "variants": ["original"], "repeats": 1}
        ),
        cwd=example.dir,
        wait=True,
    )
    result = out.result
    assert result is not None
    assert result.verdict == "not_evaluated" and result.stop_reason == "profiler_no_report"
    assert [(c.status, c.reason) for c in result.captures] == [("failed", "profiler_no_report")]
    assert code(refs.resolve, f"cap:{result.invocation_id}/original", example.root) == ("capture_voided", 2)


def test_ncu_counter_permission_is_typed_with_the_version_kept(example: Example) -> None:
    fake = stand_in(example.base / "bin-ncu", "ncu", FAKE_NCU.format(python=sys.executable, report=""))
    req = example.request(
        "ncu", ["original"], profiler=str(fake), plan={**PLAN, "variants": ["original"], "repeats": 1}
    )
    out = operations.run(req, cwd=example.dir, wait=True)
    result = out.result
    assert result is not None
    assert result.stop_reason == "ncu_counter_access_denied"
    assert result.captures[0].reason == "ncu_counter_access_denied"
    assert "NVreg_RestrictProfilingToAdminUsers" in (result.captures[0].message or "")
    assert result.capture.profiler is not None and result.capture.profiler.version == "2025.3.1.0"
    assert "--clock-control" in result.capture.argv and result.capture.options["clock-control"] == "none"


def test_capture_cli_and_status(example: Example, nsys_ab: Any, tmp_path: Path) -> None:
    inv = nsys_ab.result.invocation_id
    request = tmp_path / "req.json"
    fake = example.base / "bin-ab" / "nsys"  # the same profiler: same identity, same request digest
    request.write_text(json.dumps(example.request("nsys", ["original", "candidate"], profiler=str(fake))))
    again = gpuopt("capture", "--request", str(request), "--json", cwd=example.dir)
    assert again.code == 0, again.stderr
    # The same request dedupes to the finished capture (its result reused).
    assert again.json()["data"]["submission"]["invocation_id"] == inv
    assert again.json()["data"]["submission"]["deduplicated"] is True
    st = invocation.status(example.root, inv)
    assert st.state == "completed" and st.operation == "capture"
    absent = gpuopt(
        "profile",
        "diff",
        "--root",
        str(example.root),
        "--baseline",
        "cap:inv-" + "0" * 32 + "/original",
        "--candidate",
        "x.sqlite",
    )
    assert absent.code == 2 and "capture_not_found" in absent.stderr
    amb = gpuopt(
        "profile", "diff", "--root", str(example.root), "--baseline", f"cap:{inv}", "--candidate", "x.sqlite"
    )
    assert amb.code == 2 and "capture_ref_ambiguous" in amb.stderr


def test_ncu_capture_freezes_the_report(example: Example) -> None:
    recorded = example.shared / "h200/ncu/kernels_full.ncu-rep"
    text = FAKE_NCU.format(python=sys.executable, report=str(recorded))
    fake = stand_in(example.base / "bin-ncu-ok", "ncu", text)
    plan = {**PLAN, "variants": ["original"], "repeats": 1}
    req = example.request("ncu", ["original"], profiler=str(fake), plan=plan, ncu={"kernel": "softmax"})
    result = operations.run(req, cwd=example.dir, wait=True).result
    assert result is not None and result.verdict == "passed"
    assert "--kernel-name" in result.capture.argv and "regex:softmax" in result.capture.argv
    [cap] = result.captures
    assert cap.status == "captured" and [a.kind for a in cap.artifacts] == ["ncu-rep"]
    blob = Store.open(example.root).path(
        f"objects/blobs/{cap.artifacts[0].sha256[:2]}/{cap.artifacts[0].sha256}"
    )
    assert blob.read_bytes() == recorded.read_bytes()
    # Reading a .ncu-rep needs NVIDIA's ncu-report package or ncu itself: without one the report is kept
    # and the record says why it has no facts.
    if cap.facts is None:
        assert (cap.message or "").startswith("facts not read: ")


def test_cancel_stops_a_capture_and_cleans_up(example: Example) -> None:
    fake = example.nsys("hang", mode="hang")
    plan = {**PLAN, "variants": ["original"], "repeats": 2}
    sub = operations.run(
        example.request("nsys", ["original"], profiler=str(fake), plan=plan), cwd=example.dir
    )
    assert sub.submission is not None
    inv = sub.submission.invocation_id
    started = example.base / "state-hang" / "started"
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists()
    invocation.cancel(example.root, inv)
    st = invocation.wait(example.root, inv, timeout_s=120)
    assert (st.state, st.cleanup_status) == ("completed", "confirmed")
    found = read_result(Store.open(example.root), inv)
    assert found is not None
    result = found[0]
    assert (result.execution_status, result.stop_reason) == ("cancelled", "cancelled")
    assert [(c.status, c.reason, c.call_index) for c in result.captures] == [("failed", "cancelled", 0)]
    assert result.calls.skipped == [1]


def test_a_failed_correctness_check_voids_that_capture(example: Example) -> None:
    fake = example.nsys("wrong")
    plan = {**PLAN, "variants": ["original", "candidate"], "repeats": 2}
    req = example.request("nsys", ["original", "candidate"], profiler=str(fake), plan=plan)
    req["experiment"] = example.refs["experiment:wrong"]
    result = operations.run(req, cwd=example.dir, wait=True).result
    assert result is not None
    assert (result.verdict, result.stop_reason) == ("failed", "correctness_failed")
    # The original's capture stands; the wrong candidate's is voided (nothing frozen) and the plan stops.
    assert [(c.variant, c.status, c.reason, len(c.artifacts)) for c in result.captures] == [
        ("original", "captured", None, 2),
        ("candidate", "voided", "correctness_failed", 0),
    ]
    assert result.calls.skipped == [2, 3]
    assert code(refs.resolve, f"cap:{result.invocation_id}/candidate", example.root) == ("capture_voided", 2)
    assert len(refs.resolve(f"cap:{result.invocation_id}/original", example.root)) == 1
