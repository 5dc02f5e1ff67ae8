"""The capture's worker and handler: each driver call runs under the profiler (or with
``$GPUOPT_TORCH_TRACE`` set), then its report is frozen into the store with the engine's facts beside it.

The driver's correctness check runs in the same call: a call whose correctness failed voids its capture (and
stops the plan, as in every evaluation). A profiler whose bytes changed since the request was frozen stops
the plan before the call (``profiler_changed``); a profiler that wrote no report is a failed capture with a
typed reason (``profiler_no_report``, ``ncu_counter_access_denied``, ``torch_trace_missing``,
``nsys_export_failed``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuopt import _profile_sources
from gpuopt.errors import AbsentError, GpuoptError
from gpuopt.evaluation.capture import profilers
from gpuopt.evaluation.execution import Execution, ExecutionSpec
from gpuopt.evaluation.executor import BUNDLE_LIMITS, Worker
from gpuopt.evaluation.records import read_request
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.capture import (
    CaptureArtifact,
    CapturedFacts,
    CaptureFrozen,
    CaptureRecord,
    CaptureResult,
    CaptureSettings,
    CaptureStatus,
)
from gpuopt.models.evaluation.common import Role
from gpuopt.models.evaluation.invocation import EvidenceStep, Warning
from gpuopt.models.evaluation.store import FileEntry
from gpuopt.provenance import file_sha256

CAPTURES = "captures"
"""Key of the capture records in :attr:`Execution.analysis`."""
KINDS = {".nsys-rep": "nsys-rep", ".sqlite": "nsys-sqlite", ".ncu-rep": "ncu-rep", ".ncu-repz": "ncu-rep"}


def frozen_settings(spec: ExecutionSpec) -> CaptureSettings:
    request = read_request(Store(Path(spec.store_root)), spec.invocation_id)
    if not isinstance(request, CaptureFrozen):
        raise GpuoptError("capture_request_invalid", f"{spec.invocation_id} is not a capture")
    return request.capture


class CaptureWorker(Worker):
    """A :class:`Worker` whose calls run under the frozen profiler and whose reports are frozen."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings = frozen_settings(self.spec)
        self.variant_of = {v.role: v.variant for v in self.settings.variants}

    def _out(self, call_dir: Path) -> Path:
        return call_dir / "profile" / profilers.REPORT_STEM

    def wrap_launch(
        self, step: EvidenceStep, call_dir: Path, argv: list[str], env: dict[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        out = self._out(call_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        if self.settings.tool == "torch":
            return argv, {**env, profilers.TORCH_TRACE_ENV: str(out.with_name("kineto-trace.json"))}
        extra = {"NSYS_NVTX_PROFILER_REGISTER_ONLY": "0"} if self.settings.tool == "nsys" else {}
        return [*profilers.wrap(self.settings.argv, out), *argv], {**env, **extra}

    def _profiler_unchanged(self, ex: Execution) -> bool:
        profiler = self.settings.profiler
        if profiler is None:
            return True
        try:
            now = file_sha256(profiler.path)
        except GpuoptError as exc:
            now = f"unreadable ({exc.code})"
        if now == profiler.sha256:
            return True
        ex.stop("invalid", "profiler_changed")
        ex.warnings.append(
            Warning(
                code="profiler_changed",
                message=f"{profiler.path} changed since the capture was requested",
                expected=profiler.sha256,
                observed=now,
            )
        )
        return False

    def _pre_call_check(self, ex: Execution) -> bool:
        return super()._pre_call_check(ex) and self._profiler_unchanged(ex)

    def _call(self, step: EvidenceStep, ex: Execution) -> bool:
        before = len(ex.receipts)
        ok = super()._call(step, ex)
        call_dir = self.inv_dir / "calls" / f"{step.call_index:04d}"
        records: list[CaptureRecord] = ex.analysis.setdefault(CAPTURES, [])
        record = self._record(step, ex, call_dir, called=len(ex.receipts) > before)
        records.append(record)
        if record.status == "failed" and ok:
            ex.stop("failed", record.reason or "capture_failed")
            ex.warnings.append(Warning(code=record.reason or "capture_failed", message=record.message or ""))
            return False
        if record.status == "failed" and record.reason is not None and ex.stop_reason == "command_failed":
            ex.stop_reason = record.reason  # the profiler's own reason, more precise than command_failed
            ex.warnings.append(Warning(code=record.reason, message=record.message or ""))
        return ok

    def _record(self, step: EvidenceStep, ex: Execution, call_dir: Path, *, called: bool) -> CaptureRecord:
        role: Role = step.roles[0]
        base: dict[str, Any] = {
            "index": len(ex.analysis[CAPTURES]),
            "call_index": step.call_index,
            "repeat": step.pair_index or 0,
            "case_id": step.case_id,
            "variant": self.variant_of[role],
            "role": role,
            "digest": self.spec.variants[role].digest,
            "artifacts": [],
            "facts": None,
        }

        def done(
            status: CaptureStatus, reason: str | None, message: str | None, **more: Any
        ) -> CaptureRecord:
            return CaptureRecord.model_validate(
                {**base, **more, "status": status, "reason": reason, "message": message}
            )

        checks = [c for c in ex.correctness if c.call_index == step.call_index]
        if checks and not all(c.passed for c in checks):
            return done("voided", "correctness_failed", "the driver's correctness check failed in this call")
        out = self._out(call_dir)
        tool = self.settings.tool
        report = profilers.report_path(tool, out.with_name("kineto-trace.json") if tool == "torch" else out)
        receipt = ex.receipts[-1] if called and ex.receipts else None
        if receipt is not None and receipt.status in ("cancelled", "timed_out"):
            return done("failed", receipt.stop_reason or receipt.status, f"the call was {receipt.status}")
        if report is None:
            logs = "".join(_text(call_dir / n) for n in ("stdout.log", "stderr.log"))
            reason, message = profilers.failure(tool, logs, None if receipt is None else receipt.returncode)
            return done("failed", reason, message)
        if receipt is None or receipt.status != "completed" or receipt.violations:
            why = None if receipt is None else (receipt.stop_reason or receipt.status)
            return done("failed", why or "call_failed", "the driver call did not complete validly")
        try:
            files = [report]
            if tool == "nsys" and self.settings.profiler is not None:
                files.append(profilers.export_sqlite(self.settings.profiler.path, report))
            artifacts = [self._freeze(p, tool) for p in files]
            read = _profile_sources.load(self.store.path(_blob_rel(artifacts[-1].sha256)), "kernel").facts
            facts = CapturedFacts.of(read)
        except AbsentError as exc:  # the report is kept; only its reader is missing here (e.g. ncu-report)
            note = f"facts not read: {exc.code}: {exc.message}"[:4000]
            return done("captured", None, note, artifacts=artifacts, facts=None)
        except GpuoptError as exc:
            return done("failed", exc.code, exc.message[:4000])
        return done("captured", None, None, artifacts=artifacts, facts=facts)

    def _freeze(self, path: Path, tool: str) -> CaptureArtifact:
        frozen = self.store.freeze(path, exclude=[], limits=BUNDLE_LIMITS)
        entry = next(e for e in self.store.manifest(frozen.digest).entries if isinstance(e, FileEntry))
        kind = "kineto-trace" if tool == "torch" else KINDS.get(path.suffix, "nsys-rep")
        return CaptureArtifact.model_validate(
            {
                "kind": kind,
                "name": path.name,
                "object": frozen.digest,
                "sha256": entry.sha256,
                "size_bytes": frozen.total_bytes,
            }
        )


def _blob_rel(sha256: str) -> str:
    return f"objects/blobs/{sha256[:2]}/{sha256}"


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


class CaptureHandler:
    """``capture``: no statistics; the verdict says whether every planned capture was taken."""

    result_model = CaptureResult
    worker_class = CaptureWorker

    def verdict(self, spec: ExecutionSpec, execution: Execution) -> str:
        if execution.correctness_failed:
            return "failed"
        records = execution.analysis.get(CAPTURES, [])
        complete = len(records) == len(spec.evidence_plan) and all(r.status == "captured" for r in records)
        return "passed" if complete and execution.validity == "valid" else "not_evaluated"

    def extra_fields(self, spec: ExecutionSpec, execution: Execution) -> dict[str, Any]:
        return {"capture": frozen_settings(spec), "captures": execution.analysis.get(CAPTURES, [])}
