"""Readiness request validation: the request's shape, objective roles, metrics, sets, statistics and
contamination rules, and the idle and sampler checks, before anything is written."""

from __future__ import annotations

import json
from typing import Any

from gpuopt.errors import AbsentError, InputError
from gpuopt.evaluation import driver as drv
from gpuopt.evaluation import idle, jsonio
from gpuopt.models.evaluation.readiness import ContaminationSpec, DiagnosticRequest, ReadinessRequest
from gpuopt.models.evaluation.target import ContaminationRule, IdleCheck

WORK_DIR = ".gpuopt-readiness"
QUANTILE_WITHIN = {"p90", "p95", "p99"}

DEFAULT_RULES: list[dict[str, Any]] = [
    {
        "id": "foreign-process",
        "signal": "gpu.foreign_processes",
        "op": "gt",
        "value": 0,
        "min_fraction": 0,
        "on_missing": "ignore",
    },
    {
        "id": "hw-throttle",
        "signal": "gpu.throttle",
        "op": "any_of",
        "value": ["hw_slowdown", "hw_thermal", "hw_power_brake"],
        "min_fraction": 0,
        "on_missing": "invalidate",
    },
    {
        "id": "sw-thermal",
        "signal": "gpu.throttle",
        "op": "any_of",
        "value": ["sw_thermal"],
        "min_fraction": 0.1,
        "on_missing": "invalidate",
    },
    {"id": "xid", "signal": "gpu.xid", "op": "gt", "value": 0, "min_fraction": 0, "on_missing": "invalidate"},
    {
        "id": "clock-drop",
        "signal": "gpu.sm_clock_drop_pct",
        "op": "gt",
        "value": 10,
        "min_fraction": 0.2,
        "on_missing": "invalidate",
    },
    {
        "id": "foreign-cpu",
        "signal": "host.foreign_cpu_pct",
        "op": "gt",
        "value": 50,
        "min_fraction": 0.2,
        "on_missing": "invalidate",
    },
    {
        "id": "sampler-gap",
        "signal": "sampler.gap",
        "op": "gt",
        "value": 0,
        "min_fraction": 0,
        "on_missing": "invalidate",
    },
]
"""The default contamination rules of spec §7.3, frozen expanded."""


def fail(
    code: str, message: str, path: str | None = None, expected: Any = None, observed: Any = None
) -> InputError:
    def text(x: Any) -> str | None:
        return None if x is None else (x if isinstance(x, str) else json.dumps(x))

    return InputError(code, message, path=path, expected=text(expected), observed=text(observed))


# ---- request validation ------------------------------------------------------------------------------------


def parse_request(data: bytes) -> ReadinessRequest | DiagnosticRequest:
    raw = jsonio.parse(data, what="readiness request")
    if not isinstance(raw, dict):
        raise InputError("field_invalid", "the readiness request must be a JSON object", path="$")
    mode = raw.get("mode")
    if mode == "diagnostic":
        return jsonio.validate(DiagnosticRequest, raw, what="readiness request")
    if mode != "optimization" and "mode" in raw:
        raise fail(
            "field_invalid",
            "mode must be optimization or diagnostic",
            "mode",
            "optimization | diagnostic",
            mode,
        )
    return jsonio.validate(ReadinessRequest, raw, what="readiness request")


def _check_objective_roles(req: ReadinessRequest) -> set[str]:
    """Each metric is at most one of primary, constraint, secondary; those named must be declared.
    Returns every metric the objective uses."""
    obj, metrics, err = req.objective, req.metrics, "metric_declaration_invalid"
    roles: dict[str, str] = {}

    def claim(metric: str, role: str, path: str) -> None:
        if metric not in metrics:
            raise fail(err, f"{path} names the undeclared metric {metric}", path, sorted(metrics), metric)
        if metric in roles:
            one = "at most one of primary, constraint, secondary"
            raise fail(err, f"metric {metric} is both {roles[metric]} and {role}", path, one, role)
        roles[metric] = role
        if role != "secondary" and metrics[metric].zero_allowed:
            raise fail(
                err,
                f"the {role} metric {metric} cannot allow zero",
                f"metrics.{metric}.zero_allowed",
                False,
                True,
            )

    claim(obj.primary, "primary", "objective.primary")
    for i, c in enumerate(obj.constraints):
        claim(c.metric, "constraint", f"objective.constraints[{i}].metric")
    for i, s in enumerate(obj.secondary):
        claim(s.metric, "secondary", f"objective.secondary[{i}].metric")
    used = set(roles)
    for i, g in enumerate(obj.guardrails):
        if g.metric not in metrics:
            path = f"objective.guardrails[{i}].metric"
            raise fail(
                err, f"guardrail names the undeclared metric {g.metric}", path, sorted(metrics), g.metric
            )
        used.add(g.metric)
    return used


def _check_metrics(req: ReadinessRequest) -> None:
    err = "metric_declaration_invalid"
    for name, m in req.metrics.items():
        if m.within_call in QUANTILE_WITHIN and m.kind != "quantile":
            path = f"metrics.{name}.kind"
            raise fail(
                err,
                f"metric {name}: within_call {m.within_call} needs kind quantile",
                path,
                "quantile",
                m.kind,
            )
    unused = sorted(set(req.metrics) - _check_objective_roles(req))
    if unused:
        path = f"metrics.{unused[0]}"
        raise fail(
            err,
            f"metric {unused[0]} is declared but not used by the objective",
            path,
            "used by the objective",
            "unused",
        )


def _check_sets(req: ReadinessRequest) -> None:
    cases = req.test_set.case_ids
    if len(set(cases)) != len(cases):
        dup = next(c for c in cases if cases.count(c) > 1)
        raise fail(
            "field_invalid", f"case {dup} is listed twice", "test_set.case_ids", "unique case ids", dup
        )
    weights = req.test_set.case_weights
    if weights is not None and set(weights) != set(cases):
        raise fail(
            "field_invalid",
            "case_weights must cover every case exactly",
            "test_set.case_weights",
            sorted(cases),
            sorted(weights),
        )
    for i, rule in enumerate(req.accuracy.rules):
        if rule.cases != "all":
            outside = [c for c in rule.cases if c not in cases]
            if outside or not rule.cases:
                raise fail(
                    "accuracy_rule_invalid",
                    f"accuracy rule {i} names unknown cases",
                    f"accuracy.rules[{i}].cases",
                    sorted(cases),
                    outside,
                )
    smoke = req.smoke.case_id
    if smoke is not None and smoke not in cases:
        raise fail(
            "case_unknown",
            f"the smoke case {smoke} is not in the test set",
            "smoke.case_id",
            sorted(cases),
            smoke,
        )
    if len(set(req.gpus)) != len(req.gpus):
        raise fail("field_invalid", "a GPU is listed twice", "gpus")


def _check_statistics(req: ReadinessRequest) -> None:
    s = req.statistics
    if s.effect_scale == "arithmetic_pct" and (s.estimator != "median" or s.ci_method != "percentile"):
        raise fail(
            "statistics_invalid",
            "effect_scale arithmetic_pct (parity mode) requires estimator median and ci_method percentile",
            "statistics",
            "median + percentile",
            f"{s.estimator} + {s.ci_method}",
        )


def contamination_for(req: ReadinessRequest) -> dict[str, Any]:
    """The frozen contamination settings: defaults filled, ``rules: "default"`` expanded, rules checked."""
    spec = req.contamination
    if spec is None:
        spec = (
            ContaminationSpec(sampler="disabled", rules=[])
            if not req.gpus
            else ContaminationSpec(sampler="nvml")
        )
    rules = (
        [ContaminationRule.model_validate(r) for r in DEFAULT_RULES]
        if spec.rules == "default"
        else list(spec.rules)
    )
    err = "contamination_rule_invalid"
    if spec.sampler == "disabled" and rules:
        raise fail(
            err, "rules need a sampler; sampler is disabled", "contamination.rules", [], [r.id for r in rules]
        )
    seen = set()
    for i, rule in enumerate(rules):
        path = f"contamination.rules[{i}]"
        if rule.id in seen:
            raise fail(err, f"rule id {rule.id} repeats", f"{path}.id")
        seen.add(rule.id)
        is_list = isinstance(rule.value, list)
        if (rule.op == "any_of") != is_list or (rule.op == "any_of") != (rule.signal == "gpu.throttle"):
            raise fail(
                err, f"rule {rule.id}: any_of takes a list of throttle reasons, gt/lt a number", f"{path}.op"
            )
        if not req.gpus and rule.signal.startswith("gpu."):
            raise fail(
                err, f"rule {rule.id} watches a GPU signal but the Target is CPU-only", f"{path}.signal"
            )
    return {
        "sampler": spec.sampler,
        "period_ms": spec.period_ms,
        "rules": [r.model_dump() for r in rules],
        "idle": spec.idle.model_dump(),
    }


def idle_check(gpus: list[str], contamination: dict[str, Any]) -> IdleCheck:
    """Spec §3.2, §7.4: before the smoke call; ``busy`` refuses (``gpu_busy``) unless ``allow_busy``."""
    if not gpus:
        return IdleCheck(status="not_required", detail="CPU-only Target")
    if contamination["sampler"] == "disabled":
        return IdleCheck(status="unknown", detail="no idle check ran: the sampler is disabled")

    settings = contamination["idle"]
    rep = idle.run(
        gpus,
        window_s=settings["window_s"],
        max_util_pct=settings["max_util_pct"],
        sampler=contamination["sampler"],
        period_ms=contamination["period_ms"],
    )
    if rep.status == "busy" and not settings["allow_busy"]:
        raise fail("gpu_busy", f"the idle check found the GPUs busy: {rep.detail}", "gpus", "idle", "busy")
    return IdleCheck(status=rep.status, detail=rep.detail)


def check_sampler(sampler: str) -> None:
    if sampler == "nvml":
        try:
            import pynvml

            pynvml.nvmlInit()
            pynvml.nvmlShutdown()
        except Exception as exc:
            raise AbsentError(
                "sampler_unavailable", f"the nvml sampler cannot start: {exc}", path="contamination.sampler"
            ) from None
    elif sampler == "nvidia_smi":
        raise AbsentError(
            "sampler_unavailable",
            "the nvidia_smi sampler is not built in this version: declare sampler nvml (nvidia-ml-py)",
            path="contamination.sampler",
        )


def validate(req: ReadinessRequest | DiagnosticRequest) -> None:
    if isinstance(req, DiagnosticRequest):
        if req.claim_layer != "diagnostic":
            raise fail(
                "claim_layer_invalid",
                "a diagnostic Target has claim layer diagnostic",
                "claim_layer",
                "diagnostic",
                req.claim_layer,
            )
        return
    if req.claim_layer == "diagnostic":
        raise fail(
            "claim_layer_invalid",
            "an optimization Target declares kernel, workload or serving",
            "claim_layer",
            "kernel | workload | serving",
            "diagnostic",
        )
    _check_sets(req)
    _check_metrics(req)
    _check_statistics(req)
    # Before the work area exists: a refused secret literal is never written, not even there.
    drv.check_literals(req.driver.env)
