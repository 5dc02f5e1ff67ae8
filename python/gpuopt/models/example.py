"""``gpuopt example run``: the whole evaluation loop on the bundled example, step by step."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models.evaluation.common import NonNegative, Record, RecordRef, Text


class ExampleStep(Record):
    """One step of the loop: what ran, its record, its verdict and (for comparisons) the primary's CI."""

    step: str
    subject: str | None = Field(description="The candidate or variant this step is about")
    record: str | None = Field(description="The id of the record it produced (target, invocation, ...)")
    request_file: str | None = Field(description="The request written under DIR/requests/ (rerunnable)")
    verdict: str | None
    stop_reason: str | None
    primary_verdict: str | None
    estimate_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    elapsed_s: NonNegative
    detail: Text
    prediction_status: str | None = Field(
        default=None,
        description="Targets: the prediction check, consistent, observed_below, observed_above, "
        "observed_above_ceiling (the whole CI above the claim's Amdahl ceiling), not_declared or "
        "not_evaluated",
    )
    prediction: Text | None = Field(
        default=None,
        description="Targets: the prediction check as a sentence (observed effect and CI against the claim's "
        "expected effect and Amdahl ceiling)",
    )


class ExampleRun(Record):
    """The loop's steps; the example acted as the user for the one choice gpuopt never makes."""

    directory: str
    root: str
    workload: Literal["numpy", "torch"]
    acting_as_user: Text
    steps: list[ExampleStep]
    champion: RecordRef | None
    handoff: str
    elapsed_s: NonNegative
