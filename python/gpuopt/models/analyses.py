"""Documents of the analyses (iterations, critical path, queues, sequences) of an nsys export or a Kineto
trace: what the iteration rows were made of, and the command envelopes' data."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData

IterationSource = Literal["marker", "detected"]


class MarkerChoice(Model):
    name: str = Field(description="The range group counted as steps: a trailing number made * (step_*)")
    kind: str = Field(description="What the ranges are: nvtx, record_function or profiler_step")
    instances: int = Field(description="Top-level ranges of that group")
    chosen_by: str = Field(
        description="option (--marker), profiler_step (ProfilerStep#N present) or most_time (the repeated "
        "group covering the most time among those that are half their threads' top-level ranges or time)"
    )
    unattributed_ops: int = Field(
        description="GPU operations launched between two rows of the marker's threads (in no row)"
    )


class Detection(Model):
    device_id: int = Field(description="The device whose launch sequence was searched")
    operations: int = Field(description="GPU operations of the device (the sequence searched)")
    period_ops: int | None = Field(description="Operations in one repeating unit; null when nothing repeats")
    exact_cover_ops: int = Field(description="Operations covered by the longest exact run of the unit")
    regions: int = Field(description="Stretches where the sequence follows the unit")
    iterations: int = Field(description="Full units found (detected iterations)")
    phase: int | None = Field(
        description="Which unit position starts an iteration: the one after the longest launch pause"
    )
    phase_pause_ns: int | None = Field(description="That pause: the median over the main region (ns)")
    pause_clock: Literal["host", "gpu"] = Field(
        description="What the pause measures: host time between launch calls, or GPU idle (no calls)"
    )


class Agreement(Model):
    device_id: int = Field(description="The device compared")
    marker: str = Field(description="The marker's range group")
    marker_iterations: int = Field(description="Iterations the marker gives")
    detected_iterations: int = Field(description="Iterations detection gives")
    paired_rows: int = Field(
        description="Detected rows paired with the marker row holding most of their operations"
    )
    max_span_diff_pct: float | None = Field(
        description="Largest |detected span - marker span| / marker span over the paired rows (%)"
    )
    kernel_count_differs: int = Field(description="Paired rows whose kernel counts differ")


class IterationFacts(Model):
    """How one trace's (or export's) iterations were found."""

    rank: int | None = Field(description="The Kineto trace's rank; null for an nsys export")
    used: IterationSource = Field(
        description="The source the other analyses use: marker when a marker was found, else detected"
    )
    marker: MarkerChoice | None = Field(description="The marker chosen; null when no range repeats")
    detection: list[Detection] = Field(description="What detection found, per device")
    agreement: list[Agreement] = Field(description="Marker and detection compared, per device")


class DetectedSteps(Model):
    rank: int | None = Field(description="The Kineto trace's rank; null for an nsys export")
    device_id: int | None = Field(description="The device with the most detected iterations")
    iterations: int = Field(description="Detected iterations on that device")
    gpu_time_ns: int = Field(description="Kernel and graph-execution time of those iterations (ns)")


class IterationsData(Model):
    """``gpuopt nsys|torch iterations``: one row per iteration or odd stretch, of every source."""

    path: str = Field(description="The file read")
    traces: list[IterationFacts] = Field(description="How the iterations were found, per trace")
    table: TableData = Field(description="The rows (column definitions: gpuopt schema AREA.iterations)")


class CriticalPathData(Model):
    """``gpuopt nsys|torch critical-path``: per step, the critical path's time by category, and its
    stretches (edges)."""

    path: str = Field(description="The file read")
    source: IterationSource | None = Field(
        description="The iteration source asked for (--source); null: the one the iterations use"
    )
    step: int | None = Field(
        description="The step row whose stretches `edges` holds (--step); null: every step"
    )
    traces: list[IterationFacts] = Field(description="How the steps were found, per trace")
    table: TableData = Field(description="Per step (column definitions: gpuopt schema AREA.critical_path)")
    edges: TableData = Field(
        description="Every stretch of every path in time order (gpuopt schema AREA.critical_path_edges); "
        "with --step, all of that step's stretches whatever --limit"
    )


class QueueData(Model):
    """``gpuopt nsys|torch queue``: outstanding launches per stream and device."""

    path: str = Field(description="The file read")
    series: bool = Field(description="True when the table is the depth over time (--series)")
    table: TableData = Field(
        description="Per stream and device, or the depth over time "
        "(gpuopt schema AREA.queue / AREA.queue_series)"
    )


class SequencesData(Model):
    """``gpuopt nsys|torch sequences``: the repeating unit and the most frequent kernel n-grams."""

    path: str = Field(description="The file read")
    n: int = Field(description="Kernels per n-gram (--n)")
    table: TableData = Field(description="The patterns (gpuopt schema AREA.sequences)")
