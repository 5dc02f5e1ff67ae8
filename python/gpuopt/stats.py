"""Paired statistics: is the candidate faster, slower, equivalent, or is there not enough evidence?

The engine is Rust (``rust/src/stats``); this module converts inputs to buffers and returns pydantic
models and polars DataFrames::

    from gpuopt import stats
    out = stats.compare(baseline_ms, candidate_ms, direction="lower", min_effect=2.0, seed=7)
    out.result.verdict            # "improved" | "regressed" | "equivalent" | "inconclusive"
    out.result.estimate_pct, out.result.ci_low_pct, out.result.ci_high_pct
    out.pairs                     # one row per pair: values, effect_log, effect_pct, change_pct

A pair is (baseline call i, candidate call i). A call is one number or a list of samples (the pair value
is then the ``within_call`` summary, median by default). Values must be finite and > 0. Results are
bit-identical for one seed on any machine and any number of threads (``gpuopt.rng/v1``).

:func:`compare_document` and :func:`noise_document` answer what ``gpuopt stats compare`` and ``gpuopt
stats noise`` print (a :class:`gpuopt.answer.Answer`: ``.data`` the document, ``.table`` every pair).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt import _native
from gpuopt._stats import buffers
from gpuopt._stats.files import BLOCK_LIKE_COLUMNS as BLOCK_LIKE_COLUMNS
from gpuopt._stats.files import compare_files, noise_file
from gpuopt._stats.results import ComparisonResult, FileComparisonResult, NoiseResult
from gpuopt.errors import InputError
from gpuopt.models.stats import (
    CiMethod,
    CompareOptions,
    Comparison,
    ConstraintResult,
    Direction,
    EffectScale,
    Estimator,
    GuardrailResult,
    NoiseReport,
    SampleFileFacts,
    Schedule,
    SimulationOptions,
    SimulationReport,
    WithinCall,
)

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.envelope import UnmodeledItem
    from gpuopt.models.stats import CompareData, NoiseData

__all__ = [
    "ComparisonResult",
    "FileComparisonResult",
    "NoiseResult",
    "compare",
    "compare_document",
    "compare_files",
    "compare_unpaired",
    "constraint",
    "guardrail",
    "noise",
    "noise_document",
    "noise_file",
    "schedule",
    "simulate",
]


def _options(**fields: Any) -> CompareOptions:
    noise = fields.pop("noise", None)
    if isinstance(noise, NoiseReport):
        fields["noise_sd_log"] = noise.sd_log
    elif noise is not None:
        fields["noise_sd_log"] = float(noise)
    return CompareOptions(**fields)


def _result(doc: bytes, table: _native.ArrowTable) -> ComparisonResult:
    from gpuopt._tables import to_polars

    return ComparisonResult(result=Comparison.model_validate_json(doc), pairs=to_polars(table))


def compare(
    baseline: Any,
    candidate: Any,
    *,
    direction: Direction = "lower",
    min_effect: float = 0.0,
    estimator: Estimator = "median",
    ci_method: CiMethod = "bca",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    minimum_pairs: int = 10,
    within_call: WithinCall = "median",
    tails: bool = False,
    effect_scale: EffectScale = "log_ratio",
    power: float = 0.8,
    metric: str = "value",
    scope: str = "",
    cases: Sequence[str] | None = None,
    case_weights: dict[str, float] | None = None,
    orders: Sequence[str] | None = None,
    valid: Sequence[bool] | None = None,
    noise: NoiseReport | float | None = None,
) -> ComparisonResult:
    """Compares paired measurements: ``baseline[i]`` and ``candidate[i]`` form pair i.

    Each element is a number or a sequence of samples from one call (summarized by ``within_call``).
    ``min_effect`` is the minimum effect m in percent; verdicts: ``improved`` (CI low ≥ m; > 0 when
    m = 0), ``regressed`` (CI high ≤ -m), ``equivalent`` (CI inside (-m, m), m > 0), else
    ``inconclusive`` with ``pairs_needed_estimate``. Fewer than ``minimum_pairs`` valid pairs give
    ``inconclusive``, never a rejection. ``cases`` stratifies the bootstrap (``case_weights`` by case
    name), ``orders`` ("AB"/"BA") gives the order effect, ``valid`` excludes pairs, ``noise`` (a
    :class:`NoiseReport` or an SD of A/A log ratios) adds the minimum effect's resolution.

    Raises :class:`gpuopt.errors.InputError` (``nonpositive_metric_value``, ``nonfinite_metric_value``
    naming the pair, ``pair_count_mismatch``, ``samples_too_few``, ``statistics_invalid``).
    """
    options = _options(
        direction=direction,
        minimum_effect_pct=min_effect,
        estimator=estimator,
        ci_method=ci_method,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        minimum_pairs=minimum_pairs,
        within_call=within_call,
        tails=tails,
        effect_scale=effect_scale,
        power=power,
        metric=metric,
        scope=scope,
        noise=noise,
    )
    b_values, b_offsets, n = buffers.calls("baseline", baseline)
    c_values, c_offsets, _ = buffers.calls("candidate", candidate)
    case_codes, case_names, weights = None, None, None
    if cases is not None:
        case_codes, case_names = buffers.cases(cases, n)
        if case_weights is not None:
            unknown = sorted(set(case_weights) - set(case_names))
            missing = [c for c in case_names if c not in case_weights]
            if unknown or missing:
                raise InputError(
                    "statistics_invalid",
                    f"case_weights must name every case exactly: missing {missing}, unknown {unknown}",
                    path="case_weights",
                )
            weights = [float(case_weights[c]) for c in case_names]
    elif case_weights is not None:
        raise InputError("statistics_invalid", "case_weights need cases", path="case_weights")
    doc, table = _native.stats_compare(
        b_values,
        c_values,
        options.model_dump_json().encode(),
        baseline_offsets=b_offsets,
        candidate_offsets=c_offsets,
        cases=case_codes,
        case_names=case_names,
        case_weights=weights,
        orders=None if orders is None else buffers.flags("orders", orders, {"AB": 0, "BA": 1}),
        valid=None if valid is None else buffers.flags("valid", valid, {True: 1, False: 0}),
    )
    return _result(doc, table)


def compare_unpaired(
    baseline: Any,
    candidate: Any,
    *,
    direction: Direction = "lower",
    min_effect: float = 0.0,
    estimator: Estimator = "median",
    ci_method: CiMethod = "bca",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    minimum_pairs: int = 10,
    within_call: WithinCall = "median",
    metric: str = "value",
    scope: str = "",
) -> ComparisonResult:
    """Compares two independent samples (for example kernel durations from two profiles).

    The effect is ``est(ln cand) - est(ln ref)`` (sign flipped for lower-is-better); each side is
    resampled independently; BCa takes its acceleration from both sides' jackknifes. ``minimum_pairs``
    applies to each side. The table has one row per call of each side.
    """
    options = CompareOptions(
        direction=direction,
        minimum_effect_pct=min_effect,
        estimator=estimator,
        ci_method=ci_method,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        minimum_pairs=minimum_pairs,
        within_call=within_call,
        metric=metric,
        scope=scope,
    )
    b_values, b_offsets, _ = buffers.calls("baseline", baseline)
    c_values, c_offsets, _ = buffers.calls("candidate", candidate)
    doc, table = _native.stats_compare_unpaired(
        b_values,
        c_values,
        options.model_dump_json().encode(),
        baseline_offsets=b_offsets,
        candidate_offsets=c_offsets,
    )
    return _result(doc, table)


def constraint(
    baseline: Any,
    candidate: Any,
    *,
    max_regression_pct: float | None = None,
    max_regression: float | None = None,
    direction: Direction = "lower",
    estimator: Estimator = "median",
    ci_method: CiMethod = "bca",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    minimum_pairs: int = 10,
    within_call: WithinCall = "median",
    metric: str = "value",
    scope: str = "",
    valid: Sequence[bool] | None = None,
) -> ConstraintResult:
    """Non-inferiority of a guardrail metric: the candidate may be worse by at most a limit.

    Give ``max_regression_pct`` (relative, on the log scale: regression = -l) or ``max_regression``
    (absolute, in the metric's units: cand - ref for lower-is-better). ``passed`` if the regression's
    CI high <= limit, ``failed`` if its CI low > limit, else ``inconclusive`` (always below
    ``minimum_pairs``).
    """
    if (max_regression_pct is None) == (max_regression is None):
        raise InputError(
            "statistics_invalid",
            "give exactly one of max_regression_pct and max_regression",
            path="limit",
        )
    limit: dict[str, Any] = (
        {"kind": "relative", "max_regression_pct": max_regression_pct}
        if max_regression_pct is not None
        else {"kind": "absolute", "max_regression": max_regression}
    )
    options = CompareOptions(
        direction=direction,
        estimator=estimator,
        ci_method=ci_method,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        minimum_pairs=minimum_pairs,
        within_call=within_call,
        metric=metric,
        scope=scope,
    )
    b_values, b_offsets, _ = buffers.calls("baseline", baseline)
    c_values, c_offsets, _ = buffers.calls("candidate", candidate)
    doc = _native.stats_constraint(
        b_values,
        c_values,
        options.model_dump_json().encode(),
        json.dumps(limit).encode(),
        baseline_offsets=b_offsets,
        candidate_offsets=c_offsets,
        valid=None if valid is None else buffers.flags("valid", valid, {True: 1, False: 0}),
    )
    return ConstraintResult.model_validate_json(doc)


def guardrail(
    candidate: Any,
    *,
    limit: float,
    op: str = "le",
    mode: str = "ci",
    estimator: Estimator = "median",
    ci_method: CiMethod = "bca",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    minimum_pairs: int = 10,
    within_call: WithinCall = "median",
    metric: str = "value",
    scope: str = "",
    valid: Sequence[bool] | None = None,
) -> GuardrailResult:
    """An absolute limit on the candidate's values (``op`` "le" or "ge"; values may be 0).

    ``mode="every_call"``: any violating sample of a valid call fails, at any pair count.
    ``mode="ci"``: the CI of the estimator over the candidate's per-call values must clear the limit.
    """
    options = CompareOptions(
        estimator=estimator,
        ci_method=ci_method,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        minimum_pairs=minimum_pairs,
        within_call=within_call,
        metric=metric,
        scope=scope,
    )
    c_values, c_offsets, _ = buffers.calls("candidate", candidate)
    doc = _native.stats_guardrail(
        c_values,
        options.model_dump_json().encode(),
        op,
        float(limit),
        mode,
        candidate_offsets=c_offsets,
        valid=None if valid is None else buffers.flags("valid", valid, {True: 1, False: 0}),
    )
    return GuardrailResult.model_validate_json(doc)


def noise(
    first: Any,
    second: Any,
    *,
    at: Sequence[int] = (),
    min_effect: float = 0.0,
    estimator: Estimator = "median",
    confidence: float = 0.95,
    power: float = 0.8,
    resamples: int = 10_000,
    seed: int = 0,
    minimum_pairs: int = 10,
    within_call: WithinCall = "median",
    metric: str = "value",
    orders: Sequence[str] | None = None,
) -> NoiseResult:
    """Noise from A/A pairs (the same subject measured twice per pair).

    Reports the SD (and 1.4826·MAD) of the pair log ratios, the CI half-width and the minimum detectable
    effect at each pair count in ``at`` (default: n, ``minimum_pairs``, 2n), the pairs needed to detect
    ``min_effect`` with ``power``, and the A/A comparison itself (warning ``aa_effect_detected`` when its
    CI excludes 0).
    """
    from gpuopt._tables import to_polars

    options = CompareOptions(
        minimum_effect_pct=min_effect,
        estimator=estimator,
        confidence=confidence,
        power=power,
        resamples=resamples,
        seed=seed,
        minimum_pairs=minimum_pairs,
        within_call=within_call,
        metric=metric,
    )
    a_values, a_offsets, _ = buffers.calls("first", first)
    b_values, b_offsets, _ = buffers.calls("second", second)
    doc, table = _native.stats_noise(
        a_values,
        b_values,
        options.model_dump_json().encode(),
        [int(k) for k in at],
        first_offsets=a_offsets,
        second_offsets=b_offsets,
        orders=None if orders is None else buffers.flags("orders", orders, {"AB": 0, "BA": 1}),
    )
    return NoiseResult(report=NoiseReport.model_validate_json(doc), pairs=to_polars(table), files=[])


def summarize(calls: Sequence[Sequence[float]], within_call: WithinCall = "median") -> list[float]:
    """Each call's within-call summary: the value a pair holds for that call, exactly as the comparisons
    compute it (type-7 quantiles, the mean, min or max of the call's samples)."""
    values = [float(v) for call in calls for v in call]
    offsets = [0]
    for call in calls:
        offsets.append(offsets[-1] + len(call))
    out = _native.stats_summarize(
        struct.pack(f"<{len(values)}d", *values), struct.pack(f"<{len(offsets)}Q", *offsets), within_call
    )
    return list(struct.unpack(f"<{len(calls)}d", out))


def pair_effects(
    reference: Sequence[float],
    candidate: Sequence[float],
    *,
    direction: Direction = "lower",
    effect_scale: EffectScale = "log_ratio",
) -> list[float | None]:
    """Each pair's effect as the comparisons compute it (> 0 = candidate better); None where a value is
    not finite and positive."""
    n = len(reference)
    out = _native.stats_pair_effects(
        struct.pack(f"<{n}d", *reference),
        struct.pack(f"<{len(candidate)}d", *candidate),
        direction,
        effect_scale,
    )
    return [None if math.isnan(v) else v for v in struct.unpack(f"<{n}d", out)]


def mde_pct(sd_log: float, n: int, *, estimator: Estimator, confidence: float, power: float) -> float:
    """The minimum detectable effect at ``n`` pairs that an A/A SD (log scale) predicts, as a percentage:
    100·expm1((z_c + z_p)·k·s/√n), the noise report's normal approximation."""
    return _native.stats_mde_pct(sd_log, n, estimator, confidence, power)


def input_seed(plan_seed: int, pair_index: int, case_id: str) -> int:
    """The 53-bit seed a workload driver receives for one call: ``key("input", plan_seed, pair_index,
    case_id) >> 11`` of ``gpuopt.rng/v1``, identical for both subjects of a pair."""
    return _native.stats_input_seed(plan_seed, pair_index, case_id)


def schedule(pairs: int, seed: int) -> Schedule:
    """The seeded balanced AB/BA schedule of ``pairs`` pairs (AB = reference first)."""
    return Schedule.model_validate_json(_native.stats_schedule(pairs, seed))


def simulate(options: SimulationOptions | None = None, **fields: Any) -> SimulationReport:
    """Runs the honesty harness: simulated A/A or A/B experiments through the real comparison."""
    opts = options or SimulationOptions(**fields)
    return SimulationReport.model_validate_json(_native.stats_simulate(opts.model_dump_json().encode()))


def _unmodeled(files: list[SampleFileFacts]) -> list[UnmodeledItem]:
    """The columns no option reads, each counted over the rows that carried it."""
    from gpuopt.models.envelope import UnmodeledItem

    seen: dict[str, int] = {}
    for f in files:
        for name in f.unmodeled_columns:
            seen[name] = seen.get(name, 0) + f.rows
    return [UnmodeledItem(kind="column", name=name, count=count) for name, count in seen.items()]


def compare_document(
    baseline: str | Path,
    candidate: str | Path,
    *,
    column: str | None = None,
    key_column: str | None = None,
    case_column: str | None = None,
    order_column: str | None = None,
    block_column: str | None = None,
    unpaired: bool = False,
    options: CompareOptions | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[CompareData]:
    """``gpuopt stats compare``: :func:`compare_files` as its document, the pairs (unpaired: the values)
    in ``sort`` order with the first ``limit`` rows (0: all)."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.stats import CompareData
    from gpuopt.provenance import file_identity

    result = compare_files(
        baseline,
        candidate,
        column=column,
        key_column=key_column,
        case_column=case_column,
        order_column=order_column,
        block_column=block_column,
        unpaired=unpaired,
        options=options,
    )
    name = "values" if unpaired else "pairs"
    pairs = sorted_by(result.pairs, sort)
    data = CompareData(files=result.files, comparison=result.result, pairs=table_data(name, pairs, limit))
    inputs = [file_identity(baseline), file_identity(candidate)]
    return Answer(data, inputs, _unmodeled(result.files), {name: pairs})


def noise_document(
    path: str | Path,
    *,
    first_column: str = "a",
    second_column: str = "b",
    key_column: str | None = None,
    order_column: str | None = None,
    at: Sequence[int] = (),
    options: CompareOptions | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[NoiseData]:
    """``gpuopt stats noise``: :func:`noise_file` as its document, the A/A pairs in ``sort`` order with the
    first ``limit`` rows (0: all)."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.stats import NoiseData
    from gpuopt.provenance import file_identity

    result = noise_file(
        path,
        first_column=first_column,
        second_column=second_column,
        key_column=key_column,
        order_column=order_column,
        at=at,
        options=options,
    )
    pairs = sorted_by(result.pairs, sort)
    data = NoiseData(files=result.files, noise=result.report, pairs=table_data("pairs", pairs, limit))
    return Answer(data, [file_identity(path)], _unmodeled(result.files), {"pairs": pairs})
