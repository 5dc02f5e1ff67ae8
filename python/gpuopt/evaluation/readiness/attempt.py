"""A readiness attempt's private work area (kept on failure for debugging), the storage probe and the
2-sample smoke call through a probe supervisor tied to this process."""

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
from gpuopt.errors import GpuoptError, InputError
from gpuopt.evaluation import formats, jsonio
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.execution import ExecutionSpec
from gpuopt.evaluation.readiness.validate import (
    WORK_DIR,
)
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import Violation
from gpuopt.models.evaluation.invocation import InvocationResult
from gpuopt.models.evaluation.readiness import DiagnosticRequest, ReadinessFailure, ReadinessRequest
from gpuopt.models.evaluation.target import StorageCheck

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
                candidate.mkdir(mode=0o700)
                break
            except FileExistsError:
                n += 1
        self.dir = candidate
        self.root = candidate / "root"
        self.root.mkdir()
        self.name = candidate.name
        self.calls = 0

    def write_json(self, name: str, value: Any) -> None:
        write_private(self.dir, name, value)

    def keep_failure(self, exc: GpuoptError, *, stop_reason: str | None, violations: list[Violation]) -> None:
        """Drops the frozen objects, keeps everything else and writes ``error.json``."""
        objects = self.root / "objects"
        if objects.exists():
            chmod_tree(objects)
            shutil.rmtree(objects, ignore_errors=True)
        kept = sorted(str(p.relative_to(self.dir)) for p in self.dir.rglob("*") if p.is_file())
        failure = ReadinessFailure(
            format=formats.READINESS_FAILURE,
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
        chmod_tree(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.dir.parent.rmdir()


def write_private(folder: Path, name: str, value: Any) -> None:
    """A record of the work area, readable by its owner only (0600): the request, the observed identity,
    the smoke's spec and the failure hold the driver declaration and what its environment looked like."""
    Store(folder).replace_bytes(name, jsonio.record_bytes(value), mode=0o600)


def chmod_tree(path: Path) -> None:
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            p = Path(dirpath) / name
            if not p.is_symlink():
                p.chmod(0o700)


def storage_probe(parent: Path) -> list[StorageCheck]:
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


def resolve(cwd: Path, path: str) -> Path:
    return Path(os.path.abspath(cwd / path))


def lineage(req: ReadinessRequest | DiagnosticRequest, cwd: Path) -> dict[str, Any]:
    if req.lineage is None:
        return {"parent": None, "reason": None}
    parent = Store.open(resolve(cwd, req.lineage.parent_root))
    _, ref = targets.load(parent, req.lineage.parent)
    return {"parent": ref.model_dump(), "reason": req.lineage.reason}


# ---- the smoke ---------------------------------------------------------------------------------------------


def run_probe(attempt: Attempt, spec: ExecutionSpec) -> InvocationResult | None:
    smoke = attempt.dir / "smoke"
    smoke.mkdir()
    write_private(smoke, "spec.json", spec)
    read_end, write_end = os.pipe()
    try:
        fd = os.open(smoke / "supervisor.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "ab") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gpuopt.evaluation.detached",
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


def smoke_error(result: InvocationResult | None) -> tuple[InputError, list[Violation]] | None:
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
