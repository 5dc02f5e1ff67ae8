"""``gpuopt example run``: the whole evaluation loop on the bundled example, step by step."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models.evaluation.common import NonNegative, Record, RecordRef, Text


class ExampleStep(Record):
    """One step of the loop: what ran, its record, its verdict and (for comparisons) the primary's CI."""

    step: str = Field(
        description="The step: readiness, baseline, noise, experiment, screen, target, champion, "
        "final_audit or handoff"
    )
    subject: str | None = Field(description="The candidate or variant this step is about")
    record: str | None = Field(description="The id of the record it produced (target, invocation, ...)")
    request_file: str | None = Field(description="The request written under DIR/requests/ (rerunnable)")
    verdict: str | None = Field(
        description="The step's verdict (ready for readiness); null for a step without one"
    )
    stop_reason: str | None = Field(
        description="The result's stop reason, or the refusal's error code (a gate that refused the step); "
        "null otherwise"
    )
    primary_verdict: str | None = Field(
        description="The primary metric's verdict (improved, regressed, equivalent, inconclusive); null "
        "without statistics"
    )
    estimate_pct: float | None = Field(
        description="The primary's effect estimate (%, > 0 = the candidate is better); null without "
        "statistics"
    )
    ci_low_pct: float | None = Field(
        description="Low end of its confidence interval (%); null without statistics"
    )
    ci_high_pct: float | None = Field(
        description="High end of its confidence interval (%); null without statistics"
    )
    elapsed_s: NonNegative = Field(description="Wall time of the step (s)")
    detail: Text = Field(description="What the step did, in one sentence with its numbers")
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

    directory: str = Field(description="The folder the example project was copied into")
    root: str = Field(description="The artifact root the loop wrote (DIRECTORY/root)")
    workload: Literal["numpy", "torch"] = Field(
        description="numpy (layer norm on the CPU) or torch (softmax on the first GPU, with --gpu)"
    )
    acting_as_user: Text = Field(
        description="The one choice the example made as the user (selecting the Champion), which gpuopt "
        "never makes by itself"
    )
    steps: list[ExampleStep] = Field(description="Every step of the loop, in order")
    champion: RecordRef | None = Field(
        description="The selection the example made; null when no candidate passed"
    )
    handoff: str = Field(description="The hand-off draft written")
    elapsed_s: NonNegative = Field(description="Wall time of the whole run (s)")
