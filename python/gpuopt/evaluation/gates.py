"""The gates of a driver call's result (spec §4.4): the output bundle, the echoed request, the
measurements, the contract, the correctness rules, and the sample rows of a validated result."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.models.evaluation.common import Violation
from gpuopt.models.evaluation.driver import (
    DriverRequest,
    DriverResult,
    SubjectResult,
)
from gpuopt.models.evaluation.invocation import CorrectnessReceipt, RuleOutcome
from gpuopt.models.evaluation.store import FileEntry, TreeManifest
from gpuopt.models.evaluation.target import AccuracyRule, MetricDeclaration

# ---- result gates ------------------------------------------------------------------------------------------


def _v(
    code: str, path: str | None = None, expected: Any = None, observed: Any = None, message: str | None = None
) -> Violation:
    def text(x: Any) -> str | None:
        if x is None:
            return None
        return x if isinstance(x, str) else jsonio.canonical(x).decode()[:1000]

    return Violation(code=code, path=path, expected=text(expected), observed=text(observed), message=message)


def _safe_member(path: str) -> bool:
    parts = path.split("/")
    return not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def check_bundle(result: DriverResult, manifest: TreeManifest) -> list[Violation]:
    """Members other than ``result.json``, declared artifacts and their folders; artifact hashes."""
    out = []
    files = {e.path: e for e in manifest.entries if isinstance(e, FileEntry)}
    allowed = {"result.json"}
    seen = set()
    for index, art in enumerate(result.artifacts):
        where = f"artifacts[{index}].path"
        if not _safe_member(art.path) or art.path == "result.json" or art.path in seen:
            out.append(
                _v(
                    "bundle_artifact_mismatch",
                    where,
                    "a unique relative path other than result.json",
                    art.path,
                )
            )
            continue
        seen.add(art.path)
        allowed.add(art.path)
        parts = art.path.split("/")
        allowed.update("/".join(parts[:i]) for i in range(1, len(parts)))
        found = files.get(art.path)
        actual = None if found is None else found.sha256
        if actual != art.sha256:
            out.append(
                _v("bundle_artifact_mismatch", f"artifacts[{index}].sha256", art.sha256, actual or "absent")
            )
    for entry in manifest.entries:
        if entry.path not in allowed:
            out.append(
                _v("bundle_undeclared_member", entry.path, "result.json and declared artifacts", entry.path)
            )
    return out


def _check_echoes(request: DriverRequest, result: DriverResult) -> list[Violation]:
    out = []
    if result.request_digest != request.request_digest:
        out.append(_v("echo_mismatch", "request_digest", request.request_digest, result.request_digest))
    if result.call_index != request.call_index:
        out.append(_v("echo_mismatch", "call_index", request.call_index, result.call_index))
    if result.case_id != request.case.id:
        out.append(_v("echo_mismatch", "case_id", request.case.id, result.case_id))
    expected_subjects = [[s.role, s.digest] for s in request.subjects]
    observed_subjects = [[s.role, s.digest] for s in result.subjects]
    if expected_subjects != observed_subjects:
        out.append(_v("subject_mismatch", "subjects", expected_subjects, observed_subjects))
    if result.cleanup.status != "confirmed" or result.cleanup.live_tasks:
        expected_cleanup = {"status": "confirmed", "live_tasks": []}
        out.append(_v("driver_cleanup_unconfirmed", "cleanup", expected_cleanup, result.cleanup.model_dump()))
    return out


def _check_measurements(
    request: DriverRequest, subject: SubjectResult, base: str, metrics: Mapping[str, MetricDeclaration]
) -> list[Violation]:
    out = []
    wanted = sorted(request.metrics)
    got = sorted(subject.measurements)
    if got != wanted:
        out.append(_v("metric_set_mismatch", f"{base}.measurements", wanted, got))
    for name in wanted:
        m = subject.measurements.get(name)
        if m is None:
            continue
        where = f"{base}.measurements.{name}"
        if m.unit != request.metrics[name].unit:
            out.append(_v("unit_mismatch", f"{where}.unit", request.metrics[name].unit, m.unit))
        count = request.sampling.samples_per_call[name]
        if len(m.samples) != count:
            out.append(_v("sample_count_mismatch", f"{where}.samples", str(count), str(len(m.samples))))
        zero_ok = metrics[name].zero_allowed if name in metrics else False
        for k, value in enumerate(m.samples):
            if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
                expected = ">= 0" if zero_ok else "> 0"
                out.append(_v("nonpositive_metric_value", f"{where}.samples[{k}]", expected, repr(value)))
                break
    return out


def check_contract(
    request: DriverRequest,
    result: DriverResult,
    metrics: Mapping[str, MetricDeclaration],
    window: tuple[int, int],
) -> list[Violation]:
    """Echoes, subjects, cleanup, metric set, units, sample counts, values, correctness metrics, windows."""
    out = _check_echoes(request, result)
    for i, subject in enumerate(result.subjects):
        base = f"subjects[{i}]"
        out += _check_measurements(request, subject, base, metrics)
        for name in request.correctness_metrics:
            if name not in subject.correctness.metrics:
                out.append(
                    _v("correctness_metric_missing", f"{base}.correctness.metrics.{name}", name, "absent")
                )
        w = subject.window
        if w is not None and not (window[0] <= w.start_mono_ns <= w.end_mono_ns <= window[1]):
            inside = f"inside the call window {window[0]}..{window[1]}"
            out.append(_v("window_invalid", f"{base}.window", inside, f"{w.start_mono_ns}..{w.end_mono_ns}"))
    return out


def parse_result(data: bytes | None) -> tuple[DriverResult | None, list[Violation]]:
    """Strict parse of ``result.json``: JSON errors and schema errors become violations with paths."""
    from pydantic import ValidationError

    if data is None:
        return None, [
            _v("result_missing", "result.json", "output/result.json written by the driver", "absent")
        ]
    try:
        value = jsonio.parse(data, max_bytes=jsonio.MAX_DRIVER_RESULT_BYTES, what="driver result")
    except InputError as exc:
        return None, [_v(exc.code, exc.path, exc.expected, exc.observed, exc.message)]
    try:
        return DriverResult.model_validate(value), []
    except ValidationError as exc:
        return None, [
            _v(v["code"], v["path"], None, v["observed"] or None, v["message"])
            for v in jsonio.violations_of(exc)
        ]


def rule_applies(rule: AccuracyRule, case_id: str) -> bool:
    return rule.cases == "all" or case_id in rule.cases


def evaluate_rule(rule: AccuracyRule, metrics: Mapping[str, float]) -> RuleOutcome:
    observed = metrics.get(rule.metric)
    if observed is None:
        passed = False
    elif rule.op == "ge":
        passed = observed >= rule.value
    elif rule.op == "le":
        passed = observed <= rule.value
    else:
        passed = observed == rule.value
    return RuleOutcome(metric=rule.metric, op=rule.op, value=rule.value, observed=observed, passed=passed)


def correctness_receipts(
    request: DriverRequest,
    result: DriverResult,
    rules: list[AccuracyRule],
    *,
    gates: list[AccuracyRule] | None = None,
    diagnostics: list[str] | None = None,
) -> list[CorrectnessReceipt]:
    """Per subject: passes iff every applicable rule holds and the driver said ``passed`` (spec §4.4.5)."""
    out = []
    for subject in result.subjects:
        metrics = subject.correctness.metrics
        outcomes = [evaluate_rule(r, metrics) for r in rules if rule_applies(r, request.case.id)]
        is_candidate = subject.role == "candidate"
        gate_outcomes = [evaluate_rule(g, metrics) for g in (gates or [])] if is_candidate else []
        rules_hold = all(o.passed for o in outcomes) and all(o.passed for o in gate_outcomes)
        driver_passed = subject.correctness.status == "passed"
        kept = {n: metrics[n] for n in (diagnostics or []) if is_candidate and n in metrics}
        out.append(
            CorrectnessReceipt(
                call_index=request.call_index,
                role=subject.role,
                digest=subject.digest,
                case_id=request.case.id,
                passed=rules_hold and driver_passed,
                driver_status=subject.correctness.status,
                status_consistent=rules_hold == driver_passed,
                rules=outcomes,
                gates=gate_outcomes,
                diagnostics=kept,
            )
        )
    return out


BlobReader = Callable[[str], bytes]


def read_bundle_result(manifest: TreeManifest, read_blob: BlobReader) -> bytes | None:
    """The frozen ``result.json`` of a bundle (read from its blob, never from the driver's folder)."""
    for entry in manifest.entries:
        if entry.path == "result.json" and entry.kind == "file":
            if entry.size_bytes > jsonio.MAX_DRIVER_RESULT_BYTES:
                return b" " * (jsonio.MAX_DRIVER_RESULT_BYTES + 1)
            return read_blob(entry.sha256)
    return None


def sample_rows(request: DriverRequest, result: DriverResult, *, call_index: int) -> list[dict[str, Any]]:
    """Raw samples as rows of ``samples.parquet``."""
    rows = []
    pair = request.pair
    for subject in result.subjects:
        for metric, m in subject.measurements.items():
            for index, value in enumerate(m.samples):
                rows.append(
                    {
                        "call": call_index,
                        "pair": None if pair is None else pair.index,
                        "case": request.case.id,
                        "order": None if pair is None else pair.order,
                        "role": subject.role,
                        "digest": subject.digest,
                        "metric": metric,
                        "index": index,
                        "value": float(value),
                        "unit": m.unit,
                    }
                )
    return rows
