"""Capture baselines: profiler captures frozen into the store, and the check that compares current captures
with them through ``gpuopt profile diff`` (k captures a side, t intervals, Benjamini-Hochberg).

The whole of the captured GPU time (per step when steps are known) decides by the minimum effect m, on its
change in percent (more time = worse) and its interval at level 1 - fdr: a regression when the interval
lies at or above +m, an improvement when it lies at or below the speedup of m (100·(1/(1 + m/100) - 1)), a
pass when it stays below +m, inconclusive otherwise (and with one capture a side: no interval). Per-key
gates (``keys``) add: a key flagged slower (q ≤ fdr and change ≥ m) is a regression. Captures that differ
in GPU model, driver or profiler are an identity mismatch; in capture options or CUDA-graph trace mode,
not comparable (invalid).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from gpuopt._profile_sources import detect_kind
from gpuopt.errors import InputError
from gpuopt.evaluation.capture import refs
from gpuopt.evaluation.gate import judge
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.gate import BaselineCapture, BaselineCaptures, GateOutcome, GateReason
from gpuopt.models.evaluation.store import ScanLimits
from gpuopt.models.gate import CaptureGate, KeyFlag, RuntimeDifference
from gpuopt.models.profile import Dimension
from gpuopt.profile import diff_files
from gpuopt.provenance import file_sha256

IDENTITY_FACTS = ("gpu", "driver", "tool")
SETTINGS_FACTS = ("capture_options", "cuda_graph_trace")


def _inputs(given: list[str], root: Path) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    for text in given:
        if refs.is_ref(text):
            for found in refs.resolve(text, root):
                label = f"cap:{found.invocation_id}/{found.variant}/{found.case_id}#{found.repeat}"
                out.append((label, found.path))
        else:
            path = Path(text)
            if not path.is_file():
                raise InputError("file_not_found", f"no capture file {text}", path=text)
            out.append((text, path))
    return out


def freeze(store: Store, given: list[str]) -> BaselineCaptures:
    """Freezes each capture (a file, or every capture a ``cap:`` reference names) as a one-file object."""
    files = []
    for label, path in _inputs(given, store.root):
        frozen = store.freeze(path, exclude=[], limits=ScanLimits())
        manifest = store.manifest(frozen.digest)
        entry = next(e for e in manifest.entries if e.kind == "file")
        files.append(
            BaselineCapture(
                name=label,
                kind=detect_kind(path),
                object=frozen.digest,
                file=entry.path,
                sha256=file_sha256(path),
                size_bytes=frozen.total_bytes,
            )
        )
    kinds = sorted({f.kind for f in files})
    if len(kinds) != 1:
        raise InputError(
            "profile_kinds_mixed",
            "a capture baseline holds captures of one kind",
            expected="one of nsys, torch, ncu",
            observed=", ".join(kinds),
        )
    return BaselineCaptures(kind=files[0].kind, files=files)


def _materialize(store: Store, saved: BaselineCaptures, into: Path) -> list[Path]:
    out = []
    for i, f in enumerate(saved.files):
        dest = into / f"b{i}"
        store.materialize(f.object, dest)
        out.append(dest / f.file if dest.is_dir() else dest)
    return out


def _total(data: Any) -> Any:
    per_step = [t for t in data.totals if "per step" in t.name]
    return (per_step or data.totals or [None])[0]


def _total_outcome(total: Any, m: float) -> tuple[GateOutcome, GateReason]:
    if total is None or total.ci_low_pct is None or total.ci_high_pct is None:
        return "inconclusive", judge.reason(
            "no_uncertainty",
            "the captures give no interval of the total (a CI needs 2 captures a side)",
            "inconclusive",
        )
    low, high = total.ci_low_pct, total.ci_high_pct
    text = (
        f"{total.name}: change {total.change_pct:+.2f} % [{low:+.2f}, {high:+.2f}] "
        f"(level {total.ci_level:g}; > 0 = more time; minimum effect {m:g} %)"
    )
    speedup = judge.regression_bound_pct(m, False)
    if (m > 0 and low >= m) or (m == 0 and low > 0):
        return "regression", judge.reason("total_regressed", text, "regression")
    if (m > 0 and high <= speedup) or (m == 0 and high < 0):
        return "improvement", judge.reason("total_improved", text, "improvement")
    if m > 0 and high < m:
        return "pass", judge.reason("total_non_inferior", text, "pass")
    return "inconclusive", judge.reason("total_ci_reaches_minimum", text, "inconclusive")


def _flags(table: Any) -> list[KeyFlag]:
    out = []
    for row in table.filter(table["flagged"]).iter_rows(named=True):
        change = row.get("change_ns") or 0.0
        out.append(
            KeyFlag(
                key=str(row["key"]),
                status=str(row["status"]),
                change_pct=row.get("change_pct"),
                ci_low_pct=row.get("ci_low_pct"),
                ci_high_pct=row.get("ci_high_pct"),
                q_value=row.get("q_value"),
                direction="slower" if change > 0 else "faster",
            )
        )
    return out


def check(
    store: Store,
    saved: BaselineCaptures,
    current: list[str],
    *,
    m: float,
    keys: Dimension | None,
    fdr: float,
    marker: str | None,
) -> tuple[CaptureGate, list[GateReason], list[RuntimeDifference]]:
    """The captures' outcome, its reasons and the identity facts that differ."""
    given = _inputs(current, store.root)
    with tempfile.TemporaryDirectory(prefix="gpuopt-gate-") as tmp:
        base = _materialize(store, saved, Path(tmp))
        data = diff_files(
            base,
            [p for _, p in given],
            by=keys or "kernel",
            fdr=fdr,
            min_effect=m,
            marker=marker,
        )
    differences = [
        RuntimeDifference(
            name=f"capture.{f.name}",
            baseline=", ".join(map(str, f.baseline)),
            current=", ".join(map(str, f.candidate)),
        )
        for f in data.comparability.facts
        if not f.same and f.name in IDENTITY_FACTS
    ]
    unlike = [f.name for f in data.comparability.facts if not f.same and f.name in SETTINGS_FACTS]
    total = _total(data)
    outcome, why = _total_outcome(total, m)
    outcomes: list[GateOutcome] = [outcome]
    reasons = [why]
    flags = _flags(data.table) if keys is not None else []
    slower = [f for f in flags if f.direction == "slower"]
    if keys is not None:
        outcomes.append("regression" if slower else "pass")
        reasons.append(
            judge.reason(
                "keys_regressed" if slower else "keys_clear",
                f"{len(slower)} of {data.counts.tested} {data.by} keys flagged slower at FDR {fdr:g} "
                f"(minimum effect {m:g} %)"
                + (": " + ", ".join(f.key for f in slower[:10]) if slower else ""),
                "regression" if slower else "pass",
            )
        )
    if differences:
        outcomes.append("identity_mismatch")
        reasons.append(
            judge.reason(
                "identity_mismatch",
                "the captures differ in " + ", ".join(d.name for d in differences),
                "identity_mismatch",
            )
        )
    if unlike:
        outcomes.append("invalid")
        reasons.append(
            judge.reason("captures_not_comparable", "the captures differ in " + ", ".join(unlike), "invalid")
        )
    final = judge.combine(outcomes)
    gate = CaptureGate(
        kind=data.kind,
        by=data.by,
        k_baseline=len(data.baseline),
        k_candidate=len(data.candidate),
        fdr=fdr,
        total_name=None if total is None else total.name,
        total_change_pct=None if total is None else total.change_pct,
        total_ci_low_pct=None if total is None else total.ci_low_pct,
        total_ci_high_pct=None if total is None else total.ci_high_pct,
        tested=data.counts.tested,
        flagged=flags,
        key_gates=keys is not None,
        warnings=[w.code for w in data.warnings],
        outcome=final,
    )
    return gate, reasons, differences
