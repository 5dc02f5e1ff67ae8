"""``gpuopt capture`` (``gpuopt.request.capture/v1``): profiles captured through the frozen Target's driver.

A capture request names the variants (the original, the Champion, an Experiment's candidate), how many
captures of each (``repeats``, interleaved across variants) and the profiler (nsys, ncu or the driver's own
torch profiler). The frozen request records the profiler's identity and options; the result lists one
:class:`CaptureRecord` per driver call, its artifacts frozen in the store and the engine's facts beside them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuopt.models.evaluation.common import (
    CitingOperation,
    Count,
    Name,
    ObjectDigest,
    Record,
    RecordRef,
    ResultRef,
    Role,
    Sha256,
    Text,
)
from gpuopt.models.evaluation.evaluation_data import DryRun, Estimate
from gpuopt.models.evaluation.invocation import FrozenRequest, InvocationResult, RequestCore
from gpuopt.models.evaluation.operations import EvaluationRequestBase, Seed
from gpuopt.models.evaluation.status import SubmitOutcome
from gpuopt.models.profile import CaptureFacts, ProfileKind

CaptureTool = Literal["nsys", "ncu", "torch"]
CaptureVariant = Literal["original", "champion", "candidate"]
VARIANT_ROLES: dict[str, Role] = {"original": "original", "champion": "reference", "candidate": "candidate"}
"""Each capture variant runs as one subject of the driver request, under this role."""

Option = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:,/=*+-]{1,256}$")]


class NsysOptions(Record):
    """Nsight Systems options; each maps to one ``nsys profile`` option and is recorded."""

    trace: Annotated[list[Option], Field(min_length=1, max_length=16)] = Field(
        default_factory=lambda: ["cuda", "nvtx", "osrt"],
        description="nsys profile --trace: the APIs traced (cuda, nvtx, osrt, cublas, ...)",
    )
    capture_range: Literal["none", "cudaProfilerApi", "nvtx"] = Field(
        default="none", description="--capture-range (none: the whole process)"
    )
    nvtx_capture: Option | None = Field(
        default=None, description="--nvtx-capture (the range name; needed with capture_range nvtx)"
    )
    cuda_graph_trace: Literal["graph", "node"] = Field(
        default="graph",
        description="nsys profile --cuda-graph-trace: graph (one range per graph launch) or node (every "
        "kernel of the graph)",
    )
    sample: Literal["none", "process-tree", "system-wide"] = Field(
        default="none",
        description="nsys profile --sample: CPU sampling off (none), of the process tree, or system-wide",
    )


class NcuOptions(Record):
    """Nsight Compute options (the ones ``gpuopt ncu collect`` has); clocks are not locked unless asked."""

    kernel: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = Field(
        default=None, description="--kernel-name regex:..."
    )
    launch_skip: Annotated[int, Field(ge=0)] | None = Field(
        default=None, description="--launch-skip: kernel launches to skip before profiling; null: none"
    )
    launch_count: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="--launch-count: kernel launches to profile; null: every match"
    )
    set_name: Option | None = Field(
        default=None,
        description="ncu --set: the section set collected (basic, detailed, full, roofline, ...); null: "
        "ncu's default",
    )
    sections: list[Option] = Field(default_factory=list, description="--section (excludes set_name)")
    nvtx_include: list[Option] = Field(
        default_factory=list,
        description="ncu --nvtx-include: profile only kernels inside these NVTX range expressions",
    )
    clock_control: Literal["none", "base"] = Field(
        default="none",
        description="--clock-control: none (clocks as the workload runs them, the default) or base (locked "
        "to base clocks)",
    )


class CapturePlanSpec(Record):
    variants: Annotated[list[CaptureVariant], Field(min_length=1, max_length=3)] = Field(
        description="Variants captured, in the order of the first repeat (later repeats rotate it)"
    )
    repeats: Annotated[int, Field(ge=1, le=1000)] = Field(
        default=5, description="Captures per variant and case"
    )
    case_ids: list[Name] | None = Field(default=None, description="Default: every Target case, in order")
    samples_per_call: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        default=10,
        description="Samples each call reports per metric (the driver's own measurement under the profiler)",
    )
    warmup_per_call: Annotated[int, Field(ge=0, le=1_000_000)] = Field(
        default=1, description="Unmeasured runs before the samples of each call"
    )
    seed: Seed | None = Field(default=None, description="Default: the Target's statistics seed")


class CaptureRequest(EvaluationRequestBase):
    """``gpuopt capture``: the request as a user writes it."""

    tool: CaptureTool = Field(
        description="The profiler: nsys, ncu, or torch (the driver writes a Kineto trace of its measured "
        "region)"
    )
    plan: CapturePlanSpec = Field(description="Variants, repeats, cases, samples, warmup and seed")
    experiment: RecordRef | None = Field(default=None, description="Needed when variants holds 'candidate'")
    profiler: Annotated[str, StringConstraints(min_length=1, max_length=4096)] | None = Field(
        default=None,
        description="The profiler executable; default: $GPUOPT_NSYS / $GPUOPT_NCU, else found like "
        "`gpuopt doctor` finds it (PATH first)",
    )
    nsys: NsysOptions = Field(
        default_factory=NsysOptions, description="Nsight Systems options (used with tool nsys)"
    )
    ncu: NcuOptions = Field(
        default_factory=NcuOptions, description="Nsight Compute options (used with tool ncu)"
    )


class ProfilerIdentity(Record):
    name: str = Field(description="The profiler: nsys or ncu")
    path: str = Field(description="Resolved path of its executable")
    version: str | None = Field(description="Its version as it reports it; null when it did not say")
    sha256: Sha256 = Field(description="SHA-256 of the executable")


class CaptureVariantRef(Record):
    variant: CaptureVariant = Field(description="original, champion or candidate (an Experiment's)")
    role: Role = Field(
        description="The role it runs under in the driver request: original, reference (the Champion) or "
        "candidate"
    )
    kind: Literal["source", "artifact"] = Field(description="source or artifact, as the Target's original")
    digest: ObjectDigest = Field(description="The variant's frozen tree")


class CaptureSettings(Record):
    """What the frozen request fixes about the captures (part of the request digest)."""

    tool: CaptureTool = Field(description="The profiler: nsys, ncu or torch")
    profiler: ProfilerIdentity | None = Field(description="null for torch (the driver profiles itself)")
    options: dict[str, str] = Field(description="The recorded options, one per profiler option")
    argv: list[str] = Field(description="The profiler's argv before the driver's (with {out} for the report)")
    variants: list[CaptureVariantRef] = Field(
        description="The variants captured, in the first repeat's order (later repeats rotate it)"
    )
    repeats: Count = Field(description="Captures per variant and case")


class CaptureCore(RequestCore):
    """``capture``: the calls of every variant, interleaved, each run under the profiler."""

    operation: Literal["capture"] = Field(
        description="The operation: always capture (the supervisor picks its handler by it)"
    )
    capture: CaptureSettings = Field(
        description="The profiler, its identity, options and argv, and the variants: part of the request "
        "digest"
    )
    experiment: RecordRef | None = Field(
        description="The Experiment whose candidate is captured; null without a candidate variant"
    )


class CaptureFrozen(CaptureCore, FrozenRequest):
    """A frozen ``capture`` request."""


class CaptureArtifact(Record):
    """One raw artifact frozen in the store (a one-file object, content-addressed)."""

    kind: Literal["nsys-rep", "nsys-sqlite", "ncu-rep", "kineto-trace"] = Field(
        description="nsys-rep, nsys-sqlite (exported by gpuopt), ncu-rep or kineto-trace"
    )
    name: str = Field(description="The file's name as the profiler wrote it")
    object: ObjectDigest = Field(description="The frozen object's digest (its tree manifest)")
    sha256: Sha256 = Field(description="The file's own sha256 (its blob)")
    size_bytes: Count = Field(description="The file's size (bytes)")


class CapturedFacts(Record):
    """The engine's facts on a frozen capture (its kernel dimension), as the capture record keeps them.

    Records are read for as long as a store lives: the fields that later profile-diff versions added are
    optional here, and the two that profile diff v1 wrote (``marker_count``, ``work_key_count``, always
    null and 0 in a capture record) still read."""

    path: str = Field(description="The capture file read (its blob in the store)")
    kind: ProfileKind = Field(description="nsys, torch or ncu")
    gpus: list[str] = Field(description="GPU model names the capture records (empty: not recorded)")
    driver: str | None = Field(description="CUDA driver version the capture records")
    tool: str | None = Field(description="Profiler and version")
    options: dict[str, str] = Field(description="Capture options the capture records")
    keys: int = Field(description="Distinct kernel names")
    events: int = Field(description="Kernel instances")
    total_ns: int = Field(description="Kernel time (ns)")
    kernels: int | None = Field(
        default=None, description="Kernels, graph executions of a graph-level trace one each"
    )
    kernel_time_ns: int | None = Field(default=None, description="Their summed duration (ns)")
    cuda_graph_trace: str | None = Field(default=None, description="nsys: graph, node, graph+node, or null")
    marker_count: int | None = Field(
        default=None, description="Written by capture records before 2026-12 (always null)"
    )
    work_key_count: int | None = Field(
        default=None, description="Written by capture records before 2026-12 (not a fact of the capture)"
    )

    @classmethod
    def of(cls, facts: CaptureFacts) -> CapturedFacts:
        return cls.model_validate(facts.model_dump(include=set(cls.model_fields)))


CaptureStatus = Literal["captured", "voided", "failed"]


class CaptureRecord(Record):
    """One capture: one driver call of one variant on one case."""

    index: Count = Field(description="The capture's position in the result, from 0")
    call_index: Count = Field(description="The driver call that took it")
    repeat: Count = Field(description="The repeat it belongs to, from 0")
    case_id: Name = Field(description="The case captured")
    variant: CaptureVariant = Field(description="original, champion or candidate")
    role: Role = Field(description="The role it ran under in the driver request")
    digest: ObjectDigest = Field(description="The variant's frozen tree")
    status: CaptureStatus = Field(
        description="captured (the report is frozen), voided (the driver's correctness check failed: not "
        "evidence) or failed (no usable report)"
    )
    reason: str | None = Field(description="Why a capture was voided or failed (e.g. correctness_failed)")
    message: Text | None = Field(
        description="What went wrong, or why facts were not read, in words; null for a clean capture"
    )
    artifacts: list[CaptureArtifact] = Field(
        description="The raw reports frozen in the store (empty when none was usable)"
    )
    facts: CapturedFacts | None = Field(description="The engine's facts on the capture (kernel dimension)")


class CaptureResult(InvocationResult):
    operation: Literal["capture"] = Field(description="The operation: always capture")
    capture: CaptureSettings = Field(description="The capture settings of the frozen request")
    captures: list[CaptureRecord] = Field(description="One record per driver call, in plan order")


class CaptureData(Record):
    """What ``gpuopt capture`` returns: the dry-run plan, or the submission and (with --wait) the result."""

    operation: Literal["capture"] = Field(description="Always capture")
    dry_run: DryRun | None = Field(
        description="With --dry-run: what would run (nothing written); null otherwise"
    )
    submission: SubmitOutcome | None = Field(
        description="The submission: invocation id, dedupe flags and status; null with --dry-run"
    )
    estimate: Estimate | None = Field(description="Expected duration from earlier calls of this Target")
    result_ref: ResultRef | None = Field(description="The result once the invocation completed; null before")
    result: CaptureResult | None = Field(
        description="The capture result once completed; null before (or with --dry-run)"
    )
    summary: list[Text] = Field(description="One line per fact shown to a person")


# ---- citations: a target or final-audit result cites capture diffs ----------------------------------------


class CitedKey(Record):
    key: str
    status: Literal["both", "new", "vanished"]
    change_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    q_value: float | None


class CaptureDiffCitation(Record):
    """``citations/<invocation>/<id>.json``: a ``gpuopt profile diff`` of capture records, cited by a target
    or final-audit result (``gpuopt profile diff --cite INVOCATION``); shown beside its verdict by ``gpuopt
    report`` and ``gpuopt handoff``. The diff's facts, never a reading of them."""

    format: Literal["gpuopt.capture-diff-citation/v1"]
    id: Annotated[str, StringConstraints(pattern=r"^cit-[0-9a-f]{32}$")]
    result: ResultRef
    operation: CitingOperation
    kind: str
    by: str
    baseline: list[str] = Field(description="The cap: references of the baseline side, as given")
    candidate: list[str]
    k_baseline: Count
    k_candidate: Count
    pairing: str
    fdr: float
    tested: Count
    flagged: Count
    keys: list[CitedKey] = Field(description="Flagged keys, largest |change| first (at most 20)")
    warnings: list[str] = Field(description="Warning codes of the diff")
