"""End to end on the bundled example (`gpuopt example run`, real driver processes): the faster candidate
passes and is selected explicitly, the wrong one fails correctness with its performance not interpreted,
the no-effect one is never improved; then, on the same root, dry-run = executed plan, dedupe, a stale
Experiment, the views (ls, show, report, champion history, handoff) and their envelopes' schemas."""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import browser
from conftest import Example, copy_of_example, gpuopt
from eval_engine import engine_comparison
from gpuopt.cli.example import _render as render_example
from gpuopt.evaluation import invocation
from gpuopt.evaluation.store import Store
from gpuopt.evaluation.views import prediction
from gpuopt.evaluation.views.records import Root
from gpuopt.models.evaluation.operations import FinalAuditResult, ScreenResult, TargetResult
from gpuopt.models.example import ExampleRun
from gpuopt.schemas import json_schema

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first


def _valid(name: str, envelope: dict[str, Any]) -> dict[str, Any]:
    jsonschema.validate(envelope, json_schema(name))
    assert envelope["schema"] == name and envelope["ok"] is True, envelope.get("errors")
    return envelope["data"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def example(example_made_once: Example, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("example")
    copy_of_example(example_made_once, base / "demo")
    run = example_made_once.run
    data = _valid("gpuopt.example-run/v1", run.json())
    steps: dict[tuple[str, str | None], dict[str, Any]] = {
        (s["step"], s["subject"]): s for s in data["steps"]
    }
    return {
        "data": data,
        "steps": steps,
        "dir": base / "demo",
        "root": base / "demo" / "root",
        "stderr": run.stderr,
    }


def _result(root: Path, inv_id: str, model: type[Any]) -> Any:
    result, _ = Store(root).read_record(f"invocations/{inv_id}/result.json", model, what="result")
    return result


def test_the_loop_runs_every_step_in_order(example: dict[str, Any]) -> None:
    order = [(s["step"], s["subject"]) for s in example["data"]["steps"]]
    assert order == [
        ("readiness", "original"),
        ("baseline", "original"),
        ("noise", "original"),
        ("experiment", "faster"),
        ("experiment", "wrong"),
        ("experiment", "no_effect"),
        ("screen", "faster"),
        ("screen", "wrong"),
        ("screen", "no_effect"),
        ("target", "faster"),
        ("target", "no_effect"),
        ("target", "wrong"),
        ("champion", "faster"),
        ("final_audit", "faster"),
        ("handoff", None),
    ]
    steps = example["steps"]
    assert steps[("baseline", "original")]["verdict"] == "passed"
    assert steps[("noise", "original")]["verdict"] == "passed"
    assert "acts as the user" in example["data"]["acting_as_user"]
    assert "acts as the user" in steps[("champion", "faster")]["detail"]
    # Progress goes to stderr, one line per step.
    assert example["stderr"].count("\n") >= len(example["data"]["steps"])


def test_faster_candidate_is_improved_passed_and_selected(example: dict[str, Any]) -> None:
    steps, root = example["steps"], example["root"]
    screen = steps[("screen", "faster")]
    assert (screen["verdict"], screen["primary_verdict"]) == ("not_rejected", "improved")
    target = _result(root, steps[("target", "faster")]["record"], TargetResult)
    assert (target.execution_status, target.measurement_validity, target.verdict, target.stop_reason) == (
        "succeeded",
        "valid",
        "passed",
        "completed",
    )
    primary = target.statistics.primary
    assert primary.verdict == "improved" and primary.ci_low_pct >= 10.0 and primary.n_valid == 10
    assert target.reference_binding.status == "current" and target.reference_binding.selection is None
    assert target.contamination.checked is False and target.performance_interpreted is True
    assert target.formal_attempts == 1
    # Its resolution comes from the example's noise record; a minimum effect below the MDE is a warning.
    assert target.resolution.noise_ref.invocation_id == steps[("noise", "original")]["record"]
    assert target.resolution.planned_pairs == 10 and target.resolution.mde_pct > 0
    below = any(w.code == "minimum_effect_below_mde" for w in target.warnings)
    assert below == (target.resolution.status == "below_mde")
    assert [s.invocation_id for s in target.screen_gate] == [screen["record"]]
    # The explicit selection made it the Champion; the final audit of it passed.
    show = _valid("gpuopt.champion-show/v1", gpuopt("champion", "show", str(root), "--json").json())
    assert show["decision"] == "select_candidate"
    assert show["selection"]["id"] == steps[("champion", "faster")]["record"]
    request = invocation.read_request(Store(root), target.invocation_id)
    assert show["variant"]["digest"] == request.variants["candidate"].digest
    audit = _result(root, steps[("final_audit", "faster")]["record"], FinalAuditResult)
    assert (audit.verdict, audit.statistics.primary.verdict) == ("passed", "improved")
    assert audit.restore_checks.ran == [] and audit.restore_supported is False


def test_target_results_embed_the_engines_comparison_of_their_samples(example: dict[str, Any]) -> None:
    """Results v3: a target's primary is exactly what gpuopt.stats.compare returns for the invocation's
    samples (its samples table) under the Target's settings, not a copy of its fields."""
    steps, root = example["steps"], example["root"]
    for subject in ("faster", "no_effect"):
        inv_id = steps[("target", subject)]["record"]
        target = _result(root, inv_id, TargetResult)
        assert target.format == "gpuopt.invocation-result/v3"
        samples = root / "invocations" / inv_id / "samples.parquet"
        expected = engine_comparison(target, samples, root / "target.json")
        primary = target.statistics.primary
        assert primary.comparison == expected and (primary.role, primary.n_invalid) == ("primary", 0)
        assert [c.case_id for c in target.statistics.per_case] == ["rows512", "rows1024"]
        assert expected.n == 10 and expected.scope == target.request_digest


def test_wrong_candidate_fails_correctness_and_performance_is_not_interpreted(
    example: dict[str, Any],
) -> None:
    steps, root = example["steps"], example["root"]
    screen = _result(root, steps[("screen", "wrong")]["record"], ScreenResult)
    assert (screen.execution_status, screen.measurement_validity, screen.verdict, screen.stop_reason) == (
        "succeeded",
        "invalid",
        "rejected",
        "correctness_failed",
    )
    assert screen.statistics is None and screen.performance_interpreted is False
    failed = [c for c in screen.correctness if not c.passed]
    assert [c.role for c in failed] == ["candidate"]
    assert failed[0].rules[0].metric == "max_abs_error" and failed[0].rules[0].observed > 1e-9
    # The first correctness failure stopped the plan; the rest is listed as skipped.
    assert screen.calls.completed == 1 and screen.calls.skipped == [1, 2, 3]
    assert [p.valid for p in screen.pairs] == [False]
    refused = steps[("target", "wrong")]
    assert refused["stop_reason"] == "screen_rejected" and refused["record"] is None


def test_no_effect_candidate_is_never_improved(example: dict[str, Any]) -> None:
    steps, root = example["steps"], example["root"]
    assert steps[("screen", "no_effect")]["verdict"] == "not_rejected"
    target = _result(root, steps[("target", "no_effect")]["record"], TargetResult)
    assert target.statistics.primary.verdict in ("equivalent", "inconclusive")
    assert target.verdict in ("rejected", "inconclusive")
    # A target result that did not pass is not selectable.
    request = {
        "root": str(root),
        "result": {"invocation_id": target.invocation_id, "sha256": _sha(root, target.invocation_id)},
        "expected_selection": {"id": steps[("champion", "faster")]["record"], "sha256": _sel_sha(root)},
    }
    path = example["dir"] / "select-no-effect.json"
    path.write_text(json.dumps(request))
    run = gpuopt("champion", "select", "--request", str(path), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "result_not_eligible"


def _sha(root: Path, inv_id: str) -> str:
    return hashlib.sha256((root / "invocations" / inv_id / "result.json").read_bytes()).hexdigest()


def _sel_sha(root: Path) -> str:
    pointer = json.loads((root / "champion" / "current.json").read_text())
    return str(pointer["selection"]["sha256"])


def _snapshot(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        h.update(f"{path.relative_to(root)} {st.st_size} {st.st_mtime_ns} {st.st_mode}\n".encode())
    return h.hexdigest()


def test_dry_run_writes_nothing_and_its_plan_is_the_executed_plan(example: dict[str, Any]) -> None:
    root, directory = example["root"], example["dir"]
    before = _snapshot(root)
    run = gpuopt(
        "final-audit", "--request", "requests/14-final-audit.json", "--dry-run", "--json", cwd=directory
    )
    data = _valid("gpuopt.final-audit/v1", run.json())
    assert _snapshot(root) == before
    plan = data["dry_run"]
    inv_id = example["steps"][("final_audit", "faster")]["record"]
    assert (plan["dedupe"], plan["invocation_id"]) == ("reuse", inv_id)
    frozen = json.loads((root / "invocations" / inv_id / "request.json").read_text())
    executed = json.loads((root / "invocations" / inv_id / "result.json").read_text())
    assert plan["request_digest"] == frozen["request_digest"]
    assert plan["evidence_plan"] == frozen["evidence_plan"] == [r["step"] for r in executed["call_receipts"]]
    assert plan["restore_checks"] == frozen["restore_checks"] and len(plan["restore_checks"]) == 2
    # Same-process pairs: one call per pair and case, both roles in the seeded order.
    assert plan["calls"] == {"total": 10, "by_role": {"candidate": 10, "reference": 10}, "restore_checks": 2}
    assert all(len(s["roles"]) == 2 and s["lifecycle"] == "same_process" for s in plan["evidence_plan"])
    estimate = plan["estimate"]
    assert estimate["p50_s"] > 0 and estimate["unknown_steps"] == [] and inv_id in estimate["basis"]


def test_identical_request_dedupes(example: dict[str, Any]) -> None:
    run = gpuopt("baseline", "--request", "requests/02-baseline.json", "--json", cwd=example["dir"])
    data = _valid("gpuopt.baseline/v1", run.json())
    assert data["submission"]["deduplicated"] is True
    assert data["submission"]["invocation_id"] == example["steps"][("baseline", "original")]["record"]
    assert data["result"]["verdict"] == "passed"


def test_experiment_is_stale_once_the_champion_moved(example: dict[str, Any]) -> None:
    run = gpuopt(
        "screen", "--request", "requests/09-screen-no_effect.json", "--dry-run", "--json", cwd=example["dir"]
    )
    assert run.code == 2
    error = run.json()["errors"][0]
    assert error["code"] == "stale_reference" and error["expected"] == "absent"
    # The faster candidate is now the Champion: an Experiment of it against itself is refused.
    again = gpuopt(
        "experiment", "--request", "requests/04-experiment-faster.json", "--json", cwd=example["dir"]
    )
    assert again.code == 2 and again.json()["errors"][0]["code"] == "candidate_unchanged"


def test_views_read_the_ledger_and_verify_records(example: dict[str, Any]) -> None:
    root, steps = str(example["root"]), example["steps"]
    listed = _valid("gpuopt.ls/v2", gpuopt("ls", root, "--operation", "target", "--json").json())
    rows = {r["id"]: r for r in listed["table"]["rows"]}
    faster = rows[steps[("target", "faster")]["record"]]
    assert (faster["verdict"], faster["primary_verdict"], faster["pairs_valid"]) == ("passed", "improved", 10)
    assert (
        faster["mechanism"] == "vectorize-rows"
        and faster["estimate_pct"] == steps[("target", "faster")]["estimate_pct"]
    )
    assert len(rows) == 2
    experiments = _valid("gpuopt.ls/v2", gpuopt("ls", root, "experiments", "--json").json())
    verdicts = {r["mechanism"]: r["screen_verdict"] for r in experiments["table"]["rows"]}
    assert verdicts == {
        "vectorize-rows": "not_rejected",
        "vectorize-columns": "rejected",
        "rename-temporaries": "not_rejected",
    }
    inv = steps[("screen", "wrong")]["record"]
    shown = _valid("gpuopt.show/v1", gpuopt("show", root, inv, "--part", "calls", "--json").json())
    assert shown["verified"] is True and shown["table"]["rows"][0]["status"] == "completed"
    report = gpuopt("report", root, steps[("target", "faster")]["record"])
    assert report.code == 0 and "### Pairs" in report.stdout and "resolution:" in report.stdout
    history = _valid(
        "gpuopt.champion-history/v1", gpuopt("champion", "history", root, "--all", "--json").json()
    )
    assert [e["decision"] for e in history["entries"]] == ["select_candidate"]
    assert history["entries"][0]["verdict"] == "passed" and history["entries"][0]["orphan"] is False


def test_the_prediction_check_shows_in_the_summary_table_and_the_reports(example: dict[str, Any]) -> None:
    """The faster candidate's claim expects +100 % to +4,900 % (its Amdahl ceiling): whatever this run
    measured, the check is in the summary table, the progress lines and both reports, said the same way."""
    steps, root = example["steps"], example["root"]
    faster = steps[("target", "faster")]
    target = _result(root, faster["record"], TargetResult)
    checked = prediction.of_result(Root.open(root), faster["record"])
    assert checked is not None and checked.status == target.prediction_check.status
    assert (checked.expected_low_pct, checked.expected_high_pct) == (100.0, 4900.0)
    assert checked.ceiling_pct == pytest.approx(4900.0, rel=1e-12)
    assert (faster["prediction_status"], faster["prediction"]) == (checked.short(), checked.text())
    no_effect = steps[("target", "no_effect")]
    assert (no_effect["prediction_status"], no_effect["prediction"]) == (
        "not_declared",
        "the claim declares no expected effect",
    )
    assert steps[("screen", "faster")]["prediction"] is None
    summary = render_example(ExampleRun.model_validate(example["data"]))
    assert f"Prediction check, target faster: {checked.short()}: {checked.text()}." in summary
    assert f"prediction check {checked.short()}: {checked.text()}" in example["stderr"]
    md = gpuopt("report", str(root))
    assert md.code == 0, md.stderr
    assert f"- target {faster['record']} (vectorize-rows): {checked.text()}" in md.stdout
    [row] = [line for line in md.stdout.splitlines() if line.startswith(f"| {faster['record']} ")]
    assert f" | {checked.short()} | " in row
    data = _valid("gpuopt.report/v1", gpuopt("report", str(root), "--format", "json", "--json").json())
    by_id = {p["invocation_id"]: p for p in data["report"]["predictions"]}
    assert set(by_id) == {faster["record"], no_effect["record"]}
    assert (by_id[faster["record"]]["status"], by_id[faster["record"]]["text"]) == (
        checked.status,
        checked.text(),
    )
    one = gpuopt("report", str(root), faster["record"])
    assert f"- prediction check: **{checked.short()}** — {checked.text()}" in one.stdout


def test_the_html_reports_carry_the_prediction_check(example: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    root, inv = example["root"], example["steps"][("target", "faster")]["record"]
    checked = prediction.of_result(Root.open(root), inv)
    assert checked is not None
    for args, name in (([str(root)], "root.html"), ([str(root), inv], "target.html")):
        assert gpuopt("report", *args, "--html", str(tmp_path / name)).code == 0
        assert html.escape(checked.text()) in (tmp_path / name).read_text(encoding="utf-8"), name


def test_an_identical_repeated_select_answers_created_false(example: dict[str, Any]) -> None:
    root: Path = example["root"]
    requests = example["dir"] / "requests"
    (request,) = requests.glob("*-champion-select-*.json")
    pointer = (root / "champion" / "current.json").read_bytes()
    ledger = (root / "ledger" / "records.jsonl").read_bytes()
    run = gpuopt("champion", "select", "--request", str(request), "--json", cwd=example["dir"])
    assert run.code == 0, run.stdout
    data = run.json()["data"]
    assert data["created"] is False
    assert data["selection"]["id"] == json.loads(pointer)["selection"]["id"]
    assert data["pointer_sha256"] == hashlib.sha256(pointer).hexdigest()
    assert (root / "champion" / "current.json").read_bytes() == pointer  # nothing written
    assert (root / "ledger" / "records.jsonl").read_bytes() == ledger


def test_show_answers_a_target_only_under_its_own_id(example: dict[str, Any]) -> None:
    root: Path = example["root"]
    target_id = json.loads((root / "target.json").read_text())["id"]
    shown = _valid("gpuopt.show/v1", gpuopt("show", str(root), target_id, "--json").json())
    assert (shown["id"], shown["record"]["id"], shown["verified"]) == (target_id, target_id, True)
    other = "tgt-" + ("0" if target_id[4] != "0" else "1") * 64
    run = gpuopt("show", str(root), other, "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "record_not_found"
    run = gpuopt("show", str(root), "tgt-anything", "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "path_unsafe"


def test_records_validate_against_their_document_schemas(example: dict[str, Any]) -> None:
    from gpuopt.schemas import document_schema

    root: Path = example["root"]
    names = {"final_audit": "final-audit"}
    checked = 0
    for inv in sorted((root / "invocations").iterdir()):
        for kind in ("request", "result"):
            doc = json.loads((inv / f"{kind}.json").read_text())
            op = names.get(doc["operation"], doc["operation"])
            jsonschema.validate(doc, document_schema(f"gpuopt.invocation-{kind}.{op}/v1"))
            checked += 1
    for path in (root / "experiments").iterdir():
        jsonschema.validate(json.loads(path.read_text()), document_schema("gpuopt.experiment/v1"))
    for path in (root / "champion" / "selections").iterdir():
        jsonschema.validate(json.loads(path.read_text()), document_schema("gpuopt.selection/v1"))
    pointer = json.loads((root / "champion" / "current.json").read_text())
    jsonschema.validate(pointer, document_schema("gpuopt.champion-pointer/v1"))
    assert checked == 2 * 8
    # The ledger lists every record, and store verify finds them all intact.
    verify = _valid("gpuopt.store-verify/v2", gpuopt("store", "verify", str(root), "--deep", "--json").json())
    assert verify["ok"] is True, verify["defects"]


def test_handoff_is_a_draft_citing_a_record_for_every_fact(example: dict[str, Any]) -> None:
    text = Path(example["data"]["handoff"]).read_text()
    assert text.startswith("# Handoff notes — DRAFT — generated from records by gpuopt")
    facts = [line for line in text.splitlines() if line.startswith("- ")]
    cited = re.compile(
        r"\[((?:tgt|exp)-[0-9a-f]{64}|inv-[0-9a-f]{32}|sel-[0-9a-f]{32}), sha256 [0-9a-f]{64}\]$"
    )
    assert facts and all(cited.search(line) for line in facts), [f for f in facts if not cited.search(f)]
    ledger = (example["root"] / "ledger" / "records.jsonl").read_text()
    assert all(cited.search(line).group(1) in ledger for line in facts)  # type: ignore[union-attr]
    for section in ("Conclusion", "Stop reason", "Open risks", "Next directions"):
        assert f"## {section}\n\nTO COMPLETE" in text


def test_gpu_example_fails_closed_without_torch_or_cuda(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed here: the GPU example is exercised on a GPU machine")
    run = gpuopt("example", "run", str(tmp_path / "gpu"), "--gpu", "--json")
    assert run.code == 3
    assert run.json()["errors"][0]["code"] == "example_gpu_unavailable"
    assert not (tmp_path / "gpu").exists()


@pytest.mark.skipif(browser.find() is None, reason="no chromium on PATH (CI installs the Debian package)")
def test_html_report_of_the_root_renders_its_effects(example: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    page = tmp_path / "root.html"
    run = gpuopt("report", str(example["root"]), "--html", str(page), "--json")
    assert run.code == 0, run.stderr
    assert _valid("gpuopt.report/v1", run.json())["out"] == str(page)
    seen = browser.render(page, screenshot=tmp_path / "root.png")
    assert seen.console == [] and seen.status == "ok", (seen.console, seen.status)
    assert set(seen.plots) == {"effects", "noise", "cases"} and seen.empty_sections == []
    assert all(layers > 0 and traces > 0 for layers, traces in seen.plots.values()), seen.plots
    # The drawn SVG: the A/A row of the noise record among the effects, the minimum-effect band's label.
    assert "noise (A/A) · time_ms" in seen.dom and "± minimum effect 25 %" in seen.dom
    inv = example["steps"][("target", "faster")]["record"]
    one = tmp_path / "target.html"
    assert gpuopt("report", str(example["root"]), inv, "--html", str(one)).code == 0
    seen = browser.render(one)
    assert seen.status == "ok" and set(seen.plots) == {"effects", "cases"}, (seen.status, seen.plots)


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{root}", "--out", "/proc/gpuopt-report.md"],
        ["report", "{root}", "--format", "json", "--out", "/proc/gpuopt-report.json"],
        ["handoff", "{root}", "--out", "/proc/gpuopt-handoff.md"],
        ["ls", "{root}", "--out", "/proc/gpuopt-ls.json"],
    ],
)
def test_view_outputs_the_os_refuses_are_bad_input(example: dict[str, Any], args: list[str]) -> None:
    run = gpuopt(*[a.format(root=example["root"]) for a in args], "--json")
    assert run.code == 2, (run.stdout, run.stderr)
    assert run.json()["errors"][0]["code"] == "output_unwritable"


def test_the_drivers_captured_output_is_private(example: dict[str, Any]) -> None:
    # Issue 28: a driver's stdout/stderr (and what its supervisor printed) may quote its environment.
    logs = sorted(example["root"].glob("invocations/*/calls/*/std*.log"))
    logs += sorted(example["root"].glob("invocations/*/supervisor.log"))
    assert len(logs) > 10
    assert {p.stat().st_mode & 0o777 for p in logs} == {0o600}


def test_show_says_why_a_candidate_was_rejected_and_why_its_pair_is_invalid(example: dict[str, Any]) -> None:
    """One `show` answers "why was this candidate rejected" (issue 30): the reason with the rule and its
    numbers, each case's outcome and each invalid pair's reasons, in the JSON and for people."""
    root, steps = example["root"], example["steps"]
    inv = steps[("screen", "wrong")]["record"]
    screen = _result(root, inv, ScreenResult)
    failed = next(c for c in screen.correctness if not c.passed)
    rule = failed.rules[0]
    shown = _valid("gpuopt.show/v1", gpuopt("show", str(root), inv, "--json").json())
    (outcome,) = shown["outcomes"]
    assert (outcome["invocation_id"], outcome["verdict"], outcome["stop_reason"]) == (
        inv,
        "rejected",
        "correctness_failed",
    )
    check = (
        f"case {failed.case_id}, candidate (call {failed.call_index}): {rule.metric} was {rule.observed}, "
        f"the rule requires at most {rule.value}"
    )
    assert outcome["why"][0] == f"rejected because correctness failed in 1 check(s): {check}"
    assert "the first failure stopped the plan: 3 calls were skipped" in outcome["why"]
    assert "1 of 1 pairs are invalid: candidate_correctness_failed (1)" in outcome["why"]
    case = outcome["cases"][0]
    assert (case["case_id"], case["correctness"], case["pairs_valid"], case["pairs_invalid"]) == (
        failed.case_id,
        "failed",
        0,
        1,
    )
    assert outcome["invalid_pairs"] == [
        {
            "pair_index": screen.pairs[0].pair_index,
            "case_id": screen.pairs[0].case_id,
            "reasons": [
                "candidate_correctness_failed: the candidate's output failed a correctness rule in this pair"
            ],
        }
    ]
    text = gpuopt("show", str(root), inv).stdout
    assert f"why: rejected because correctness failed in 1 check(s): {check}" in text
    assert (
        f"invalid pair {screen.pairs[0].pair_index} ({screen.pairs[0].case_id}): candidate_correctness_failed"
        in text
    )
    # The Experiment's own record shows every result of it with its reasons.
    exp = steps[("experiment", "wrong")]["record"]
    shown = _valid("gpuopt.show/v1", gpuopt("show", str(root), exp, "--json").json())
    assert [(o["invocation_id"], o["verdict"]) for o in shown["outcomes"]] == [(inv, "rejected")]


def test_a_passed_target_and_an_evaluation_command_carry_their_outcome(example: dict[str, Any]) -> None:
    root, steps = example["root"], example["steps"]
    inv = steps[("target", "faster")]["record"]
    target = _result(root, inv, TargetResult)
    (outcome,) = _valid("gpuopt.show/v1", gpuopt("show", str(root), inv, "--json").json())["outcomes"]
    assert (outcome["verdict"], outcome["stop_reason"], outcome["invalid_pairs"]) == (
        "passed",
        "completed",
        [],
    )
    per_case = {c.case_id: c for c in target.statistics.per_case}
    assert [
        (c["case_id"], c["correctness"], c["pairs_valid"], c["estimate_pct"]) for c in outcome["cases"]
    ] == [(c, "passed", per_case[c].n_valid, per_case[c].estimate_pct) for c in ("rows512", "rows1024")]
    assert outcome["why"][0].startswith(f"primary {target.statistics.primary.metric}: improved ")
    # An evaluation command (here a deduplicated baseline) carries the same outcome beside its result.
    run = gpuopt("baseline", "--request", "requests/02-baseline.json", "--json", cwd=example["dir"])
    data = _valid("gpuopt.baseline/v1", run.json())
    assert (data["outcome"]["verdict"], data["outcome"]["invocation_id"]) == (
        "passed",
        data["submission"]["invocation_id"],
    )
    assert all(c["correctness"] == "passed" for c in data["outcome"]["cases"])
