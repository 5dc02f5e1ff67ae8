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
    cuda_graph_trace: str | None = Field(
        description="nsys: how CUDA graphs were traced: graph (one row per graph execution, its kernels "
        "hidden), node (every kernel, graph launch calls' host time inflated), graph+node; null: no graph "
        "trace rows or not nsys"
    )
    keys: int = Field(description="Distinct keys of the chosen dimension")
    events: int = Field(description="Instances over every key of the chosen dimension")
    total_ns: int = Field(
        description="Time over every key of the chosen dimension (ns; nested keys such as ops and NVTX "
        "ranges count their nested time again)"
    )
    kernels: int = Field(
        description="Kernels in the capture (graph executions of a graph-level trace count one each)"
    )
    kernel_time_ns: int = Field(description="Summed duration of those kernels and graph executions (ns)")
    steps: int | None = Field(
        description="Steps in the capture: instances of the --marker range, else of ProfilerStep#N "
        "(null: unknown)"
    )
    kernels_per_step: float | None = Field(description="kernels / steps (null when steps are unknown)")


class ComparabilityFact(Model):
    """One fact on both sides; ``same`` is False when any capture differs from the others."""

    name: str = Field(description="What is compared (GPU, driver, tool version, ...)")
    baseline: list[str | None] = Field(description="Its value in each baseline capture")
    candidate: list[str | None] = Field(description="Its value in each candidate capture")
    same: bool = Field(description="True when every capture agrees")


class Work(Model):
    """The amount of work in each capture, as steps; per-key values are compared per step when the step
    counts differ."""

    source: Literal["marker", "profiler_step", "detected", "unknown"] = Field(
        description="What counts steps: the --marker range, PyTorch's ProfilerStep#N ranges, the iterations "
        "detected from each capture's launch sequence (no marker or ProfilerStep; gpuopt nsys|torch "
        "iterations), or nothing (then each capture is assumed to hold the same work)"
    )
    step_ranges: list[str] = Field(
        description="The range names counted as steps, as the captures name them (empty: detected or unknown)"
    )
    steps_baseline: list[int | None] = Field(description="Steps in each baseline capture")
    steps_candidate: list[int | None] = Field(description="Steps in each candidate capture")
    per_step: bool = Field(
        description="True when per-key values were divided by each capture's step count (step counts "
        "differ between captures); else they are totals per capture"
    )
    same_unit: bool = Field(
        default=True,
        description="For detected iterations: whether every capture repeats a unit of about the same "
        "kernels per iteration (within 10 %), so that steps can be counted in it; false when the launch "
        "sequence changed (a fusion), and then nothing is divided by the detected counts. True for the "
        "other sources",
    )


class Comparability(Model):
    facts: list[ComparabilityFact] = Field(
        description="Facts that must agree for the captures to be comparable"
    )
    work: Work = Field(description="Steps per capture, and whether values were normalised per step")


class DiffWarning(Model):
    code: str = Field(description="Stable warning code (no_uncertainty, ...)")
    message: str = Field(description="What it means, for people")


class DiffMethod(Model):
    pairing: Pairing = Field(description="paired (--paired), unpaired, or none (one capture on a side)")
    uncertainty: str = Field(description="How the CIs were made, or 'one capture per side: no uncertainty'")
    values: str = Field(
        description="What one per-capture value of a key is: its total, or its total per step"
    )
    fdr: float = Field(
        description="The declared false-discovery rate of the flags (Benjamini-Hochberg) and the "
        "false-coverage rate of the per-key intervals"
    )
    key_ci_level: float | None = Field(
        description="Two-sided level of every per-key interval: 1 - max(R, 1) * fdr / m for R flagged "
        "among m tested keys (null without uncertainty)"
    )
    min_effect_pct: float = Field(description="|change_pct| a key needs to be flagged (%)")
    multiple_comparisons: str = Field(description="The correction over keys, in words")


class DiffTotal(Model):
    """The whole GPU time of each capture (or per step) compared as one quantity, at level 1 - fdr."""

    name: str = Field(description="What is totalled, e.g. 'kernel time' or 'kernel time per step'")
    baseline: list[float] = Field(description="Its value in each baseline capture (ns)")
    candidate: list[float] = Field(description="Its value in each candidate capture (ns)")
    baseline_mean_ns: float = Field(description="Mean over baseline captures (ns)")
    candidate_mean_ns: float = Field(description="Mean over candidate captures (ns)")
    change_ns: float = Field(description="candidate_mean_ns - baseline_mean_ns (ns)")
    change_pct: float | None = Field(description="100 * (candidate mean / baseline mean - 1) (%)")
    ci_low_ns: float | None = Field(description="Lower end of the change's interval (ns)")
    ci_high_ns: float | None = Field(description="Upper end of the change's interval (ns)")
    ci_low_pct: float | None = Field(description="Lower end of the change's interval (%, Fieller)")
    ci_high_pct: float | None = Field(description="Upper end of the change's interval (%, Fieller)")
    ci_level: float | None = Field(description="Two-sided level of the intervals (1 - fdr)")
    p_value: float | None = Field(description="t-test p-value of the change (Welch, or paired)")


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
    totals: list[DiffTotal] = Field(
        description="The capture's whole kernel time (copy time with --by memcpy) compared as one "
        "quantity, and per step when steps are known"
    )
    warnings: list[DiffWarning] = Field(description="Warnings about the captures or the result")
    table: TableData = Field(description="Per key (gpuopt schema profile.keys)")
    citation: str | None = Field(
        default=None,
        description="With --cite: the id of the citation record (citations/<invocation>/<id>.json)",
    )
