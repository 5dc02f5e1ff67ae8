"""The ``gate`` operation's handler: turns an executed gate plan into its result (statistics and judgment).

Paired: the same pairs, contamination, statistics (primary, constraints, guardrails, secondaries) and
resolution as a target or final audit, judged by :mod:`gpuopt.evaluation.gate.judge`. Unpaired: this
invocation's calls of the current code against the baseline's saved calls (:mod:`.unpaired`).
"""

from __future__ import annotations

from typing import Any

from gpuopt.evaluation.analysis.pairs import Context, pair_records
from gpuopt.evaluation.analysis.statistics import resolution, resolution_warning, statistics
from gpuopt.evaluation.execution import Execution, ExecutionSpec
from gpuopt.evaluation.gate import judge, unpaired
from gpuopt.models.evaluation.frozen import GateCore
from gpuopt.models.evaluation.gate import GateJudgment, GateOutcome, GateReason, GateResult
from gpuopt.models.evaluation.statistics import Statistics

VERDICTS: dict[GateOutcome, str] = {
    "pass": "passed",
    "improvement": "passed",
    "regression": "rejected",
    "correctness_failed": "rejected",
    "inconclusive": "inconclusive",
    "invalid": "not_evaluated",
    "identity_mismatch": "not_evaluated",
}
"""The invocation verdict (the vocabulary every result shares) of each gate outcome."""


def judge_paired(stats_: Statistics, m: float, minimum: int) -> tuple[list[GateOutcome], list[GateReason]]:
    """The primary by the gate rule, each constraint and guardrail by its own status."""
    primary = stats_.primary.comparison
    first = judge.rule(primary, m, minimum)
    outcomes: list[GateOutcome] = [first.outcome]
    reasons = [
        judge.reason(
            f"primary_{first.code}",
            judge.describe(primary, m, "primary"),
            first.outcome,
            metric=primary.metric,
        )
    ]
    for kind, items in (("constraint", stats_.constraints), ("guardrail", stats_.guardrails)):
        for item in items:
            outcome = judge.status_outcome(item.status)
            outcomes.append(outcome)
            reasons.append(
                judge.reason(
                    f"{kind}_{item.status}",
                    f"{kind} {item.metric}: {item.status}",
                    outcome,
                    metric=item.metric,
                )
            )
    return outcomes, reasons


class GateHandler:
    """The ``OperationHandler`` of ``gate`` invocations."""

    result_model = GateResult

    def verdict(self, spec: ExecutionSpec, execution: Execution) -> str:
        fields = self._fields(spec, execution)
        judgment = fields["judgment"]
        assert isinstance(judgment, GateJudgment)
        return VERDICTS[judgment.outcome]

    def extra_fields(self, spec: ExecutionSpec, execution: Execution) -> dict[str, Any]:
        return self._fields(spec, execution)

    def _fields(self, spec: ExecutionSpec, ex: Execution) -> dict[str, Any]:
        cached = ex.analysis.get("gate_fields")
        if isinstance(cached, dict):
            return cached
        ctx = Context(spec, ex)
        core = ctx.core(GateCore)
        fields = self._paired(ctx, core) if core.gate.mode == "paired" else unpaired.fields(ctx, core)
        ex.analysis["gate_fields"] = fields
        return fields

    @staticmethod
    def _paired(ctx: Context, core: GateCore) -> dict[str, Any]:
        ex = ctx.ex
        ctx.judge_contamination()
        stopped = judge.not_judged(ex)
        stats_ = statistics(ctx) if stopped is None else None
        planned = (core.plan.pairs or 0) * len(core.plan.case_ids)
        res = resolution(ctx.store, ctx.target, core.noise, planned)
        warning = resolution_warning(res)
        if warning is not None:
            ex.warnings.append(warning)
        arithmetic = ctx.target.statistics.effect_scale == "arithmetic_pct"
        if stopped is not None or stats_ is None:
            outcome, why = stopped or ("invalid", judge.reason(ex.stop_reason, "no statistics", "invalid"))
            judgment = judge.judgment(outcome, ctx.m, arithmetic, [why])
        else:
            outcomes, reasons = judge_paired(stats_, ctx.m, ctx.minimum_pairs)
            judgment = judge.judgment(judge.combine(outcomes), ctx.m, arithmetic, reasons)
        return {
            "pairs": pair_records(ctx),
            "performance_interpreted": stats_ is not None,
            "contamination": ctx.contamination(),
            "gate": core.gate,
            "statistics": stats_,
            "unpaired": None,
            "resolution": res,
            "judgment": judgment,
        }
