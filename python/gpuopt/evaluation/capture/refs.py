"""Capture records as ``gpuopt profile diff`` inputs: ``cap:INVOCATION/VARIANT[/CASE]`` names the captures
of one variant (and case) of one capture invocation, oldest repeat first, as the paths of their frozen blobs
(re-verified against their sha256 before use). Every capture named must have been captured: one voided or
failed is ``capture_voided`` (name a case to leave it out). Captures taken before an invocation stopped stay
usable."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuopt.errors import InputError
from gpuopt.evaluation.records import read_result
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.capture import CaptureRecord, CaptureResult
from gpuopt.provenance import file_sha256

PREFIX = "cap:"
DIFF_KIND = {"nsys-sqlite": 0, "ncu-rep": 1, "kineto-trace": 2}
"""The artifact a diff reads of each capture (nsys: the SQLite export, not the .nsys-rep)."""


@dataclass(frozen=True)
class Resolved:
    """One capture as a diff input: its frozen file and where it came from."""

    path: Path
    invocation_id: str
    repeat: int
    case_id: str
    variant: str


def is_ref(text: str) -> bool:
    return text.startswith(PREFIX)


def _parse(text: str) -> tuple[str, str | None, str | None]:
    parts = text[len(PREFIX) :].split("/")
    if not parts[0] or len(parts) > 3 or any(not p for p in parts):
        raise InputError(
            "capture_ref_invalid",
            f"{text} is not a capture reference",
            expected="cap:INVOCATION[/VARIANT[/CASE]]",
            observed=text,
        )
    return parts[0], parts[1] if len(parts) > 1 else None, parts[2] if len(parts) > 2 else None


def _file(store: Store, record: CaptureRecord, text: str) -> Path:
    art = next((a for a in record.artifacts if a.kind in DIFF_KIND), None)
    if art is None:
        raise InputError("capture_artifact_missing", f"{text}: capture {record.index} has no artifact")
    path = store.path(f"objects/blobs/{art.sha256[:2]}/{art.sha256}")
    if not path.is_file() or file_sha256(path) != art.sha256:
        raise InputError(
            "object_corrupt",
            f"{text}: the frozen artifact of capture {record.index} is missing or changed",
            path=str(path),
            expected=art.sha256,
        )
    return path


def resolve(text: str, root: str | Path) -> list[Resolved]:
    """The captured captures ``text`` names, in plan order (typed errors for unknown, voided or empty)."""
    inv_id, variant, case = _parse(text)
    store = Store.open(root)
    found = read_result(store, inv_id)
    if found is None or not isinstance(found[0], CaptureResult):
        raise InputError(
            "capture_not_found",
            f"{text}: {inv_id} has no capture result in {store.root}",
            path=inv_id,
            expected="a completed gpuopt capture invocation",
        )
    result = found[0]
    variants = sorted({c.variant for c in result.captures})
    if variant is None:
        if len(variants) != 1:
            raise InputError(
                "capture_ref_ambiguous",
                f"{text}: the capture holds variants {', '.join(variants)}; name one",
                expected=f"cap:{inv_id}/VARIANT",
            )
        variant = variants[0]
    mine = [c for c in result.captures if c.variant == variant and (case is None or c.case_id == case)]
    if not mine:
        raise InputError(
            "capture_not_found",
            f"{text}: no capture of variant {variant}" + (f" on case {case}" if case else ""),
            expected=", ".join(variants),
            observed=variant,
        )
    voided = [c for c in mine if c.status != "captured"]
    if voided:
        first = voided[0]
        raise InputError(
            "capture_voided",
            f"{text}: capture {first.index} is {first.status} ({first.reason}); "
            "a diff reads only valid captures",
            observed=first.reason,
        )
    return [Resolved(_file(store, c, text), inv_id, c.repeat, c.case_id, variant) for c in mine]


def paired(baseline: list[Resolved], candidate: list[Resolved]) -> bool:
    """True when both sides come from one capture invocation and match repeat by repeat and case by case
    (captures interleaved in pairs, with the same inputs)."""
    if not baseline or len(baseline) != len(candidate):
        return False
    return all(
        b.invocation_id == c.invocation_id and b.repeat == c.repeat and b.case_id == c.case_id
        for b, c in zip(baseline, candidate, strict=True)
    )
