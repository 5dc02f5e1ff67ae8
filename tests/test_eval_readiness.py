"""``gpuopt readiness check``: Target freeze, smoke gates, identity cross-check, kept failed attempts (the
driver's environment and its secrets: ``test_eval_readiness_env.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import gpuopt
from eval_support import procs, workload
from gpuopt.errors import GpuoptError, InputError
from gpuopt.evaluation import jsonio, readiness
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.target import DiagnosticTarget, Target

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first


def _check(req: dict[str, Any]) -> Any:
    return readiness.check(json.dumps(req).encode())


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    return workload.layout(tmp_path / "w")


def _attempt(root: Path) -> Path:
    attempts = sorted((root.parent / ".gpuopt-readiness").iterdir())
    assert len(attempts) == 1
    return attempts[0]


def test_valid_request_creates_the_root_with_a_verified_target(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    result = _check(workload.request(layout, root))
    assert result.status == "ready"
    target, ref = targets.load(Store(root))
    assert isinstance(target, Target)
    assert ref == result.target
    assert target.id == "tgt-" + jsonio.digest(
        targets.identity_core(json.loads((root / "target.json").read_bytes()))
    )
    assert target.gpus == []
    assert target.contamination.sampler == "disabled"
    assert target.driver.env_inherit == ["PATH", "HOME", "LANG"]
    assert target.readiness.smoke_request.sampling.samples_per_call == {"step_time_ms": 2}
    assert target.readiness.smoke_receipt.cleanup.status == "confirmed"
    assert [c.passed for c in target.readiness.correctness] == [True]
    assert target.runtime_identity.reported.gpu_uuids == []
    assert (root / "target.json").stat().st_mode & 0o777 == 0o444
    assert [line.kind for line in Store(root).ledger()] == ["target"]
    assert (
        not (tmp_path / "w" / ".gpuopt-readiness").exists()
        and not (root.parent / ".gpuopt-readiness").exists()
    )
    # The bundle of the smoke call is a frozen object of the new root.
    assert Store(root).manifest(target.readiness.bundle_digest or "").entries[0].path == "result.json"
    again = gpuopt("readiness", "check", "--request", "-", "--json")
    assert again.code == 2  # no request on stdin: json_invalid


def _fails(req: dict[str, Any], code: str = "smoke_failed") -> tuple[InputError, Path, dict[str, Any]]:
    root = Path(req["root"])
    with pytest.raises(InputError) as err:
        _check(req)
    assert err.value.code == code
    assert not root.exists()
    attempt = _attempt(root)
    error = json.loads((attempt / "error.json").read_bytes())
    assert error["code"] == code
    assert not (attempt / "root" / "objects").exists()
    return err.value, attempt, error


FAILURES: dict[str, tuple[dict[str, Any], str, str | None, str | None, str | None]] = {
    "wrong_count": (
        {"mode": "wrong_count"},
        "sample_count_mismatch",
        "subjects[0].measurements.step_time_ms.samples",
        "2",
        "1",
    ),
    "undeclared_metric": (
        {"mode": "undeclared_metric"},
        "metric_set_mismatch",
        "subjects[0].measurements",
        '["step_time_ms"]',
        '["extra_metric","step_time_ms"]',
    ),
    "wrong_unit": (
        {"mode": "wrong_unit"},
        "unit_mismatch",
        "subjects[0].measurements.step_time_ms.unit",
        "ms",
        "s",
    ),
    "fail_correctness": (
        {"mode": "fail_correctness"},
        "correctness_failed",
        "correctness.rules.max_abs_error",
        "le 0.001",
        "1.0",
    ),
    "report_failed": (
        {"mode": "report_failed"},
        "correctness_failed",
        "correctness.driver_status",
        "passed",
        "failed",
    ),
    "undeclared_member": (
        {"mode": "undeclared_member"},
        "bundle_undeclared_member",
        "extra.bin",
        "result.json and declared artifacts",
        "extra.bin",
    ),
    "no_result": (
        {"mode": "no_result"},
        "result_missing",
        "result.json",
        "output/result.json written by the driver",
        "absent",
    ),
    "exit_code": ({"mode": "exit_code"}, "command_failed", None, None, None),
    "bad_json": ({"mode": "bad_json"}, "json_invalid", "call_index", None, None),
    "identity_lie": (
        {"mode": "ok"},
        "identity_mismatch",
        "runtime_identity.reported.gpu_uuids",
        "[]",
        '["GPU-lie"]',
    ),
}


@pytest.fixture(scope="module")
def failures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[InputError, Path, dict[str, Any]]]:
    """Every failing-smoke scenario, run concurrently (each readiness check mostly waits on its driver)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(name: str) -> tuple[InputError, Path, dict[str, Any]]:
        base = tmp_path_factory.mktemp(name)
        layout = workload.layout(base / "w", behavior=FAILURES[name][0])
        if name == "identity_lie":  # the driver reports a GPU although gpuopt hid every GPU from it
            text = (
                layout["driver"]
                .read_text()
                .replace('os.environ.get("CUDA_VISIBLE_DEVICES", "")', '"GPU-lie"')
            )
            layout["driver"].write_text(text)
        code = "identity_mismatch" if name == "identity_lie" else "smoke_failed"
        return _fails(workload.request(layout, base / "root"), code)

    with ThreadPoolExecutor(max_workers=len(FAILURES)) as pool:
        return dict(zip(FAILURES, pool.map(one, FAILURES), strict=True))


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_failing_smoke_publishes_nothing_and_keeps_the_attempt(
    failures: dict[str, tuple[InputError, Path, dict[str, Any]]], name: str
) -> None:
    _, stop, path, expected, observed = FAILURES[name]
    err, attempt, error = failures[name]
    assert error["stop_reason"] == stop
    assert stop in err.message or err.code == stop
    assert (err.path, err.expected, err.observed) == (path, expected, observed)
    call = attempt / "smoke" / "calls" / "0000"
    assert json.loads((call / "request.json").read_bytes())["protocol"] == "gpuopt.driver-request/v1"
    assert (call / "stdout.log").exists() and (call / "stderr.log").exists()
    assert (attempt / "request.json").exists() and (attempt / "observed.json").exists()


def test_driver_saying_passed_cannot_override_a_failed_rule(
    failures: dict[str, tuple[InputError, Path, dict[str, Any]]],
) -> None:
    attempt = failures["fail_correctness"][1]
    result = json.loads((attempt / "smoke" / "result.json").read_bytes())
    (receipt,) = result["correctness"]
    assert (receipt["passed"], receipt["driver_status"], receipt["status_consistent"]) == (
        False,
        "passed",
        False,
    )
    assert (result["execution_status"], result["measurement_validity"], result["verdict"]) == (
        "succeeded",
        "invalid",
        "failed",
    )


def test_driver_reporting_failed_fails_even_when_rules_hold(
    failures: dict[str, tuple[InputError, Path, dict[str, Any]]],
) -> None:
    attempt = failures["report_failed"][1]
    (receipt,) = json.loads((attempt / "smoke" / "result.json").read_bytes())["correctness"]
    assert (receipt["passed"], receipt["rules"][0]["passed"], receipt["status_consistent"]) == (
        False,
        True,
        False,
    )


def test_a_missing_gpu_is_exit_3(layout: dict[str, Path], tmp_path: Path) -> None:
    req = workload.request(layout, tmp_path / "root", gpus=["GPU-00000000-0000-0000-0000-000000000000"])
    req["contamination"] = {"sampler": "disabled", "rules": []}
    (tmp_path / "req.json").write_text(json.dumps(req))
    run = gpuopt("readiness", "check", "--request", str(tmp_path / "req.json"), "--json")
    assert run.code == 3
    assert run.json()["errors"][0]["code"] == "gpu_not_found"
    assert not (tmp_path / "root").exists()


def test_a_kept_attempt_and_the_drivers_output_are_private(layout: dict[str, Path], tmp_path: Path) -> None:
    workload.set_behavior(layout["behavior"], {"mode": "fail_correctness"})
    _, attempt, _ = _fails(workload.request(layout, tmp_path / "root"))
    assert attempt.stat().st_mode & 0o777 == 0o700
    for name in ("request.json", "observed.json", "error.json", "smoke/spec.json", "smoke/supervisor.log"):
        assert (attempt / name).stat().st_mode & 0o777 == 0o600, name
    logs = sorted(attempt.glob("smoke/calls/*/std*.log"))
    assert [p.name for p in logs] == ["stderr.log", "stdout.log"]
    assert {p.stat().st_mode & 0o777 for p in logs} == {0o600}


@pytest.mark.parametrize(
    ("patch", "code", "path"),
    [
        ({"claim_layer": "diagnostic"}, "claim_layer_invalid", "claim_layer"),
        (
            {
                "metrics": {
                    "step_time_ms": {"unit": "ms", "direction": "lower", "kind": "duration"},
                    "unused_ms": {"unit": "ms", "direction": "lower", "kind": "duration"},
                }
            },
            "metric_declaration_invalid",
            "metrics.unused_ms",
        ),
        (
            {
                "metrics": {
                    "step_time_ms": {
                        "unit": "ms",
                        "direction": "lower",
                        "kind": "duration",
                        "within_call": "p99",
                    }
                }
            },
            "metric_declaration_invalid",
            "metrics.step_time_ms.kind",
        ),
        ({"statistics": {"seed": 1, "effect_scale": "arithmetic_pct"}}, "statistics_invalid", "statistics"),
        (
            {"accuracy": {"rules": [{"metric": "err", "op": "le", "value": 1, "cases": ["zz"]}]}},
            "accuracy_rule_invalid",
            "accuracy.rules[0].cases",
        ),
        (
            {"contamination": {"sampler": "disabled", "rules": "default"}},
            "contamination_rule_invalid",
            "contamination.rules",
        ),
        ({"smoke": {"case_id": "zz"}}, "case_unknown", "smoke.case_id"),
        ({"statistics": {"seed": 1, "resamples": 10}}, "field_invalid", "statistics.resamples"),
        ({"request_digest": "0" * 64}, "field_unknown", "request_digest"),
        ({"gpus": "none"}, "field_invalid", "gpus"),
    ],
)
def test_invalid_requests_are_refused_with_code_and_path(
    layout: dict[str, Path], tmp_path: Path, patch: dict[str, Any], code: str, path: str
) -> None:
    req = {**workload.request(layout, tmp_path / "root"), **patch}
    with pytest.raises(GpuoptError) as err:
        _check(req)
    assert (err.value.code, err.value.path) == (code, path)
    assert not (tmp_path / "root").exists()
    assert not (tmp_path / ".gpuopt-readiness").exists()


def test_a_missing_required_tool_is_exit_3_and_the_attempt_is_kept(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    req = workload.request(layout, tmp_path / "root", required_tools=["gpuopt-no-such-tool"])
    (tmp_path / "req.json").write_text(json.dumps(req))
    run = gpuopt("readiness", "check", "--request", str(tmp_path / "req.json"), "--json")
    assert run.code == 3
    assert run.json()["errors"][0]["code"] == "tool_absent"
    assert not (tmp_path / "root").exists()
    assert json.loads((_attempt(tmp_path / "root") / "error.json").read_bytes())["code"] == "tool_absent"


def test_an_existing_root_is_refused(layout: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    with pytest.raises(InputError) as err:
        _check(workload.request(layout, tmp_path / "root"))
    assert err.value.code == "root_exists"


def test_diagnostic_target_has_explicit_unavailable_markers(layout: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "profile.nsys-rep"
    report.write_bytes(b"not really a report")
    req = {
        "root": str(tmp_path / "diag"),
        "mode": "diagnostic",
        "claim_layer": "diagnostic",
        "original": {"kind": "source", "path": str(layout["src"])},
        "materials": [
            {
                "kind": "report",
                "path": str(report),
                "tool": "nsys",
                "tool_version": "2025.3",
                "format": "nsys-rep",
            }
        ],
    }
    result = _check(req)
    assert result.smoke is None and "driver" in result.unavailable
    raw = json.loads((tmp_path / "diag" / "target.json").read_bytes())
    for key in (
        "test_set",
        "accuracy",
        "metrics",
        "objective",
        "driver",
        "gpus",
        "statistics",
        "contamination",
    ):
        assert raw[key] == {"unavailable": "diagnostic_target"}
    assert raw["runtime_identity"]["reported"] == {"unavailable": "diagnostic_target"}
    assert raw["readiness"]["smoke"] == {"unavailable": "diagnostic_target"}
    target, _ = targets.load(Store(tmp_path / "diag"))
    assert isinstance(target, DiagnosticTarget)
    run = gpuopt("readiness", "smoke", str(tmp_path / "diag"), "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "target_not_optimizable"
    bad = gpuopt("readiness", "check", "--request", "-", "--json")
    assert bad.code == 2


def test_lineage_verifies_the_parent_ref(layout: dict[str, Path], tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    first = _check(workload.request(layout, parent))
    child_req = workload.request(
        layout,
        tmp_path / "child",
        lineage={"parent_root": str(parent), "parent": first.target.model_dump(), "reason": "p99 promoted"},
    )
    child = _check(child_req)
    target = Target.model_validate_json((tmp_path / "child" / "target.json").read_bytes())
    assert target.lineage.parent == first.target and target.lineage.reason == "p99 promoted"
    assert child.target.id != first.target.id
    wrong = {**first.target.model_dump(), "sha256": "0" * 64}
    with pytest.raises(InputError) as err:
        _check(
            workload.request(
                layout,
                tmp_path / "child2",
                lineage={"parent_root": str(parent), "parent": wrong, "reason": "x"},
            )
        )
    assert err.value.code == "target_changed"


def test_cli_check_prints_a_target_result_envelope(layout: dict[str, Path], tmp_path: Path) -> None:
    req_file = tmp_path / "req.json"
    req_file.write_text(json.dumps(workload.request(layout, tmp_path / "root")))
    run = gpuopt("readiness", "check", "--request", str(req_file), "--json", cwd=tmp_path)
    assert run.code == 0, run.stderr
    env = run.json()
    assert env["schema"] == "gpuopt.target-result/v1" and env["data"]["status"] == "ready"
    jsonschema.validate(env, json.loads(gpuopt("schema", "gpuopt.target-result/v1").stdout))
    target_doc = json.loads((tmp_path / "root" / "target.json").read_bytes())
    jsonschema.validate(target_doc, json.loads(gpuopt("schema", "gpuopt.target/v2").stdout))
    status = gpuopt("status", str(tmp_path / "root"), "--json")
    assert status.code == 0
    jsonschema.validate(status.json(), json.loads(gpuopt("schema", "gpuopt.status/v1").stdout))
    assert procs.running(str(layout["behavior"])) == []
    assert sys.executable


def test_driver_init_writes_a_template_that_passes_readiness(layout: dict[str, Path], tmp_path: Path) -> None:
    bench = tmp_path / "template"
    run = gpuopt("driver", "init", str(bench), "--json")
    assert run.code == 0, run.stderr
    assert run.json()["data"]["files"] == [
        "driver.py",
        "schemas/driver-request.schema.json",
        "schemas/driver-result.schema.json",
    ]
    assert (
        json.loads((bench / "schemas" / "driver-result.schema.json").read_text())["title"] == "DriverResult"
    )
    again = gpuopt("driver", "init", str(bench), "--json")
    assert (again.code, again.json()["errors"][0]["code"]) == (2, "destination_exists")
    req = workload.request(layout, tmp_path / "root")
    req["driver"] = {"argv": [sys.executable, str(bench / "driver.py")], "env_inherit": ["PATH"]}
    result = _check(req)
    assert [c.passed for c in result.smoke.correctness] == [True]


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_dry_run_validates_hashes_the_inputs_and_writes_nothing(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    req_file = tmp_path / "req.json"
    req_file.write_text(json.dumps(workload.request(layout, root)))
    before = _tree(tmp_path)
    run = gpuopt("readiness", "check", "--request", str(req_file), "--dry-run", "--json")
    assert run.code == 0, run.stderr
    env = json.loads(run.stdout)
    assert env["schema"] == "gpuopt.readiness-plan/v1"
    plan = env["data"]
    assert plan["dry_run"] is True and plan["root"] == str(root) and plan["mode"] == "optimization"
    assert set(plan["objects"]) == {"original", "test_set"}
    assert _tree(tmp_path) == before  # no root, no attempt, nothing
    # The digests are those a real check freezes.
    human = gpuopt("readiness", "check", "--request", str(req_file), "--dry-run")
    assert human.code == 0 and "dry run: nothing written" in human.stdout
    result = _check(workload.request(layout, root))
    assert Store(root).manifest(plan["objects"]["original"]).file_count >= 1
    assert result.objects.get("original", plan["objects"]["original"]) == plan["objects"]["original"]
    # A bad request fails the dry run the same way.
    bad = workload.request(layout, tmp_path / "absent" / "root")
    req_file.write_text(json.dumps(bad))
    assert gpuopt("readiness", "check", "--request", str(req_file), "--dry-run").code == 2
