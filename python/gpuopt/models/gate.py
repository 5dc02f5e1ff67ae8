"""What the ``gpuopt gate`` commands return (the records themselves are in
:mod:`gpuopt.models.evaluation.gate`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.gate import GateBaseline, GateName, GateOutcome, GateReason, GateResult

EXIT_CODES: dict[str, int] = {
    "pass": 0,
    "improvement": 0,
    "regression": 10,
    "identity_mismatch": 11,
    "inconclusive": 12,
    "invalid": 13,
    "correctness_failed": 14,
}
"""``gpuopt gate check`` exits with the code of its outcome (``--inconclusive pass`` makes inconclusive 0).
They lie above the global contract's 0 ok, 1 internal, 2 bad input and 3 absent tool or GPU, which keep
their meaning: a check that could not run at all exits 2 or 3 with an error envelope."""


class RuntimeDifference(Model):
    """One runtime fact that differs between the baseline and now."""

    name: str = Field(description="The fact, e.g. nvidia.driver_version or reported.frameworks.torch")
    baseline: str | None = Field(description="Its value when the baseline was saved (JSON text)")
    current: str | None = Field(description="Its value now (JSON text)")


class SavedBaseline(Model):
    """A name and the baseline record it points at, with what it holds."""

    name: str = Field(description="The name pointing at the baseline (gates/names/<name>.json)")
    baseline: RecordRef = Field(description="The record (gates/baselines/<id>.json) and its sha256")
    saved_at_epoch: float = Field(description="When the name was set to this record")
    target_id: str = Field(description="The Target the baseline was measured under")
    kind: Literal["samples", "captures", "samples+captures"] = Field(description="What it holds")
    variant_digest: str | None = Field(description="Samples: the variant measured")
    calls: int = Field(description="Samples: saved calls")
    sessions: int = Field(description="Samples: source invocations (blocks of an unpaired comparison)")
    captures: int = Field(description="Captures saved")


class GateSaveData(Model):
    saved: SavedBaseline = Field(description="The name and its baseline")
    created: bool = Field(description="False when the identical record already existed")
    previous: RecordRef | None = Field(description="The baseline the name pointed at before (--replace)")
    summary: list[str] = Field(description="One line per fact shown to a person")


class GateListData(Model):
    root: str = Field(description="The artifact root")
    baselines: list[SavedBaseline] = Field(description="Every name, in name order")


class GateShowData(Model):
    name: GateName = Field(description="The name's file")
    baseline: GateBaseline = Field(description="The record, verified against the name's sha256")
    objects_present: bool = Field(
        description="Whether every tree the record names is in this root (the variant's tree makes a "
        "paired check possible)"
    )


class GateDeleteData(Model):
    name: str = Field(description="The name removed")
    baseline: RecordRef = Field(description="The record it pointed at")
    record_removed: bool = Field(
        description="The record file was removed too (no other name pointed at it); frozen trees stay"
    )


class GateBundleEntry(Model):
    """One member of a bundle file (a POSIX tar)."""

    path: str = Field(description="Member path: baseline.json, objects/trees/<digest>.json, objects/blobs/..")
    sha256: str = Field(description="SHA-256 of the member's bytes")
    size_bytes: int = Field(description="Size of the member (bytes)")


class GateBundle(Model):
    """``bundle.json``, the first member of a bundle: what the other members are."""

    format: Literal["gpuopt.gate-bundle/v1"] = Field(description="The bundle format")
    name: str = Field(description="The name it was exported under")
    baseline: RecordRef = Field(description="The baseline record (member baseline.json)")
    target: RecordRef = Field(description="The Target the baseline is bound to")
    members: list[GateBundleEntry] = Field(description="Every other member, in order")


class GateTransferData(Model):
    """``gate export`` and ``gate import``."""

    name: str = Field(description="The baseline's name (on import, the name it was stored under)")
    file: str = Field(description="The bundle file")
    file_sha256: str = Field(description="SHA-256 of the bundle file")
    size_bytes: int = Field(description="Size of the bundle file (bytes)")
    baseline: RecordRef = Field(description="The baseline record")
    objects: int = Field(description="Frozen trees carried (the variant's tree, the captures)")
    blobs: int = Field(description="Blobs carried")
    created: bool | None = Field(description="Import: False when the root already held the record")


class GateAttempt(Model):
    """One gate invocation of this check (the first, then each retry of an invalid measurement)."""

    invocation_id: str = Field(description="The gate invocation of this attempt")
    result: ResultRef | None = Field(description="Its result, when it completed")
    deduplicated: bool = Field(description="An identical earlier request's result was returned")
    execution_status: str | None = Field(description="succeeded, failed, ...")
    measurement_validity: str | None = Field(description="valid or invalid")
    stop_reason: str | None = Field(description="completed, contaminated, identity_changed, ...")
    elapsed_s: float | None = Field(description="Its wall time (s)")
    contamination_checked: bool | None = Field(description="The resource sampler ran over the calls")
    contaminated_pairs: int | None = Field(description="Pairs (unpaired: calls) a contamination rule voided")
    contamination_by_rule: dict[str, int] = Field(description="Voided pairs (or calls) per rule id")


class KeyFlag(Model):
    """A profile key a per-key gate flagged (q ≤ fdr and |change| ≥ the minimum effect)."""

    key: str = Field(description="Kernel, op or NVTX range")
    status: str = Field(description="both, new or vanished")
    change_pct: float | None = Field(description="100·(candidate mean / baseline mean - 1)")
    ci_low_pct: float | None = Field(description="Lower end of its interval (%)")
    ci_high_pct: float | None = Field(description="Upper end of its interval (%)")
    q_value: float | None = Field(description="Benjamini-Hochberg q-value")
    direction: Literal["slower", "faster"] = Field(description="slower: more time in the candidate")


class CaptureGate(Model):
    """The captures compared (``gpuopt profile diff``): totals and, with --keys, per-key gates."""

    kind: str = Field(description="nsys, torch or ncu")
    by: str = Field(description="The key dimension")
    k_baseline: int = Field(description="Baseline captures")
    k_candidate: int = Field(description="Current captures")
    fdr: float = Field(description="False-discovery rate of the key flags")
    total_name: str | None = Field(description="The total judged (kernel time, or per step)")
    total_change_pct: float | None = Field(
        description="Change of the total judged, current against baseline (%, > 0 = more time: worse)"
    )
    total_ci_low_pct: float | None = Field(description="Lower end of its interval (%, level 1 - fdr)")
    total_ci_high_pct: float | None = Field(description="Upper end (%)")
    tested: int = Field(description="Keys tested")
    flagged: list[KeyFlag] = Field(description="Flagged keys (per-key gates only)")
    key_gates: bool = Field(description="Per-key gates applied (--keys)")
    warnings: list[str] = Field(description="Warning codes of the diff")
    outcome: GateOutcome = Field(description="What the captures alone decided")


class GateOutputs(Model):
    markdown: str | None = Field(description="The Markdown summary written (--markdown)")
    step_summary: str | None = Field(description="$GITHUB_STEP_SUMMARY, when set and appended to")
    junit: str | None = Field(description="The JUnit XML written (--junit)")


class GateCheckData(Model):
    """``gpuopt gate check``: the outcome, its exit code, and every record it used."""

    outcome: GateOutcome = Field(description="pass, improvement, regression, inconclusive, invalid, ...")
    exit_code: int = Field(description="The exit status this outcome maps to (references/gate.md)")
    reasons: list[GateReason] = Field(description="Why, one fact per line")
    root: str = Field(description="The artifact root")
    target: RecordRef = Field(description="The root's Target the check ran under")
    against: Literal["baseline", "champion"] = Field(description="What the current code was compared with")
    baseline_name: str | None = Field(
        description="The saved baseline's name checked against; null against the Champion"
    )
    baseline: RecordRef | None = Field(description="The baseline record used")
    champion: RecordRef | None = Field(description="Against the Champion: its selection (null: original)")
    mode: Literal["paired", "unpaired", "captures", "not_run"] = Field(
        description="How the samples were compared (captures: captures only; not_run: refused before any "
        "measurement, e.g. an identity mismatch)"
    )
    candidate_digest: str | None = Field(description="The current code, frozen into the store")
    identity_differences: list[RuntimeDifference] = Field(
        description="Runtime facts that differ from the baseline's (any: identity_mismatch)"
    )
    attempts: list[GateAttempt] = Field(description="The gate invocations, first to last")
    retry_budget: int = Field(description="Retries allowed after a contaminated measurement")
    result: GateResult | None = Field(description="The last attempt's result")
    captures: CaptureGate | None = Field(description="The capture comparison, when captures were given")
    outputs: GateOutputs = Field(description="Files written")
    summary: list[str] = Field(description="One line per fact shown to a person")
