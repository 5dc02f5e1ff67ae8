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

    path: str
    kind: ProfileKind
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

    name: str
    baseline: list[str | None]
    candidate: list[str | None]
    same: bool


class Comparability(Model):
    facts: list[ComparabilityFact]
    work_key: str | None = Field(
        description="The key whose instance count measures the amount of work: the --marker range, "
        "else the most frequent key of the baseline"
    )
    work_baseline: list[int] = Field(description="Its instances per baseline capture")
    work_candidate: list[int] = Field(description="Its instances per candidate capture")


class DiffWarning(Model):
    code: str
    message: str


class DiffMethod(Model):
    pairing: Pairing
    uncertainty: str = Field(description="How the CIs were made, or 'one capture per side: no uncertainty'")
    confidence: float
    resamples: int
    seed: int
    fdr: float = Field(description="The declared false-discovery rate of the flags (Benjamini-Hochberg)")
    min_effect_pct: float
    multiple_comparisons: str = Field(description="The correction over keys, in words")


class DiffCounts(Model):
    keys: int
    both: int = Field(description="Keys present on both sides")
    new: int = Field(description="Keys present in candidate captures only")
    vanished: int = Field(description="Keys present in baseline captures only")
    tested: int = Field(description="Keys with a p-value (k ≥ 2 per side)")
    flagged: int = Field(description="Keys with q ≤ fdr and |change| ≥ the minimum effect")


class ProfileDiffData(Model):
    """``gpuopt profile diff``: comparability, method, counts and one row per key."""

    kind: ProfileKind
    by: Dimension
    k_baseline: int
    k_candidate: int
    baseline: list[CaptureFacts]
    candidate: list[CaptureFacts]
    comparability: Comparability
    method: DiffMethod
    counts: DiffCounts
    warnings: list[DiffWarning]
    table: TableData
    citation: str | None = Field(
        default=None,
        description="With --cite: the id of the citation record (citations/<invocation>/<id>.json)",
    )
