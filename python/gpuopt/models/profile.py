"""Documents of ``gpuopt profile diff``: per-key comparison of k captures per side."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData

ProfileKind = Literal["nsys", "torch", "ncu"]
Dimension = Literal["kernel", "op", "nvtx", "memcpy"]
Pairing = Literal["paired", "unpaired", "none"]

#: What a diff with one capture per side says instead of a CI.
NO_UNCERTAINTY = "one capture per side: no uncertainty"


class CaptureFacts(Model):
    """One capture as the diff read it: where it came from and what it was made with."""

    path: str = Field(description="The capture file")
    kind: ProfileKind = Field(description="nsys, torch or ncu")
    gpus: list[str] = Field(description="GPU model names the capture records (empty: not recorded)")
    driver: str | None = Field(description="CUDA driver version the capture records")
    tool: str | None = Field(description="Profiler and version, e.g. 'nsys 2025.3.2.0'")
    options: dict[str, str] = Field(description="Capture options the capture records")
    keys: int = Field(description="Distinct keys of the chosen dimension")
    events: int = Field(description="Instances over every key of the chosen dimension")
    total_ns: int = Field(description="Time over every key of the chosen dimension")
    marker_count: int | None = Field(description="Instances of the --marker NVTX range (null: not asked)")
    work_key_count: int = Field(description="Instances of the work key (see Comparability.work_key)")


class ComparabilityFact(Model):
    """One fact on both sides; ``same`` is False when any capture differs from the others."""

    name: str = Field(description="What is compared (GPU, driver, tool version, ...)")
    baseline: list[str | None] = Field(description="Its value in each baseline capture")
    candidate: list[str | None] = Field(description="Its value in each candidate capture")
    same: bool = Field(description="True when every capture agrees")


class Comparability(Model):
    facts: list[ComparabilityFact] = Field(
        description="Facts that must agree for the captures to be comparable"
    )
    work_key: str | None = Field(
        description="The key whose instance count measures the amount of work: the --marker range, "
        "else the most frequent key of the baseline"
    )
    work_baseline: list[int] = Field(description="Its instances per baseline capture")
    work_candidate: list[int] = Field(description="Its instances per candidate capture")


class DiffWarning(Model):
    code: str = Field(description="Stable warning code (no_uncertainty, ...)")
    message: str = Field(description="What it means, for people")


class DiffMethod(Model):
    pairing: Pairing = Field(description="paired (--paired), unpaired, or none (one capture on a side)")
    uncertainty: str = Field(description="How the CIs were made, or 'one capture per side: no uncertainty'")
    confidence: float = Field(description="Confidence level of the CIs")
    resamples: int = Field(description="Bootstrap resamples")
    seed: int = Field(description="Seed of the bootstrap streams")
    fdr: float = Field(description="The declared false-discovery rate of the flags (Benjamini-Hochberg)")
    min_effect_pct: float = Field(description="|change_pct| a key needs to be flagged (%)")
    multiple_comparisons: str = Field(description="The correction over keys, in words")


class DiffCounts(Model):
    keys: int = Field(description="Keys compared")
    both: int = Field(description="Keys present on both sides")
    new: int = Field(description="Keys present in candidate captures only")
    vanished: int = Field(description="Keys present in baseline captures only")
    tested: int = Field(description="Keys with a p-value (k ≥ 2 per side)")
    flagged: int = Field(description="Keys with q ≤ fdr and |change| ≥ the minimum effect")


class ProfileDiffData(Model):
    """``gpuopt profile diff``: comparability, method, counts and one row per key."""

    kind: ProfileKind = Field(description="nsys, torch or ncu")
    by: Dimension = Field(description="The key: kernel, op, nvtx or memcpy")
    k_baseline: int = Field(description="Baseline captures")
    k_candidate: int = Field(description="Candidate captures")
    baseline: list[CaptureFacts] = Field(description="The baseline captures read")
    candidate: list[CaptureFacts] = Field(description="The candidate captures read")
    comparability: Comparability = Field(description="Whether the captures are comparable")
    method: DiffMethod = Field(description="How changes were judged")
    counts: DiffCounts = Field(description="Keys compared, flagged, ...")
    warnings: list[DiffWarning] = Field(description="Warnings about the captures or the result")
    table: TableData = Field(description="Per key (gpuopt schema profile.keys)")
    citation: str | None = Field(
        default=None,
        description="With --cite: the id of the citation record (citations/<invocation>/<id>.json)",
    )
