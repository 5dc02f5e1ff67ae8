"""Result format v2 (issue 14 item 3): a comparison's constraints and guardrails are the engine's own
results (``gpuopt.stats.constraint``/``guardrail``), not twins that copy their fields; v1 records, whose
statistics hold the twins, are still read, and each shape is only accepted under its own format."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpuopt import stats
from gpuopt.errors import InputError
from gpuopt.evaluation import formats, jsonio
from gpuopt.evaluation.views import report
from gpuopt.models.evaluation.operations import ScreenResult
from gpuopt.models.evaluation.statistics import (
    GuardrailOutcome,
    GuardrailViolation,
    StatisticsV1,
    StatisticsV2,
)

SHA = "ab" * 32
PRIMARY = {
    "metric": "step_time_ms",
    "role": "primary",
    "n_valid": 4,
    "n_invalid": 1,
    "estimator": "median",
    "ci_method": "bca",
    "ci_method_run": "bca",
    "confidence": 0.95,
    "resamples": 1000,
    "seed": 7,
    "effect_scale": "log_ratio",
    "estimate_log": 0.1,
    "ci_low_log": 0.05,
    "ci_high_log": 0.15,
    "estimate_pct": 10.5,
    "ci_low_pct": 5.1,
    "ci_high_pct": 16.2,
    "change_pct": -9.5,
    "threshold_pct": 5.0,
    "verdict": "improved",
    "verdict_reason": "ci_above_threshold",
    "pairs_needed_estimate": None,
    "warnings": [],
}
V1_CONSTRAINT = {
    "metric": "mem",
    "max_regression_pct": 2.0,
    "n_valid": 4,
    "n_invalid": 1,
    "regression_estimate_pct": 0.5,
    "regression_ci_low_pct": -0.1,
    "regression_ci_high_pct": 1.2,
    "status": "passed",
}
V1_GUARDRAIL = {
    "metric": "mem",
    "op": "le",
    "limit": 1.5,
    "mode": "every_call",
    "n_valid": 2,
    "estimate": None,
    "ci_low": None,
    "ci_high": None,
    "violations": [{"pair_index": 3, "case_id": "a", "sample_index": 1}],
    "status": "failed",
}


def _engine_results() -> tuple[Any, GuardrailOutcome]:
    # every_call: the candidate's samples 2.0 (pair 0, sample 1) and 3.0 (pair 1, sample 0) exceed 1.5
    guard = stats.guardrail([[1.0, 2.0], [3.0, 0.5]], limit=1.5, op="le", mode="every_call", metric="mem")
    assert (guard.violations, guard.status, guard.n) == ([(0, 1), (1, 0)], "failed", 2)
    located = [
        GuardrailViolation(pair_index=3, case_id="a", sample_index=1),
        GuardrailViolation(pair_index=5, case_id="b", sample_index=0),
    ]
    base = [10.0, 10.2, 9.9, 10.1]
    constraint = stats.constraint(
        base, base, max_regression_pct=2.0, metric="mem", minimum_pairs=2, resamples=200, seed=7
    )
    assert (constraint.regression_estimate, constraint.status) == (0.0, "passed")
    return constraint, GuardrailOutcome(result=guard, violations=located)


def _statistics(constraints: list[Any], guardrails: list[Any]) -> dict[str, Any]:
    return {
        "primary": PRIMARY,
        "constraints": constraints,
        "guardrails": guardrails,
        "secondary": [],
        "per_case": [],
        "order_effect": None,
    }


def _screen(fmt: str, statistics: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": fmt,
        "invocation_id": "inv-" + "0" * 32,
        "operation": "screen",
        "target": {"id": "tgt-" + "9" * 64, "sha256": SHA},
        "request_digest": SHA,
        "started_at_epoch": 1.0,
        "finished_at_epoch": 2.0,
        "elapsed_s": 1.0,
        "gpu_seconds": 1.0,
        "gpu_seconds_held": 1.0,
        "execution_status": "succeeded",
        "measurement_validity": "valid",
        "verdict": "not_rejected",
        "stop_reason": "completed",
        "cleanup_status": "not_required",
        "calls": {"planned": 0, "completed": 0, "skipped": []},
        "call_receipts": [],
        "correctness": [],
        "reported_runtime": None,
        "warnings": [],
        "tables": {"samples": None, "resources": None},
        "pairs": [],
        "performance_interpreted": True,
        "contamination": {
            "checked": False,
            "sampler": "disabled",
            "pre_idle": "not_required",
            "pairs_invalid": 0,
            "by_rule": {},
            "by_position": {},
            "calls_contaminated": 0,
            "process_visibility": "not_applicable",
            "ticks": 0,
        },
        "experiment": {"id": "exp-1", "sha256": SHA},
        "mechanism": "m",
        "reference_binding": {"selection": None, "pointer_sha256": None, "status": "current"},
        "statistics": statistics,
        "resolution": {
            "noise_ref": None,
            "planned_pairs": 4,
            "mde_pct": None,
            "minimum_effect_pct": 5.0,
            "status": "no_noise_record",
            "method": "normal_approx",
        },
        "screen_claim": "supported",
    }


def _load(doc: dict[str, Any]) -> ScreenResult:
    return jsonio.load(
        ScreenResult, jsonio.record_bytes(doc), what="result", max_bytes=jsonio.MAX_RECORD_BYTES
    )


def test_v2_embeds_the_engine_results_and_round_trips() -> None:
    # v2 is read, no longer written (v3 embeds each metric's comparison too: test_eval_statistics_v3)
    assert formats.INVOCATION_RESULT == "gpuopt.invocation-result/v3"
    constraint, guardrail = _engine_results()
    doc = _screen(
        "gpuopt.invocation-result/v2", _statistics([constraint.model_dump()], [guardrail.model_dump()])
    )
    result = _load(doc)
    assert isinstance(result.statistics, StatisticsV2)
    assert result.statistics.constraints == [constraint]
    assert result.statistics.guardrails == [guardrail]
    assert (result.statistics.guardrails[0].metric, result.statistics.guardrails[0].status) == (
        "mem",
        "failed",
    )
    data = jsonio.record_bytes(result)
    assert (
        data == jsonio.record_bytes(doc)
        and jsonio.record_bytes(_load(result.model_dump(mode="json"))) == data
    )
    rows = report._constraint_row(result.model_dump(mode="json")["statistics"]["constraints"][0])
    assert rows[:3] == ["mem", 2.0, "passed"]


def test_v1_records_with_twins_are_still_read_unchanged() -> None:
    doc = _screen("gpuopt.invocation-result/v1", _statistics([V1_CONSTRAINT], [V1_GUARDRAIL]))
    result = _load(doc)
    assert isinstance(result.statistics, StatisticsV1)
    assert result.statistics.guardrails[0].violations[0].pair_index == 3
    assert [c.status for c in result.statistics.constraints] == ["passed"]
    assert jsonio.record_bytes(result) == jsonio.record_bytes(doc)
    assert report._constraint_row(V1_CONSTRAINT)[:3] == ["mem", 2.0, "passed"]
    # a v1 record without constraints or guardrails reads the same either way
    empty = _load(_screen("gpuopt.invocation-result/v1", _statistics([], [])))
    assert empty.statistics is not None and empty.statistics.primary.verdict == "improved"


@pytest.mark.parametrize("fmt", ["gpuopt.invocation-result/v1", "gpuopt.invocation-result/v2"])
def test_each_shape_only_under_its_format(fmt: str) -> None:
    constraint, guardrail = _engine_results()
    v1 = _statistics([V1_CONSTRAINT], [V1_GUARDRAIL])
    v2 = _statistics([constraint.model_dump(mode="json")], [guardrail.model_dump(mode="json")])
    wrong = v2 if fmt.endswith("v1") else v1
    with pytest.raises(InputError) as err:
        _load(_screen(fmt, copy.deepcopy(wrong)))
    assert err.value.code == "field_invalid"
