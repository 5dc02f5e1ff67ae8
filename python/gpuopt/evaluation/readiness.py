"""``gpuopt readiness check``: freeze a Target and prove its driver works before anything is published.

Validate → probe the storage of the root's parent → in a private work area freeze the original, the test
set and the accuracy reference → observe the runtime (GPUs by UUID, driver, tools) → normalize and hash the
driver → a 2-sample smoke call through a probe supervisor tied to this process → the driver gates, the
correctness rule and the identity cross-check → ``target.json`` and the first ledger line → a no-replace
rename of the work root onto the root. On any failure nothing exists at the root and the attempt (request,
observed identity, smoke call folder with capped output, ``error.json``) is kept for debugging.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gpuopt import _native
from gpuopt.errors import AbsentError, GpuoptError, InputError
from gpuopt.evaluation import driver as drv
from gpuopt.evaluation import formats, identity, jsonio
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.executor import SMOKE_SAMPLES, ExecutionSpec
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import UNAVAILABLE, RecordRef, Violation
from gpuopt.models.evaluation.driver import DriverRequest, NormalizedDriver
from gpuopt.models.evaluation.invocation import EvidenceStep, FrozenVariant, InvocationResult
from gpuopt.models.evaluation.target import (
    ContaminationRule,
    ContaminationSpec,
    DiagnosticRequest,
    IdleCheck,
    ReadinessFailure,
    ReadinessRequest,
    ReadinessResult,
    SmokeSummary,
    StorageCheck,
)

WORK_DIR = ".gpuopt-readiness"
QUANTILE_WITHIN = {"p90", "p95", "p99"}

DEFAULT_RULES: list[dict[str, Any]] = [
    {
        "id": "foreign-process",
        "signal": "gpu.foreign_processes",
        "op": "gt",
        "value": 0,
        "min_fraction": 0,
        "on_missing": "ignore",
    },
    {
        "id": "hw-throttle",
        "signal": "gpu.throttle",
        "op": "any_of",
        "value": ["hw_slowdown", "hw_thermal", "hw_power_brake"],
        "min_fraction": 0,
        "on_missing": "invalidate",
    },
    {
        "id": "sw-thermal",
        "signal": "gpu.throttle",
        "op": "any_of",
        "value": ["sw_thermal"],
        "min_fraction": 0.1,
        "on_missing": "invalidate",
    },
    {"id": "xid", "signal": "gpu.xid", "op": "gt", "value": 0, "min_fraction": 0, "on_missing": "invalidate"},
    {
        "id": "clock-drop",
        "signal": "gpu.sm_clock_drop_pct",
        "op": "gt",
        "value": 10,
        "min_fraction": 0.2,
        "on_missing": "invalidate",
    },
    {
        "id": "foreign-cpu",
        "signal": "host.foreign_cpu_pct",
        "op": "gt",
        "value": 50,
        "min_fraction": 0.2,
        "on_missing": "invalidate",
    },
    {
        "id": "sampler-gap",
        "signal": "sampler.gap",
        "op": "gt",
        "value": 0,
        "min_fraction": 0,
        "on_missing": "invalidate",
    },
]
"""The default contamination rules of spec §7.3, frozen expanded."""


def _fail(
    code: str, message: str, path: str | None = None, expected: Any = None, observed: Any = None
) -> InputError:
    def text(x: Any) -> str | None:
        return None if x is None else (x if isinstance(x, str) else json.dumps(x))

    return InputError(code, message, path=path, expected=text(expected), observed=text(observed))


# ---- request validation ------------------------------------------------------------------------------------


def parse_request(data: bytes) -> ReadinessRequest | DiagnosticRequest:
    raw = jsonio.parse(data, what="readiness request")
    if not isinstance(raw, dict):
        raise InputError("field_invalid", "the readiness request must be a JSON object", path="$")
    mode = raw.get("mode")
    if mode == "diagnostic":
        return jsonio.validate(DiagnosticRequest, raw, what="readiness request")
    if mode != "optimization" and "mode" in raw:
        raise _fail(
            "field_invalid",
            "mode must be optimization or diagnostic",
            "mode",
            "optimization | diagnostic",
            mode,
        )
    return jsonio.validate(ReadinessRequest, raw, what="readiness request")


def _check_objective_roles(req: ReadinessRequest) -> set[str]:
    """Each metric is at most one of primary, constraint, secondary; those named must be declared.
    Returns every metric the objective uses."""
    obj, metrics, err = req.objective, req.metrics, "metric_declaration_invalid"
    roles: dict[str, str] = {}

    def claim(metric: str, role: str, path: str) -> None:
        if metric not in metrics:
            raise _fail(err, f"{path} names the undeclared metric {metric}", path, sorted(metrics), metric)
        if metric in roles:
            one = "at most one of primary, constraint, secondary"
            raise _fail(err, f"metric {metric} is both {roles[metric]} and {role}", path, one, role)
        roles[metric] = role
        if role != "secondary" and metrics[metric].zero_allowed:
            raise _fail(
                err,
                f"the {role} metric {metric} cannot allow zero",
                f"metrics.{metric}.zero_allowed",
                False,
                True,
            )

    claim(obj.primary, "primary", "objective.primary")
    for i, c in enumerate(obj.constraints):
        claim(c.metric, "constraint", f"objective.constraints[{i}].metric")
    for i, s in enumerate(obj.secondary):
        claim(s.metric, "secondary", f"objective.secondary[{i}].metric")
    used = set(roles)
    for i, g in enumerate(obj.guardrails):
        if g.metric not in metrics:
            path = f"objective.guardrails[{i}].metric"
            raise _fail(
                err, f"guardrail names the undeclared metric {g.metric}", path, sorted(metrics), g.metric
            )
        used.add(g.metric)
    return used


def _check_metrics(req: ReadinessRequest) -> None:
    err = "metric_declaration_invalid"
    for name, m in req.metrics.items():
        if m.within_call in QUANTILE_WITHIN and m.kind != "quantile":
            path = f"metrics.{name}.kind"
            raise _fail(
                err,
                f"metric {name}: within_call {m.within_call} needs kind quantile",
                path,
                "quantile",
                m.kind,
            )
    unused = sorted(set(req.metrics) - _check_objective_roles(req))
    if unused:
        path = f"metrics.{unused[0]}"
        raise _fail(
            err,
            f"metric {unused[0]} is declared but not used by the objective",
            path,
            "used by the objective",
            "unused",
        )


def _check_sets(req: ReadinessRequest) -> None:
    cases = req.test_set.case_ids
    if len(set(cases)) != len(cases):
        dup = next(c for c in cases if cases.count(c) > 1)
        raise _fail(
            "field_invalid", f"case {dup} is listed twice", "test_set.case_ids", "unique case ids", dup
        )
    weights = req.test_set.case_weights
    if weights is not None and set(weights) != set(cases):
        raise _fail(
            "field_invalid",
            "case_weights must cover every case exactly",
            "test_set.case_weights",
            sorted(cases),
            sorted(weights),
        )
    for i, rule in enumerate(req.accuracy.rules):
        if rule.cases != "all":
            outside = [c for c in rule.cases if c not in cases]
            if outside or not rule.cases:
                raise _fail(
                    "accuracy_rule_invalid",
                    f"accuracy rule {i} names unknown cases",
                    f"accuracy.rules[{i}].cases",
                    sorted(cases),
                    outside,
                )
    smoke = req.smoke.case_id
    if smoke is not None and smoke not in cases:
        raise _fail(
            "case_unknown",
            f"the smoke case {smoke} is not in the test set",
            "smoke.case_id",
            sorted(cases),
            smoke,
        )
    if len(set(req.gpus)) != len(req.gpus):
        raise _fail("field_invalid", "a GPU is listed twice", "gpus")


def _check_statistics(req: ReadinessRequest) -> None:
    s = req.statistics
    if s.effect_scale == "arithmetic_pct" and (s.estimator != "median" or s.ci_method != "percentile"):
        raise _fail(
            "statistics_invalid",
            "effect_scale arithmetic_pct (parity mode) requires estimator median and ci_method percentile",
            "statistics",
            "median + percentile",
            f"{s.estimator} + {s.ci_method}",
        )


def contamination_for(req: ReadinessRequest) -> dict[str, Any]:
    """The frozen contamination settings: defaults filled, ``rules: "default"`` expanded, rules checked."""
    spec = req.contamination
    if spec is None:
        spec = (
            ContaminationSpec(sampler="disabled", rules=[])
            if not req.gpus
            else ContaminationSpec(sampler="nvml")
        )
    rules = (
        [ContaminationRule.model_validate(r) for r in DEFAULT_RULES]
        if spec.rules == "default"
        else list(spec.rules)
    )
    err = "contamination_rule_invalid"
    if spec.sampler == "disabled" and rules:
        raise _fail(
            err, "rules need a sampler; sampler is disabled", "contamination.rules", [], [r.id for r in rules]
        )
    seen = set()
    for i, rule in enumerate(rules):
        path = f"contamination.rules[{i}]"
        if rule.id in seen:
            raise _fail(err, f"rule id {rule.id} repeats", f"{path}.id")
        seen.add(rule.id)
        is_list = isinstance(rule.value, list)
        if (rule.op == "any_of") != is_list or (rule.op == "any_of") != (rule.signal == "gpu.throttle"):
            raise _fail(
                err, f"rule {rule.id}: any_of takes a list of throttle reasons, gt/lt a number", f"{path}.op"
            )
        if not req.gpus and rule.signal.startswith("gpu."):
            raise _fail(
                err, f"rule {rule.id} watches a GPU signal but the Target is CPU-only", f"{path}.signal"
            )
    return {
        "sampler": spec.sampler,
        "period_ms": spec.period_ms,
        "rules": [r.model_dump() for r in rules],
        "idle": spec.idle.model_dump(),
    }


def _idle_check(gpus: list[str], contamination: dict[str, Any]) -> IdleCheck:
    """Spec §3.2, §7.4: before the smoke call; ``busy`` refuses (``gpu_busy``) unless ``allow_busy``."""
    if not gpus:
        return IdleCheck(status="not_required", detail="CPU-only Target")
    if contamination["sampler"] == "disabled":
        return IdleCheck(status="unknown", detail="no idle check ran: the sampler is disabled")
    from gpuopt.evaluation import idle

    settings = contamination["idle"]
    rep = idle.run(
        gpus,
        window_s=settings["window_s"],
        max_util_pct=settings["max_util_pct"],
        sampler=contamination["sampler"],
        period_ms=contamination["period_ms"],
    )
    if rep.status == "busy" and not settings["allow_busy"]:
        raise _fail("gpu_busy", f"the idle check found the GPUs busy: {rep.detail}", "gpus", "idle", "busy")
    return IdleCheck(status=rep.status, detail=rep.detail)


def _check_sampler(sampler: str) -> None:
    if sampler == "nvml":
        try:
            import pynvml

            pynvml.nvmlInit()
            pynvml.nvmlShutdown()
        except Exception as exc:
            raise AbsentError(
                "sampler_unavailable", f"the nvml sampler cannot start: {exc}", path="contamination.sampler"
            ) from None
    elif sampler == "nvidia_smi":
        raise AbsentError(
            "sampler_unavailable",
            "the nvidia_smi sampler is not built in this version: declare sampler nvml (nvidia-ml-py)",
            path="contamination.sampler",
        )


def validate(req: ReadinessRequest | DiagnosticRequest) -> None:
    if isinstance(req, DiagnosticRequest):
        if req.claim_layer != "diagnostic":
            raise _fail(
                "claim_layer_invalid",
                "a diagnostic Target has claim layer diagnostic",
                "claim_layer",
                "diagnostic",
                req.claim_layer,
            )
        return
    if req.claim_layer == "diagnostic":
        raise _fail(
            "claim_layer_invalid",
            "an optimization Target declares kernel, workload or serving",
            "claim_layer",
            "kernel | workload | serving",
            "diagnostic",
        )
    _check_sets(req)
    _check_metrics(req)
    _check_statistics(req)


# ---- work area ---------------------------------------------------------------------------------------------


class Attempt:
    """A private work area ``<parent>/.gpuopt-readiness/<name>-<n>/`` holding ``root/`` until publication."""

    def __init__(self, root: Path) -> None:
        self.final = root
        base = root.parent / WORK_DIR
        base.mkdir(exist_ok=True)
        n = 1
        while True:
            candidate = base / f"{root.name}-{n}"
            try:
                candidate.mkdir()
                break
            except FileExistsError:
                n += 1
        self.dir = candidate
        self.root = candidate / "root"
        self.root.mkdir()
        self.name = candidate.name
        self.calls = 0

    def write_json(self, name: str, value: Any) -> None:
        Store(self.dir).write_record(name, value)

    def keep_failure(self, exc: GpuoptError, *, stop_reason: str | None, violations: list[Violation]) -> None:
        """Drops the frozen objects, keeps everything else and writes ``error.json``."""
        objects = self.root / "objects"
        if objects.exists():
            _chmod_tree(objects)
            shutil.rmtree(objects, ignore_errors=True)
        kept = sorted(str(p.relative_to(self.dir)) for p in self.dir.rglob("*") if p.is_file())
        failure = ReadinessFailure(
            format="gpuopt.readiness-failure/v1",
            code=exc.code,
            message=exc.message[:4096],
            path=exc.path,
            expected=exc.expected,
            observed=exc.observed,
            stop_reason=stop_reason,
            violations=[v.model_dump() for v in violations],
            failed_at_epoch=time.time(),
            files_kept=kept,
            call_count=self.calls,
        )
        self.write_json("error.json", failure)

    def publish(self) -> None:
        try:
            _native.rename_noreplace(str(self.root), str(self.final))
        except InputError as exc:
            raise InputError(
                "root_exists", f"{self.final} appeared while readiness ran", path=str(self.final)
            ) from exc

    def remove(self) -> None:
        _chmod_tree(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.dir.parent.rmdir()


def _chmod_tree(path: Path) -> None:
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            p = Path(dirpath) / name
            if not p.is_symlink():
                p.chmod(0o700)


def _storage_probe(parent: Path) -> list[StorageCheck]:
    checks = [StorageCheck.model_validate(c) for c in json.loads(_native.storage_probe(str(parent)))]
    for c in checks:
        if not c.ok:
            raise InputError(
                "storage_unsupported",
                f"the storage under {parent} fails {c.name}: {c.detail}",
                path=str(parent),
                expected=c.name,
                observed=c.detail,
            )
    return checks


def _resolve(cwd: Path, path: str) -> Path:
    return Path(os.path.abspath(cwd / path))


def _lineage(req: ReadinessRequest | DiagnosticRequest, cwd: Path) -> dict[str, Any]:
    if req.lineage is None:
        return {"parent": None, "reason": None}
    parent = Store.open(_resolve(cwd, req.lineage.parent_root))
    _, ref = targets.load(parent, req.lineage.parent)
    return {"parent": ref.model_dump(), "reason": req.lineage.reason}


# ---- the smoke ---------------------------------------------------------------------------------------------


def _run_probe(attempt: Attempt, spec: ExecutionSpec) -> InvocationResult | None:
    smoke = attempt.dir / "smoke"
    smoke.mkdir()
    Store(smoke).write_record("spec.json", spec)
    read_end, write_end = os.pipe()
    try:
        with open(smoke / "supervisor.log", "ab") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gpuopt.evaluation.supervisor",
                    "probe",
                    str(smoke / "spec.json"),
                    "--caller-fd",
                    str(read_end),
                ],
                pass_fds=(read_end,),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        os.close(read_end)
        proc.wait()
    finally:
        os.close(write_end)
    attempt.calls = len(list((smoke / "calls").glob("*"))) if (smoke / "calls").exists() else 0
    if not (smoke / "result.json").exists():
        return None
    result, _ = Store(smoke).read_record("result.json", InvocationResult, what="smoke result")
    return result


def _smoke_error(result: InvocationResult | None) -> tuple[InputError, list[Violation]] | None:
    if result is None:
        return InputError(
            "smoke_failed", "the smoke supervisor ended without a result (see smoke/supervisor.log)"
        ), []
    if (
        result.execution_status == "succeeded"
        and result.measurement_validity == "valid"
        and result.verdict == "passed"
    ):
        return None
    reason = result.stop_reason
    violations = [v for r in result.call_receipts for v in r.violations]
    if reason == "correctness_failed":
        for receipt in result.correctness:
            failed = [r for r in receipt.rules if not r.passed]
            if failed:
                rule = failed[0]
                return (
                    InputError(
                        "smoke_failed",
                        f"smoke failed: correctness_failed: {rule.metric} {rule.op} {rule.value} fails",
                        path=f"correctness.rules.{rule.metric}",
                        expected=f"{rule.op} {rule.value!r}",
                        observed=repr(rule.observed),
                    ),
                    violations,
                )
        return InputError(
            "smoke_failed",
            "smoke failed: correctness_failed: the driver reported failed",
            path="correctness.driver_status",
            expected="passed",
            observed="failed",
        ), violations
    first = next((v for v in violations if v.code == reason), violations[0] if violations else None)
    detail = f" ({first.message})" if first is not None and first.message else ""
    return (
        InputError(
            "smoke_failed",
            f"smoke failed: {reason}{detail}",
            path=None if first is None else first.path,
            expected=None if first is None else first.expected,
            observed=None if first is None else first.observed,
        ),
        violations,
    )


class SmokeFailure(InputError):
    """A failed smoke, with the call's stop reason."""

    def __init__(self, base: InputError, stop_reason: str | None, violations: list[Violation]) -> None:
        super().__init__(
            base.code, base.message, path=base.path, expected=base.expected, observed=base.observed
        )
        self.stop_reason = stop_reason
        self.violations = violations


# ---- check -------------------------------------------------------------------------------------------------


def check(data: bytes, *, cwd: Path | None = None) -> ReadinessResult:
    """Runs ``gpuopt readiness check`` on a request (JSON bytes); see the module documentation."""
    cwd = Path.cwd() if cwd is None else cwd
    req = parse_request(data)
    validate(req)
    root = _resolve(cwd, req.root)
    if root.exists() or root.is_symlink():
        raise _fail(
            "root_exists",
            f"{root} already exists; a Target is frozen into a new root",
            "root",
            "absent",
            str(root),
        )
    if not root.parent.is_dir():
        raise _fail("root_not_found", f"the parent folder {root.parent} does not exist", "root")
    probe = _storage_probe(root.parent)
    contamination = None
    if isinstance(req, ReadinessRequest):
        contamination = contamination_for(req)
        if contamination["sampler"] != "disabled" and req.gpus:  # host signals need no GPU source
            _check_sampler(contamination["sampler"])
    attempt = Attempt(root)
    attempt.write_json("request.json", req)
    try:
        if isinstance(req, DiagnosticRequest):
            result = _diagnostic(req, attempt, cwd, probe)
        else:
            assert contamination is not None
            result = _optimization(req, attempt, cwd, probe, contamination)
    except SmokeFailure as exc:
        attempt.keep_failure(exc, stop_reason=exc.stop_reason, violations=exc.violations)
        raise InputError(
            exc.code, exc.message, path=exc.path, expected=exc.expected, observed=exc.observed
        ) from None
    except GpuoptError as exc:
        attempt.keep_failure(exc, stop_reason=None, violations=[])
        raise
    except BaseException as exc:
        attempt.keep_failure(
            InputError("internal_error", f"{type(exc).__name__}: {exc}"), stop_reason=None, violations=[]
        )
        raise
    attempt.remove()
    return result


def _freeze_common(req: ReadinessRequest | DiagnosticRequest, store: Store, cwd: Path) -> dict[str, Any]:
    exclude = req.source_rules.exclude if req.original.kind == "source" else []
    original = store.freeze(_resolve(cwd, req.original.path), exclude=exclude, limits=req.scan_limits)
    return {"original": {"role": "original", "kind": req.original.kind, "digest": original.digest}}


def _optimization(
    req: ReadinessRequest,
    attempt: Attempt,
    cwd: Path,
    probe: list[StorageCheck],
    contamination: dict[str, Any],
) -> ReadinessResult:
    store = Store(attempt.root)
    frozen = _freeze_common(req, store, cwd)
    test_set = store.freeze(_resolve(cwd, req.test_set.path), exclude=[], limits=req.scan_limits)
    reference = None
    if req.accuracy.reference_path is not None:
        reference = store.freeze(
            _resolve(cwd, req.accuracy.reference_path), exclude=[], limits=req.scan_limits
        ).digest
    observed = identity.observe(sorted(req.gpus), req.required_tools)
    attempt.write_json("observed.json", observed)
    key = drv.create_env_key(store)
    driver: NormalizedDriver = drv.normalize(req.driver, cwd=cwd, environ=os.environ, key=key)
    gpus = sorted(req.gpus)
    idle = _idle_check(gpus, contamination)
    core: dict[str, Any] = {
        "format": formats.TARGET,
        "mode": "optimization",
        "claim_layer": req.claim_layer,
        "lineage": _lineage(req, cwd),
        **frozen,
        "source_rules": req.source_rules.model_dump(),
        "test_set": {
            "digest": test_set.digest,
            "case_ids": list(req.test_set.case_ids),
            "case_weights": req.test_set.case_weights,
        },
        "accuracy": {"reference": reference, "rules": [r.model_dump() for r in req.accuracy.rules]},
        "metrics": {k: v.model_dump() for k, v in req.metrics.items()},
        "objective": req.objective.model_dump(),
        "driver": driver.model_dump(),
        "gpus": gpus,
        "statistics": req.statistics.model_dump(),
        "contamination": contamination,
    }
    provisional = targets.target_id(core)
    smoke_case = req.smoke.case_id or req.test_set.case_ids[0]
    probe_id = (
        "probe-"
        + jsonio.digest(
            {"provisional": provisional, "smoke": req.smoke.model_dump(), "driver": driver.identity}
        )[:24]
    )
    spec = ExecutionSpec(
        invocation_id=probe_id,
        operation="readiness_smoke",
        target_id=provisional,
        target=None,
        request_digest=jsonio.digest({"probe": probe_id, "provisional": provisional}),
        store_root=str(attempt.root),
        gpus=gpus,
        driver=driver,
        metrics=req.metrics,
        rules=req.accuracy.rules,
        test_set_digest=test_set.digest,
        accuracy_reference=reference,
        variants={"original": FrozenVariant(kind=req.original.kind, digest=frozen["original"]["digest"])},
        evidence_plan=[
            EvidenceStep(
                call_index=0,
                pair_index=None,
                case_id=smoke_case,
                order=None,
                roles=["original"],
                lifecycle="isolated",
            )
        ],
        samples_per_call=SMOKE_SAMPLES,
        warmup_per_call=0,
        seed=req.statistics.seed,
        shared_state=[],
        rebuilt_state=[],
        expected_reported=None,
        limits=req.smoke.limits,
        keep_workspace=False,
    )
    result = _run_probe(attempt, spec)
    failed = _smoke_error(result)
    if failed is not None:
        raise SmokeFailure(failed[0], None if result is None else result.stop_reason, failed[1])
    assert result is not None and result.reported_runtime is not None
    try:
        scope, notes = identity.cross_check(observed, result.reported_runtime, gpus)
    except InputError as exc:
        raise SmokeFailure(exc, "identity_mismatch", []) from None
    core["runtime_identity"] = {
        "observed": observed.model_dump(),
        "reported": result.reported_runtime.model_dump(),
        "attribution_scope": scope,
        "notes": notes,
    }
    smoke_dir = attempt.dir / "smoke"
    smoke_request = jsonio.load(
        DriverRequest, (smoke_dir / "calls" / "0000" / "request.json").read_bytes(), what="smoke request"
    )
    receipt = result.call_receipts[0]
    doc = {
        **core,
        "id": targets.target_id(core),
        "readiness": {
            "checked_at_epoch": time.time(),
            "storage_probe": [c.model_dump() for c in probe],
            "idle_check": idle.model_dump(),
            "smoke_request": smoke_request.model_dump(),
            "smoke_receipt": receipt.model_dump(),
            "bundle_digest": receipt.bundle,
            "correctness": [c.model_dump() for c in result.correctness],
        },
    }
    from gpuopt.models.evaluation.target import Target

    target = jsonio.validate(Target, doc, what="target")
    ref = _publish_target(store, attempt, target)
    return ReadinessResult(
        status="ready",
        root=str(attempt.final),
        target=ref,
        mode="optimization",
        claim_layer=req.claim_layer,
        attribution_scope=scope,
        identity_notes=notes,
        smoke=SmokeSummary(
            elapsed_s=receipt.elapsed_s, invocation_id=probe_id, correctness=result.correctness
        ),
        unavailable=[],
        objects={
            "original": target.original.digest,
            "test_set": test_set.digest,
            **({"accuracy_reference": reference} if reference else {}),
        },
        attempt=attempt.name,
    )


def _publish_target(store: Store, attempt: Attempt, target: Any) -> RecordRef:
    published = store.write_record("target.json", target)
    store.ledger_append(
        "target", target.id, published, {"mode": target.mode, "claim_layer": target.claim_layer}
    )
    attempt.publish()
    return RecordRef(id=target.id, sha256=published.sha256)


def _diagnostic(
    req: DiagnosticRequest, attempt: Attempt, cwd: Path, probe: list[StorageCheck]
) -> ReadinessResult:
    from gpuopt.models.evaluation.target import DiagnosticTarget

    store = Store(attempt.root)
    frozen = _freeze_common(req, store, cwd)
    materials = []
    for m in req.materials:
        digest = store.freeze(_resolve(cwd, m.path), exclude=[], limits=req.scan_limits).digest
        materials.append(
            {
                "kind": m.kind,
                "tool": m.tool,
                "tool_version": m.tool_version,
                "format": m.format,
                "digest": digest,
            }
        )
    observed = identity.observe([], [])
    attempt.write_json("observed.json", observed)
    unavailable = UNAVAILABLE.model_dump()
    in_container = bool(observed.host.container_hints)
    core: dict[str, Any] = {
        "format": formats.TARGET,
        "mode": "diagnostic",
        "claim_layer": "diagnostic",
        "lineage": _lineage(req, cwd),
        **frozen,
        "source_rules": req.source_rules.model_dump(),
        "materials": materials,
        **{
            k: unavailable
            for k in (
                "test_set",
                "accuracy",
                "metrics",
                "objective",
                "driver",
                "gpus",
                "statistics",
                "contamination",
            )
        },
        "runtime_identity": {
            "observed": observed.model_dump(),
            "reported": unavailable,
            "attribution_scope": "frozen_runtime_only" if in_container else "identified_runtime",
            "notes": ["observed container hints; no driver reports a lineage"] if in_container else [],
        },
    }
    doc = {
        **core,
        "id": targets.target_id(core),
        "readiness": {
            "checked_at_epoch": time.time(),
            "storage_probe": [c.model_dump() for c in probe],
            "smoke": unavailable,
        },
    }
    target = jsonio.validate(DiagnosticTarget, doc, what="target")
    ref = _publish_target(store, attempt, target)
    return ReadinessResult(
        status="ready",
        root=str(attempt.final),
        target=ref,
        mode="diagnostic",
        claim_layer="diagnostic",
        attribution_scope=target.runtime_identity.attribution_scope,
        identity_notes=target.runtime_identity.notes,
        smoke=None,
        unavailable=[
            "test_set",
            "accuracy",
            "metrics",
            "objective",
            "driver",
            "gpus",
            "runtime_identity.reported",
            "statistics",
            "contamination",
        ],
        objects={
            "original": target.original.digest,
            **{f"material[{i}]": m["digest"] for i, m in enumerate(materials)},
        },
        attempt=attempt.name,
    )
