"""The records of one execution (the records layer): :class:`ExecutionSpec` (everything the worker needs,
resolved from a Target and a frozen request or a readiness probe), :class:`Execution` (what the plan produced
so far) and the :class:`OperationHandler` protocol through which an operation turns an executed plan into its
result. The runner receives the handler from its caller and never names an operation itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import Field

from gpuopt.models.evaluation.common import Name, Record, RecordRef, Role, Sha256
from gpuopt.models.evaluation.driver import DriverRequest, DriverResult, NormalizedDriver, ReportedRuntime
from gpuopt.models.evaluation.invocation import (
    CallReceipt,
    CorrectnessReceipt,
    EvidenceStep,
    ExecutionStatus,
    FrozenVariant,
    InvocationResult,
    Limits,
    Warning,
)
from gpuopt.models.evaluation.operations import Binding
from gpuopt.models.evaluation.target import AccuracyRule, Contamination, MetricDeclaration


class ExecutionSpec(Record):
    """Everything the worker needs, resolved from a Target and a frozen request (or a readiness probe)."""

    invocation_id: str
    operation: str
    target_id: str
    target: RecordRef | None
    request_digest: Sha256
    store_root: str
    gpus: list[str]
    driver: NormalizedDriver
    metrics: dict[Name, MetricDeclaration]
    rules: list[AccuracyRule]
    test_set_digest: Sha256
    accuracy_reference: Sha256 | None
    variants: dict[Role, FrozenVariant]
    evidence_plan: list[EvidenceStep]
    samples_per_call: int
    warmup_per_call: int
    seed: int
    shared_state: list[Name]
    rebuilt_state: list[Name]
    expected_reported: ReportedRuntime | None
    limits: Limits
    keep_workspace: bool
    gates: list[AccuracyRule] = Field(default_factory=list, description="Candidate-only correctness rules")
    diagnostics: list[Name] = Field(default_factory=list, description="Candidate correctness metrics kept")
    restore_checks: list[EvidenceStep] = Field(
        default_factory=list, description="Original calls run only after a candidate correctness failure"
    )
    binding: Binding | None = Field(
        default=None, description="The Champion pointer the calls are bound to (checked before every call)"
    )
    contamination: Contamination | None = Field(
        default=None, description="The Target's frozen sampler and rules (none for a readiness probe)"
    )


@dataclass
class Execution:
    """What the plan produced so far."""

    receipts: list[CallReceipt] = field(default_factory=list)
    correctness: list[CorrectnessReceipt] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    results: list[tuple[DriverRequest, DriverResult]] = field(default_factory=list)
    execution_status: ExecutionStatus = "succeeded"
    validity: str = "valid"
    stop_reason: str = "completed"
    correctness_failed: bool = False
    skipped: list[int] = field(default_factory=list)
    reported: ReportedRuntime | None = None
    warnings: list[Warning] = field(default_factory=list)
    gpu_seconds: float = 0.0
    analysis: dict[str, Any] = field(default_factory=dict)
    sampling: Any = None
    """The resource sampler's outcome (:class:`gpuopt.evaluation.sampling.SamplingOutcome`), when one ran."""
    """What an operation handler computed once (statistics, verdict) for its verdict and fields."""

    def stop(self, status: ExecutionStatus, reason: str, *, valid: bool = False) -> None:
        self.execution_status = status
        self.stop_reason = reason
        if not valid:
            self.validity = "invalid"


class OperationHandler(Protocol):
    """Turns an executed plan into a verdict and the operation's own result fields."""

    def verdict(self, spec: ExecutionSpec, execution: Execution) -> str: ...

    def extra_fields(self, spec: ExecutionSpec, execution: Execution) -> dict[str, Any]: ...

    @property
    def result_model(self) -> type[InvocationResult]:
        """The result model the operation's records validate against."""
        ...


class SmokeHandler:
    """``readiness_smoke``: the driver samples, passes its gates and correctness; no statistics."""

    result_model = InvocationResult

    def verdict(self, spec: ExecutionSpec, execution: Execution) -> str:
        if execution.correctness_failed:
            return "failed"
        return "passed" if execution.validity == "valid" else "not_evaluated"

    def extra_fields(self, spec: ExecutionSpec, execution: Execution) -> dict[str, Any]:
        return {}
