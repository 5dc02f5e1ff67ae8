"""The worker of an invocation: runs its frozen evidence plan call by call through the supervisor's call
runner, freezes each call's output bundle before reading it, applies the gates of spec §4.4 and records
receipts and raw samples. The first contract, correctness or identity failure stops the plan.

The caller hands the worker its operation's handler (:class:`gpuopt.evaluation.execution.OperationHandler`),
which turns the executed plan into the result's verdict and any operation-specific fields (statistics
belong to the operations that need them).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from gpuopt import stats
from gpuopt.errors import InputError
from gpuopt.evaluation import driver as drv
from gpuopt.evaluation import formats, gates, jsonio
from gpuopt.evaluation.execution import Execution, ExecutionSpec, OperationHandler
from gpuopt.evaluation.launch import CallOutcome, Deadlines, LaunchSpec
from gpuopt.evaluation.records import pointer_sha256
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import Role, Violation
from gpuopt.models.evaluation.driver import DriverRequest, DriverResult
from gpuopt.models.evaluation.invocation import (
    CallReceipt,
    Calls,
    EvidenceStep,
    ExecutionStatus,
    InvocationResult,
    TableRef,
    Tables,
    Warning,
)
from gpuopt.models.evaluation.store import ScanLimits
from gpuopt.models.evaluation.target import MetricDeclaration

BUNDLE_LIMITS = ScanLimits(max_files=2048, max_total_bytes=8 << 30, max_wall_s=120.0)
SMOKE_SAMPLES = 2


def samples_for(metrics: dict[str, MetricDeclaration], plan_samples: int) -> dict[str, int]:
    """Per metric: its fixed count (part of its meaning) or the plan's."""
    return {
        name: m.samples_per_call if m.samples_per_call is not None else plan_samples
        for name, m in metrics.items()
    }


class Runner(Protocol):
    """The supervisor's call runner, as the worker sees it."""

    def run_call(self, spec: LaunchSpec, deadlines: Deadlines) -> CallOutcome: ...

    def cancelled(self) -> bool: ...


def _stop_status(reason: str) -> ExecutionStatus:
    if reason == "cancelled":
        return "cancelled"
    if reason in ("command_timeout", "operation_timeout", "absolute_deadline", "resource_wait_timeout"):
        return "timed_out"
    return "failed"


class Worker:
    """Executes one :class:`ExecutionSpec` in ``inv_dir`` with a call runner."""

    def __init__(self, spec: ExecutionSpec, inv_dir: Path, runner: Runner, deadlines: Deadlines) -> None:
        self.spec = spec
        self.inv_dir = inv_dir
        self.runner = runner
        self.deadlines = deadlines
        self.store = Store(Path(spec.store_root))
        self.workspace = inv_dir / "workspace"
        self.paths: dict[str, Path] = {}

    # ---- workspace -------------------------------------------------------------------------------------

    def _materialize(self, key: str, digest: str) -> Path:
        if key not in self.paths:
            self.workspace.mkdir(exist_ok=True)
            dest = self.workspace / key
            self.store.materialize(digest, dest)
            self.paths[key] = dest
        return self.paths[key]

    def _subjects(self, roles: list[Role]) -> list[dict[str, Any]]:
        out = []
        for role in roles:
            variant = self.spec.variants[role]
            out.append(
                {
                    "role": role,
                    "kind": variant.kind,
                    "digest": variant.digest,
                    "path": str(self._materialize(role, variant.digest)),
                }
            )
        return out

    # ---- one call --------------------------------------------------------------------------------------

    def wrap_launch(
        self, step: EvidenceStep, call_dir: Path, argv: list[str], env: dict[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """The argv and environment a call launches with; a capture's worker wraps them in its profiler."""
        return argv, env

    def _request(self, step: EvidenceStep, call_dir: Path) -> DriverRequest:
        spec = self.spec
        accuracy = None
        if spec.accuracy_reference is not None:
            accuracy = {
                "digest": spec.accuracy_reference,
                "path": str(self._materialize("accuracy-reference", spec.accuracy_reference)),
            }
        pair_index = step.pair_index if step.pair_index is not None else step.call_index
        pair = (
            None
            if step.pair_index is None or step.order is None
            else {"index": step.pair_index, "order": step.order}
        )
        correctness_metrics = sorted(
            {r.metric for r in spec.rules} | {g.metric for g in spec.gates} | set(spec.diagnostics)
        )
        return drv.build_request(
            {
                "target_id": spec.target_id,
                "invocation_id": spec.invocation_id,
                "call_index": step.call_index,
                "operation": spec.operation,
                "case": {"id": step.case_id},
                "test_set": {
                    "digest": spec.test_set_digest,
                    "path": str(self._materialize("test-set", spec.test_set_digest)),
                },
                "accuracy_reference": accuracy,
                "subjects": self._subjects(step.roles),
                "acquisition": {
                    "lifecycle": step.lifecycle,
                    "shared_state": spec.shared_state,
                    "rebuilt_state": spec.rebuilt_state,
                },
                "sampling": {
                    "samples_per_call": samples_for(spec.metrics, spec.samples_per_call),
                    "warmup_per_call": spec.warmup_per_call,
                    "input_seed": stats.input_seed(spec.seed, pair_index, step.case_id),
                },
                "metrics": {name: {"unit": m.unit} for name, m in spec.metrics.items()},
                "correctness_metrics": correctness_metrics,
                "pair": pair,
                "output_dir": str(call_dir / "output"),
                "driver_identity": spec.driver.identity,
            }
        )

    def _receipt(
        self,
        step: EvidenceStep,
        outcome: CallOutcome,
        bundle: str | None,
        violations: list[Violation],
        identity_equal: bool | None,
    ) -> CallReceipt:
        return CallReceipt(
            call_index=step.call_index,
            step=step,
            status=outcome.status,
            stop_reason=outcome.stop_reason or (violations[0].code if violations else None),
            returncode=outcome.returncode,
            elapsed_s=outcome.elapsed_s,
            window=outcome.window,
            stdout=outcome.stdout,
            stderr=outcome.stderr,
            bundle=bundle,
            leftover_processes=outcome.leftover_processes,
            cleanup=outcome.cleanup,
            identity_equal=identity_equal,
            contamination=[],
            violations=violations,
        )

    def _validate(
        self, request: DriverRequest, outcome: CallOutcome, call_dir: Path
    ) -> tuple[str | None, DriverResult | None, list[Violation]]:
        try:
            frozen = self.store.freeze(call_dir / "output", exclude=[], limits=BUNDLE_LIMITS)
        except InputError as exc:
            code = exc.code if exc.code.startswith("object_") else "bundle_invalid"
            return (
                None,
                None,
                [
                    Violation(
                        code=code,
                        path=exc.path,
                        expected=exc.expected,
                        observed=exc.observed,
                        message=exc.message,
                    )
                ],
            )
        manifest = self.store.manifest(frozen.digest)
        data = gates.read_bundle_result(
            manifest, lambda sha: self.store.read_blob(sha, max_bytes=jsonio.MAX_DRIVER_RESULT_BYTES + 1)
        )
        result, violations = gates.parse_result(data)
        if result is None:
            return frozen.digest, None, violations
        violations = gates.check_bundle(result, manifest) + gates.check_contract(
            request, result, self.spec.metrics, (outcome.window.start_mono_ns, outcome.window.end_mono_ns)
        )
        return frozen.digest, result, violations

    def _call(self, step: EvidenceStep, ex: Execution) -> bool:
        """Runs one step; ``False`` stops the plan."""
        spec = self.spec
        call_dir = self.inv_dir / "calls" / f"{step.call_index:04d}"
        call_dir.mkdir(parents=True)
        request = self._request(step, call_dir)
        request_path = call_dir / "request.json"
        Store(call_dir).write_record("request.json", request)
        env = drv.launch_environment(
            spec.driver,
            os.environ,
            gpus=spec.gpus,
            request_path=request_path,
            output_dir=call_dir / "output",
            call_index=step.call_index,
            tmpdir=call_dir / "tmp",
        )
        argv, env = self.wrap_launch(step, call_dir, drv.launch_argv(spec.driver, request_path), env)
        launch = LaunchSpec(
            call_index=step.call_index,
            call_dir=call_dir,
            argv=argv,
            env=env,
            command_timeout_s=spec.limits.command_timeout_s,
            termination_grace_s=spec.limits.termination_grace_s,
            cleanup_timeout_s=spec.limits.cleanup_timeout_s,
        )
        outcome = self.runner.run_call(launch, self.deadlines)
        ex.gpu_seconds += outcome.elapsed_s * len(spec.gpus)
        if outcome.status != "completed":
            ex.receipts.append(
                self._receipt(
                    step, outcome, None, [Violation(code=outcome.stop_reason or "command_failed")], None
                )
            )
            ex.stop(
                _stop_status(outcome.stop_reason or "command_failed"), outcome.stop_reason or "command_failed"
            )
            return False
        bundle, result, violations = self._validate(request, outcome, call_dir)
        if result is None or violations:
            ex.receipts.append(self._receipt(step, outcome, bundle, violations, None))
            ex.stop("failed", violations[0].code if violations else "result_missing")
            return False
        receipts = gates.correctness_receipts(
            request, result, spec.rules, gates=spec.gates, diagnostics=spec.diagnostics
        )
        ex.correctness.extend(receipts)
        expected = spec.expected_reported or ex.reported
        identity_equal = expected is None or jsonio.canonical(result.runtime_identity) == jsonio.canonical(
            expected
        )
        if ex.reported is None:
            ex.reported = result.runtime_identity
        identity_violations = (
            []
            if identity_equal
            else [
                Violation(
                    code="identity_changed",
                    path="runtime_identity",
                    expected=jsonio.canonical(expected).decode()[:1000],
                    observed=jsonio.canonical(result.runtime_identity).decode()[:1000],
                )
            ]
        )
        ex.receipts.append(self._receipt(step, outcome, bundle, identity_violations, identity_equal))
        ex.results.append((request, result))
        ex.rows.extend(gates.sample_rows(request, result, call_index=step.call_index))
        if not all(r.passed for r in receipts):
            ex.correctness_failed = True
            ex.stop("succeeded", "correctness_failed")
            return False
        if not identity_equal:
            ex.stop("succeeded", "identity_changed")
            return False
        return True

    # ---- the plan --------------------------------------------------------------------------------------

    def _pre_call_check(self, ex: Execution) -> bool:
        try:
            drv.check_driver(self.spec.driver)
            drv.check_environment(self.spec.driver, os.environ, self.store)
        except InputError as exc:
            ex.stop("invalid", exc.code)
            ex.warnings.append(
                Warning(code=exc.code, message=exc.message, expected=exc.expected, observed=exc.observed)
            )
            return False
        return True

    def _binding_current(self, ex: Execution) -> bool:
        """The Champion pointer still has the bound hash; else the plan stops with ``stale_reference``."""
        binding = self.spec.binding
        if binding is None:
            return True
        current = pointer_sha256(self.store)
        if current == binding.pointer_sha256:
            return True
        ex.stop("succeeded" if ex.receipts else "invalid", "stale_reference")
        ex.warnings.append(
            Warning(
                code="stale_reference",
                message="the Champion changed while this invocation ran",
                expected=binding.pointer_sha256 or "absent",
                observed=current or "absent",
            )
        )
        return False

    def execute(self) -> Execution:
        ex = Execution()
        plan = self.spec.evidence_plan
        for position, step in enumerate(plan):
            if self.runner.cancelled():
                ex.stop("cancelled", "cancelled")
            elif time.monotonic() >= self.deadlines.operation_mono:
                ex.stop("timed_out", "operation_timeout")
            elif (
                self.deadlines.absolute_mono is not None and time.monotonic() >= self.deadlines.absolute_mono
            ):
                ex.stop("timed_out", "absolute_deadline")
            elif self._binding_current(ex) and self._pre_call_check(ex) and self._call(step, ex):
                continue
            ex.skipped = (
                [s.call_index for s in plan[position + 1 :]]
                if ex.receipts and ex.receipts[-1].call_index == step.call_index
                else [s.call_index for s in plan[position:]]
            )
            break
        if self.spec.restore_checks and ex.correctness_failed and self._candidate_failed(ex):
            self._restore_checks(ex)
        return ex

    def _candidate_failed(self, ex: Execution) -> bool:
        return any(c.role == "candidate" and not c.passed for c in ex.correctness)

    def _restore_checks(self, ex: Execution) -> None:
        """After the candidate failed correctness: one original call per case whose original correctness
        this invocation has not shown, stopping if the original fails."""
        digest = self.spec.variants["original"].digest
        for step in self.spec.restore_checks:
            shown = any(
                c.passed and c.digest == digest and c.case_id == step.case_id and c.role != "candidate"
                for c in ex.correctness
            )
            if shown:
                continue
            if self.runner.cancelled() or time.monotonic() >= self.deadlines.operation_mono:
                return
            saved = (ex.execution_status, ex.validity, ex.stop_reason)
            ok = self._call(step, ex)
            # The comparison's outcome stands; the restore check's own outcome is in its receipts.
            ex.execution_status, ex.validity, ex.stop_reason = saved
            if not ok:
                return

    def tables(self, ex: Execution) -> Tables:
        # A readiness probe's samples live in its frozen bundle (its work area goes once the Target exists).
        if not ex.rows or self.spec.target is None:
            return Tables(samples=None, resources=None)
        import polars as pl

        path = self.inv_dir / "samples.parquet"
        pl.DataFrame(ex.rows).write_parquet(path)
        return Tables(
            samples=TableRef(
                path="samples.parquet", sha256=jsonio.sha256_hex(path.read_bytes()), rows=len(ex.rows)
            ),
            resources=None,
        )

    def remove_workspace(self) -> None:
        if self.workspace.exists() and not self.spec.keep_workspace:
            _make_writable(self.workspace)
            shutil.rmtree(self.workspace, ignore_errors=True)


def _make_writable(path: Path) -> None:
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            p = Path(dirpath) / name
            if not p.is_symlink():
                p.chmod(0o700)
    path.chmod(0o700)


def build_result(
    handler: OperationHandler,
    spec: ExecutionSpec,
    ex: Execution,
    *,
    started_at: float,
    gpu_seconds_held: float,
    cleanup_status: str,
    tables: Tables,
    overrides: dict[str, Any] | None = None,
) -> InvocationResult:
    extra = handler.extra_fields(spec, ex)
    finished = time.time()
    fields: dict[str, Any] = {
        "format": formats.INVOCATION_RESULT,
        "invocation_id": spec.invocation_id,
        "operation": spec.operation,
        "target": spec.target,
        "request_digest": spec.request_digest,
        "started_at_epoch": started_at,
        "finished_at_epoch": finished,
        "elapsed_s": max(finished - started_at, 0.0),
        "gpu_seconds": ex.gpu_seconds,
        "gpu_seconds_held": gpu_seconds_held,
        "execution_status": ex.execution_status,
        "measurement_validity": ex.validity,
        "verdict": handler.verdict(spec, ex),
        "stop_reason": ex.stop_reason,
        "cleanup_status": cleanup_status,
        "calls": Calls(planned=len(spec.evidence_plan), completed=len(ex.receipts), skipped=ex.skipped),
        "call_receipts": ex.receipts,
        "correctness": ex.correctness,
        "reported_runtime": ex.reported,
        "warnings": ex.warnings,
        "tables": tables,
        **extra,
        **(overrides or {}),
    }
    return handler.result_model.model_validate(fields)


def refused_result(
    handler: OperationHandler,
    spec: ExecutionSpec,
    reason: str,
    status: ExecutionStatus,
    *,
    started_at: float,
    message: str,
    gpu_seconds_held: float = 0.0,
    sampling: Any = None,
) -> InvocationResult:
    """A result for an invocation stopped before any call."""
    ex = Execution()
    ex.sampling = sampling
    ex.stop(status, reason)
    ex.skipped = [s.call_index for s in spec.evidence_plan]
    ex.warnings.append(Warning(code=reason, message=message))
    return build_result(
        handler,
        spec,
        ex,
        started_at=started_at,
        gpu_seconds_held=gpu_seconds_held,
        cleanup_status="not_required",
        tables=Tables(samples=None, resources=None),
        overrides={"verdict": "not_evaluated"},
    )


Now = Callable[[], float]
