"""Evaluations on a tiny real workload (the fixture driver, real supervisors and driver processes): noise
copies, experiment validation, the target gates, a Champion change that makes a bound target stale, a final
audit whose Champion fails correctness with restore checks, restore-original, dedupe and retry; and the
opportunity arithmetic (pinned numbers, every error code)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from eval_support import workload
from gpuopt.errors import InputError
from gpuopt.evaluation import champion, experiment, invocation, jsonio, operations, readiness
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.experiment import OpportunityClaim

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

FAST = {"command_timeout_s": 20, "termination_grace_s": 0.3, "cleanup_timeout_s": 10}
IMPLS = {
    "original": "import time\n\n\ndef run(case):\n    time.sleep(0.004)\n    return sum(case['values'])\n",
    "fast": "def run(case):\n    return sum(case['values'])\n",
    "wrong": "def run(case):\n    return sum(case['values']) + 1\n",
    "fast_wrong_on_b": (
        "def run(case):\n    s = sum(case['values'])\n    return s if case['values'][0] == 1 else s + 1\n"
    ),
    "fast_again": "def run(case):\n    # the same, commented\n    return sum(case['values'])\n",
}


def _code(fn: Any, *args: Any, **kw: Any) -> str:
    try:
        fn(*args, **kw)
    except InputError as exc:
        return exc.code
    return "ok"


class Flow:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.layout = workload.layout(base / "w")
        (self.layout["src"] / "impl.py").write_text(IMPLS["original"])
        self.dirs = {}
        for name, code in IMPLS.items():
            folder = base / "candidates" / name
            folder.mkdir(parents=True)
            (folder / "impl.py").write_text(code)
            self.dirs[name] = folder
        notes = base / "candidates" / "champion_plus_notes"
        notes.mkdir()
        (notes / "impl.py").write_text(IMPLS["fast_wrong_on_b"])
        (notes / "notes.txt").write_text("why this variant\n")
        self.dirs["champion_plus_notes"] = notes
        self.root = base / "root"
        request = workload.request(
            self.layout, self.root, statistics={"seed": 7, "minimum_pairs": 2, "resamples": 1000}
        )
        readiness.check(json.dumps(request).encode())
        self.errors: dict[str, str] = {}

    def run(self, operation: str, request: dict[str, Any], **kw: Any) -> Any:
        return operations.run(operation, {"root": str(self.root), "limits": FAST, **request}, wait=True, **kw)

    def experiment_request(self, name: str, **over: Any) -> dict[str, Any]:
        req = {
            "root": str(self.root),
            "baseline": self.baseline_ref,
            "source_base": "original",
            "candidate": {"kind": "source", "path": str(self.dirs[name])},
            "change_scope": ["impl.py"],
            "claim_layer": "workload",
            "hypothesis": f"{name} is faster",
            "mechanism": name.replace("_", "-"),
            "rejection_scope": "implementation",
            "contract": {"lifecycle": "isolated"},
            "screen": {
                "kind": "proxy",
                "minimum_pairs": 2,
                "reject_if": ["primary_regressed"],
                "claim": "local",
            },
            "opportunity_claim": {
                "quantified": False,
                "reason": "a test",
                "boundary": {"region": "run", "entry": "run", "exit": "return", "phase": "all", "shapes": []},
                "execution_form": {
                    "form": "-",
                    "lowering": "-",
                    "dispatch": "-",
                    "fallback": "-",
                    "overlap": "-",
                },
            },
        }
        req.update(over)
        return req

    def create(self, name: str, **over: Any) -> Any:
        return experiment.create(json.dumps(self.experiment_request(name, **over)).encode())

    def pairs(self, exp: Any, pairs: int = 2, **plan: Any) -> dict[str, Any]:
        return {
            "experiment": exp.experiment.model_dump(),
            "plan": {"case_ids": ["a"], "pairs": pairs, "samples_per_call": 3, "warmup_per_call": 0, **plan},
        }


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> Flow:
    f = Flow(tmp_path_factory.mktemp("ops"))
    e = f.errors
    e["champion_required"] = _code(f.run, "final_audit", {"plan": {"pairs": 2}}, dry_run=True)
    plan_a = {"case_ids": ["a"], "samples_per_call": 3, "warmup_per_call": 0}
    f.baseline = f.run("baseline", {"plan": plan_a})
    f.baseline_ref = f.baseline.result_ref.model_dump()
    f.noise = f.run("noise", {"plan": {**plan_a, "pairs": 2}})
    f.exp = {name: f.create(name) for name in ("fast", "wrong", "fast_wrong_on_b", "fast_again")}
    f.exp_repeat = f.create("fast")
    f.screens = {name: f.run("screen", f.pairs(f.exp[name])) for name in ("fast", "wrong", "fast_wrong_on_b")}
    e["screen_rejected"] = _code(f.run, "target", f.pairs(f.exp["wrong"]), dry_run=True)
    e["screen_required"] = _code(f.run, "target", f.pairs(f.exp["fast_again"]), dry_run=True)
    f.short_screens = [f.run("screen", f.pairs(f.exp["fast_again"], pairs=1, seed=seed)) for seed in (1, 2)]
    e["screen_attempt_changed"] = _code(f.run, "target", f.pairs(f.exp["fast_again"]), dry_run=True)
    e["pairs_below_minimum"] = _code(f.run, "target", f.pairs(f.exp["fast"], pairs=1), dry_run=True)
    # A target bound to the original, submitted but not started yet ...
    late = {**FAST, "launch_deadline_epoch": time.time() + 900}
    f.stale_target = operations.run(
        "target", {"root": str(f.root), "limits": late, **f.pairs(f.exp["fast"])}, start=False
    )
    f.formal = f.run("target", f.pairs(f.exp["fast_wrong_on_b"]))
    e["target_attempt_exists"] = _code(
        f.run, "target", f.pairs(f.exp["fast_wrong_on_b"], seed=3), dry_run=True
    )
    # ... then the Champion moves: an explicit select of the candidate whose target passed.
    f.selected = champion.select(
        json.dumps(
            {
                "root": str(f.root),
                "result": f.formal.result_ref.model_dump(),
                "expected_selection": "original",
            }
        ).encode()
    )
    # An Experiment from the Champion's tree diffs against the Champion, not the original.
    f.on_champion = f.create("champion_plus_notes", source_base="champion", change_scope=["notes.txt"])
    inv = f.stale_target.submission.invocation_id
    invocation.start_supervisor(f.root, inv)
    invocation.wait(f.root, inv, timeout_s=120)
    f.stale_result = invocation.read_result(Store(f.root), inv)
    # The final audit covers both cases: the Champion is wrong on b.
    f.audit = f.run(
        "final_audit",
        {"plan": {"case_ids": ["a", "b"], "pairs": 1, "samples_per_call": 3, "warmup_per_call": 0}},
    )
    f.restored = champion.restore_original(
        json.dumps(
            {
                "root": str(f.root),
                "result": f.audit.result_ref.model_dump(),
                "expected_selection": f.selected.selection.model_dump(),
            }
        ).encode()
    )
    return f


def test_noise_runs_two_copies_of_the_original_and_reports_mde(flow: Flow) -> None:
    result = flow.noise.result
    assert (result.verdict, result.stop_reason) == ("passed", "completed")
    facts = result.noise.metrics["step_time_ms"]
    assert facts.n_pairs == 2 and [a.n_pairs for a in facts.at] == [2, 4]
    assert facts.sd_log >= 0 and all(a.mde_pct >= a.half_width_pct for a in facts.at)
    inv_dir = flow.root / "invocations" / result.invocation_id
    subjects = [
        json.loads((d / "request.json").read_text())["subjects"][0]
        for d in sorted((inv_dir / "calls").iterdir())
    ]
    assert [s["role"] for s in subjects] == [r for s in result.call_receipts for r in s.step.roles]
    assert len({s["digest"] for s in subjects}) == 1 and len({s["path"] for s in subjects}) == 2


def test_resolution_is_the_noise_records_mde_at_the_same_pairs(flow: Flow) -> None:
    # Both figures come from the engine's normal approximation (stats/noise.rs): bit for bit equal.
    facts = flow.noise.result.noise.metrics["step_time_ms"]
    res = flow.screens["fast"].result.resolution
    at = {a.n_pairs: a.mde_pct for a in facts.at}
    assert res.planned_pairs in at and res.mde_pct == at[res.planned_pairs]


def test_experiments_validate_and_are_idempotent(flow: Flow) -> None:
    fast = flow.exp["fast"]
    assert fast.created is True and fast.changed_paths == ["impl.py"]
    assert (flow.exp_repeat.created, flow.exp_repeat.experiment) == (False, fast.experiment)
    assert fast.reference.selection is None and fast.reference.pointer_sha256 is None
    assert _code(flow.create, "original") == "candidate_unchanged"
    assert _code(flow.create, "fast", change_scope=["other.py"]) == "change_scope_exceeded"
    assert _code(flow.create, "fast", claim_layer="serving") == "claim_layer_exceeds_target"
    same_process = {"lifecycle": "same_process", "shared_state": ["interpreter"]}
    assert _code(flow.create, "fast", contract=same_process) == "capability_missing"
    assert (
        _code(flow.create, "fast", contract={"lifecycle": "isolated", "shared_state": ["x"]})
        == "contract_invalid"
    )
    cited = [{"statement": "s", "component": "c", "version": "1", "status": "cited", "decision_effect": "d"}]
    assert _code(flow.create, "fast", premises=cited) == "premise_source_invalid"
    bad_baseline = {"invocation_id": flow.noise.result.invocation_id, "sha256": "0" * 64}
    assert _code(flow.create, "fast", baseline=bad_baseline) == "baseline_invalid"


def test_screens_and_target_gates(flow: Flow) -> None:
    wrong = flow.screens["wrong"].result
    assert (wrong.verdict, wrong.stop_reason, wrong.statistics) == ("rejected", "correctness_failed", None)
    fast = flow.screens["fast"].result
    assert (fast.verdict, fast.statistics.primary.verdict) == ("not_rejected", "improved")
    assert fast.resolution.noise_ref.invocation_id == flow.noise.result.invocation_id
    # Isolated pairs: two calls per pair, back to back in the seeded order.
    assert fast.calls.planned == 4 and [len(r.step.roles) for r in fast.call_receipts] == [1, 1, 1, 1]
    assert flow.errors == {
        "champion_required": "champion_required",
        "screen_rejected": "screen_rejected",
        "screen_required": "screen_required",
        "screen_attempt_changed": "screen_attempt_changed",
        "pairs_below_minimum": "pairs_below_minimum",
        "target_attempt_exists": "target_attempt_exists",
    }
    # Below the screen's minimum pairs the statistics never reject: not_rejected, primary inconclusive.
    for short in flow.short_screens:
        r = short.result
        assert (r.verdict, r.statistics.primary.verdict, r.statistics.primary.n_valid) == (
            "not_rejected",
            "inconclusive",
            1,
        )
        assert r.statistics.primary.verdict_reason == "too_few_pairs"
    formal = flow.formal.result
    assert (formal.verdict, formal.statistics.primary.verdict, formal.formal_attempts) == (
        "passed",
        "improved",
        1,
    )


def test_experiment_from_the_champion_diffs_against_it(flow: Flow) -> None:
    out = flow.on_champion
    assert out.changed_paths == ["notes.txt"]
    assert out.reference.selection == flow.selected.selection
    assert out.reference.variant.digest == flow.selected.variant.digest


def test_champion_move_makes_a_bound_target_stale_and_unselectable(flow: Flow) -> None:
    assert flow.stale_result is not None
    stale, sha = flow.stale_result
    assert (stale.execution_status, stale.measurement_validity, stale.verdict, stale.stop_reason) == (
        "invalid",
        "invalid",
        "not_evaluated",
        "stale_reference",
    )
    assert stale.reference_binding.status == "stale" and stale.calls.completed == 0
    request = {
        "root": str(flow.root),
        "result": {"invocation_id": stale.invocation_id, "sha256": sha},
        "expected_selection": "original",
    }
    assert _code(champion.select, json.dumps(request).encode()) == "stale_reference"
    request["expected_selection"] = flow.restored.selection.model_dump()
    assert _code(champion.select, json.dumps(request).encode()) == "result_not_eligible"


def test_final_audit_runs_restore_checks_and_restore_original_is_accepted(flow: Flow) -> None:
    audit = flow.audit.result
    assert (audit.execution_status, audit.measurement_validity, audit.verdict, audit.stop_reason) == (
        "succeeded",
        "invalid",
        "rejected",
        "correctness_failed",
    )
    failed = [c for c in audit.correctness if not c.passed]
    assert [(c.role, c.case_id) for c in failed] == [("candidate", "b")]
    assert audit.restore_checks.planned == ["a", "b"]
    assert audit.restore_checks.original_passed == {"a": True, "b": True}
    assert audit.restore_supported is True and audit.statistics is None
    assert flow.restored.decision == "restore_original" and flow.restored.previous == flow.selected.selection
    state = champion.show(flow.root)
    target, _ = targets.load(Store(flow.root))
    assert (state.decision, state.variant.digest) == ("restore_original", target.original.digest)
    history = champion.history(flow.root, include_orphans=True)
    assert [e.decision for e in history.entries] == ["restore_original", "select_candidate"]
    # A final audit needs a non-original Champion again.
    code = _code(flow.run, "final_audit", {"plan": {"pairs": 2}}, dry_run=True)
    assert code == "champion_required"


def test_failed_attempt_needs_retry_of_and_the_retry_dedupes(flow: Flow) -> None:
    plan = {"case_ids": ["b"], "samples_per_call": 2, "warmup_per_call": 0}
    tiny = {"command_timeout_s": 0.001, "termination_grace_s": 0.2, "cleanup_timeout_s": 10}
    first = operations.run("baseline", {"root": str(flow.root), "plan": plan, "limits": tiny}, wait=True)
    assert (first.result.execution_status, first.result.stop_reason) == ("timed_out", "command_timeout")
    assert _code(flow.run, "baseline", {"plan": plan}) == "retry_required"
    inv = first.submission.invocation_id
    retry = flow.run("baseline", {"plan": plan, "retry_of": inv})
    assert retry.submission.invocation_id == f"{inv}-r1" and retry.result.verdict == "passed"
    again = flow.run("baseline", {"plan": plan, "retry_of": inv})
    assert (again.submission.invocation_id, again.submission.deduplicated) == (f"{inv}-r1", True)
    assert flow.run("baseline", {"plan": plan}).submission.invocation_id == f"{inv}-r1"


# ---- opportunity arithmetic (no process) ------------------------------------------------------------------


def _claim(**over: Any) -> OpportunityClaim:
    claim: dict[str, Any] = {
        "quantified": True,
        "boundary": {"region": "r", "entry": "e", "exit": "x", "phase": "p", "shapes": []},
        "execution_form": {"form": "f", "lowering": "l", "dispatch": "d", "fallback": "n", "overlap": "n"},
        "inputs": [
            {
                "name": "f",
                "value": 0.0799,
                "unit": "fraction",
                "class": "same_boundary",
                "source": {"kind": "external", "text": "t"},
            },
            {
                "name": "k",
                "value": 1.419,
                "unit": "x",
                "class": "conservative_bound",
                "source": {"kind": "external", "text": "t"},
            },
        ],
        "coverage": {"input": "f"},
        "local_saving": {"input": "k", "form": "speedup"},
    }
    claim.update(over)
    return jsonio.validate(OpportunityClaim, claim, what="claim")


def test_opportunity_pinned_numbers_and_errors(flow: Flow) -> None:
    store = Store(flow.root)
    target, _ = targets.load(store)
    target = target.model_copy(
        update={"objective": target.objective.model_copy(update={"minimum_effect_pct": 0.5})}
    )
    out = experiment.opportunity(_claim(), target, store)
    assert out.r == pytest.approx(0.295278, abs=1e-6)
    assert out.ceiling_pct == pytest.approx(2.4163, abs=1e-4)
    assert out.required_saving == pytest.approx(0.062267, abs=1e-6)
    assert out.ceiling_vs_minimum == "above"
    declared = {"ceiling_pct": out.ceiling_pct, "required_saving": out.required_saving}
    assert experiment.opportunity(_claim(declared=declared), target, store) == out

    def code(**over: Any) -> str:
        return _code(experiment.opportunity, _claim(**over), target, store)

    inputs = _claim().model_dump(by_alias=True)["inputs"]
    diagnostic = [{**inputs[0], "class": "diagnostic"}, inputs[1]]
    assert code(inputs=diagnostic) == "opportunity_input_not_admissible"
    assert code(inputs=[{**inputs[0], "value": 1.5}, inputs[1]]) == "opportunity_arithmetic_invalid"
    assert code(inputs=[inputs[0], {**inputs[1], "unit": "fraction"}]) == "opportunity_arithmetic_invalid"
    assert code(declared={**declared, "ceiling_pct": 2.5}) == "opportunity_arithmetic_mismatch"
    assert code(expected_effect_pct={"low": 1.0, "high": 3.0}) == "opportunity_contradiction"
    assert code(expected_effect_pct={"low": 2.0, "high": 1.0}) == "opportunity_contradiction"
    mapped = {"kind": "execution_map", "ref": {"id": "map-" + "0" * 64, "sha256": "0" * 64}}
    assert code(inputs=[{**inputs[0], "source": mapped}, inputs[1]]) == "opportunity_source_mismatch"
    unresolved = {"kind": "invocation", "ref": {"invocation_id": "inv-" + "0" * 32, "sha256": "0" * 64}}
    assert code(inputs=[{**inputs[0], "source": unresolved}, inputs[1]]) == "opportunity_source_mismatch"
    tail = target.model_copy(
        update={
            "metrics": {
                k: v.model_copy(update={"kind": "quantile", "within_call": "p99"})
                for k, v in target.metrics.items()
            }
        }
    )
    assert _code(experiment.opportunity, _claim(), tail, store) == "opportunity_ceiling_not_applicable"
