"""``gpuopt capture`` with tool torch through a driver's ``torch_trace`` capability (a stand-in driver that
replays recorded H200 Kineto traces), and capture diffs cited by a target result, shown by ``gpuopt report``
and ``gpuopt handoff`` beside the verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from eval_support.capture import LIMITS, PLAN, Example, example, nsys_ab, tracing
from gpuopt import profile
from gpuopt.evaluation.capture import operations, refs
from gpuopt.evaluation.store import Store

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

__all__ = ["example", "nsys_ab", "tracing"]  # module fixtures, imported


def test_torch_capture_through_the_driver_capability(tracing: tuple[Path, Path, Path], shared: Path) -> None:
    directory, root, forget = tracing
    req = {
        "root": str(root),
        "tool": "torch",
        "plan": {**PLAN, "variants": ["original", "champion"], "repeats": 2},
        "limits": LIMITS,
    }
    out = operations.run(req, cwd=directory, wait=True)
    result = out.result
    assert result is not None and result.verdict == "passed", out.summary
    assert result.capture.profiler is None and result.capture.argv == []
    caps = result.captures
    assert [(c.variant, c.status) for c in caps] == [
        ("original", "captured"),
        ("champion", "captured"),
        ("champion", "captured"),
        ("original", "captured"),
    ]
    assert all([a.kind for a in c.artifacts] == ["kineto-trace"] for c in caps)
    a = refs.resolve(f"cap:{result.invocation_id}/original", root)
    b = refs.resolve(f"cap:{result.invocation_id}/champion", root)
    folder = shared / "gpuopt/h200/softmax/torch"
    truth = profile.diff_files(
        [folder / f"sm_original_a_{i}.json.gz" for i in (1, 2)],
        [folder / f"sm_original_b_{i}.json.gz" for i in (1, 2)],
        paired=True,
    )
    got = profile.diff_files([x.path for x in a], [x.path for x in b], paired=refs.paired(a, b))
    assert got.method.pairing == "paired"
    assert got.table["change_ns"].to_list() == truth.table["change_ns"].to_list()
    # A driver that declares the capability but writes no trace: a typed failure, nothing frozen.
    forget.write_text("")
    req["plan"] = {**PLAN, "variants": ["original"], "repeats": 1}
    failed = operations.run(req, cwd=directory, wait=True).result
    assert failed is not None and failed.stop_reason == "torch_trace_missing"
    assert [(c.status, c.reason, c.artifacts) for c in failed.captures] == [
        ("failed", "torch_trace_missing", [])
    ]


def test_a_target_result_cites_a_capture_diff_and_report_and_handoff_show_it(
    example: Example, nsys_ab: Any
) -> None:
    from gpuopt.evaluation import operations as evaluations
    from gpuopt.evaluation.views import handoff, report

    plan = {"samples_per_call": 3, "warmup_per_call": 0}
    base = {"root": str(example.root), "experiment": example.refs["experiment:faster"], "limits": LIMITS}
    screen = evaluations.run("screen", {**base, "plan": {**plan, "pairs": 2}}, cwd=example.dir, wait=True)
    assert screen.result is not None and screen.result.verdict == "not_rejected", screen.summary
    target = evaluations.run("target", {**base, "plan": {**plan, "pairs": 5}}, cwd=example.dir, wait=True)
    assert target.result is not None, target.summary
    tid = target.result.invocation_id
    inv = nsys_ab.result.invocation_id
    sides = ["--baseline", f"cap:{inv}/original", "--candidate", f"cap:{inv}/candidate"]
    run = gpuopt("profile", "diff", "--root", str(example.root), *sides, "--cite", tid, "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    cid = data["citation"]
    assert cid.startswith("cit-")
    rows = sorted(
        (r for r in data["table"]["rows"] if r["flagged"]), key=lambda r: (-abs(r["change_ns"]), r["key"])
    )
    # The record: the diff's facts, bound to the result's bytes.
    from gpuopt.evaluation.capture import citations

    [(cited, _)] = citations.for_result(Store.open(example.root), tid)
    assert (
        cited.id == cid
        and cited.result.invocation_id == tid
        and cited.result.sha256 == target.result_ref.sha256
    )
    assert (cited.k_baseline, cited.k_candidate, cited.pairing) == (5, 5, "paired")
    assert cited.flagged == data["counts"]["flagged"] and cited.keys[0].key == rows[0]["key"]
    assert cited.keys[0].ci_low_pct == pytest.approx(rows[0]["ci_low_pct"])
    text = citations.line(cited)
    assert text.startswith(f"nsys kernel diff over 5 captures per side (paired): {cited.flagged} of ")
    assert f"{rows[0]['change_pct']:+.1f} %" in text
    # Citing it again is the same record (content-derived id, published once).
    again = gpuopt("profile", "diff", "--root", str(example.root), *sides, "--cite", tid, "--json")
    assert again.code == 0 and again.json()["data"]["citation"] == cid
    # Report (markdown and JSON) and handoff show it beside the verdict.
    md = report.report(example.root, tid).text or ""
    assert "### Capture diffs cited by this result" in md and text in md
    js = report.report(example.root, tid, fmt="json").report or {}
    assert [c["id"] for c in js["capture_diffs"]] == [cid]
    notes = (Path(handoff.write(example.root).path)).read_text()
    verdict_line = next(i for i, line in enumerate(notes.splitlines()) if tid in line and "target" in line)
    assert "capture diff: " + text in notes.splitlines()[verdict_line + 1]
    # Only target / final-audit results cite; only capture records are cited.
    bad = gpuopt("profile", "diff", "--root", str(example.root), *sides, "--cite", inv)
    assert bad.code == 2 and "citation_result_invalid" in bad.stderr
    folder = example.shared / "gpuopt/h200/softmax/nsys"
    plain = gpuopt(
        "profile", "diff", "--root", str(example.root), "--baseline", str(folder / "sm_original_a_1.sqlite"),
        "--candidate", f"cap:{inv}/candidate", "--cite", tid,
    )  # fmt: skip
    assert plain.code == 2 and "citation_inputs_invalid" in plain.stderr
