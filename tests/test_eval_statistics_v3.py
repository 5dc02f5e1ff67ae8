"""Result format v3 (issue 14 item 3): each metric of a comparison embeds the engine's ``Comparison`` as
``gpuopt.stats.compare`` returns it, instead of a twin that copies its fields; the per-case effects and
order facts are that comparison's. The v2 record here is real: the bundled example's target of the faster
candidate, written by gpuopt at v2 (``tests/data/eval_v2``, with its samples table and Target). It still
reads unchanged; the engine run again on its samples gives exactly its numbers; the same statistics
written as v3 round-trip, embed that comparison, and every view shows the same numbers for both."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from eval_engine import engine_comparison
from gpuopt.errors import InputError
from gpuopt.evaluation import formats, jsonio, store
from gpuopt.evaluation.summary import result_summary
from gpuopt.evaluation.views import handoff, report
from gpuopt.models.evaluation.operations import TargetResult
from gpuopt.models.evaluation.statistics import (
    CaseStat,
    CaseStatV2,
    Statistic,
    Statistics,
    StatisticsV2,
    StatisticV2,
)
from gpuopt.models.stats import Comparison

DATA = Path(__file__).parent / "data" / "eval_v2"
RESULT = DATA / "target" / "result.json"


def _load(data: bytes) -> TargetResult:
    return jsonio.load(TargetResult, data, what="result", max_bytes=jsonio.MAX_RECORD_BYTES)


def _v2() -> TargetResult:
    return _load(RESULT.read_bytes())


def _engine() -> Comparison:
    return engine_comparison(_v2(), DATA / "target" / "samples.parquet", DATA / "target.json")


def _v3_doc(comparison: Comparison) -> dict[str, Any]:
    doc = json.loads(RESULT.read_bytes())
    statistic = Statistic(role="primary", n_invalid=0, comparison=comparison)
    stats = Statistics(primary=statistic, constraints=[], guardrails=[], secondary=[])
    return {**doc, "format": formats.INVOCATION_RESULT, "statistics": stats.model_dump(mode="json")}


def test_a_v2_record_still_reads_unchanged() -> None:
    result = _v2()
    assert result.format == "gpuopt.invocation-result/v2"
    assert isinstance(result.statistics, StatisticsV2)
    p = result.statistics.primary
    assert (p.metric, p.verdict, p.n_valid, p.n_invalid, p.threshold_pct) == (
        "time_ms",
        "improved",
        10,
        0,
        25.0,
    )
    assert (p.estimate_pct, p.ci_low_pct, p.ci_high_pct) == (
        6662.118245477455,
        5659.744782565032,
        7990.912461504619,
    )
    cases = [(c.case_id, c.n_valid, c.estimate_pct) for c in result.statistics.per_case]
    assert cases == [("rows512", 5, 4644.346182364379), ("rows1024", 5, 9910.5881099231)]
    assert jsonio.record_bytes(result) == RESULT.read_bytes()


def test_the_engine_on_the_records_samples_gives_its_numbers() -> None:
    twin, comparison = _v2().statistics, _engine()
    assert isinstance(twin, StatisticsV2)
    p = twin.primary
    copied = ("estimate_log", "ci_low_log", "ci_high_log", "estimate_pct", "ci_low_pct", "ci_high_pct")
    copied += ("change_pct", "ci_method_run", "verdict", "verdict_reason", "pairs_needed_estimate")
    copied += ("metric", "estimator", "ci_method", "confidence", "resamples", "seed", "effect_scale")
    assert {k: getattr(comparison, k) for k in copied} == p.model_dump(include=set(copied))
    assert (comparison.n, comparison.minimum_effect_pct, comparison.warnings) == (10, 25.0, [])
    assert [(c.case_id, c.n, c.estimate_pct, c.ci_low_pct, c.ci_high_pct) for c in comparison.per_case] == [
        (c.case_id, c.n_valid, c.estimate_pct, c.ci_low_pct, c.ci_high_pct) for c in twin.per_case
    ]
    assert comparison.orders == twin.order_effect


def test_v3_embeds_the_engines_comparison_and_round_trips() -> None:
    assert formats.INVOCATION_RESULT == "gpuopt.invocation-result/v3"
    comparison = _engine()
    doc = _v3_doc(comparison)
    assert set(doc["statistics"]["primary"]) == {"role", "n_invalid", "comparison"}
    assert "per_case" not in doc["statistics"] and "order_effect" not in doc["statistics"]
    data = jsonio.record_bytes(doc)
    result = _load(data)
    assert isinstance(result.statistics, Statistics)
    primary = result.statistics.primary
    assert primary.comparison == comparison  # exactly what gpuopt.stats.compare returned
    assert jsonio.record_bytes(result) == data
    assert (primary.metric, primary.verdict, primary.n_valid, primary.threshold_pct) == (
        "time_ms",
        "improved",
        10,
        25.0,
    )
    assert (primary.estimate_pct, primary.ci_low_pct, primary.ci_high_pct, primary.confidence) == (
        6662.118245477455,
        5659.744782565032,
        7990.912461504619,
        0.95,
    )
    cases = result.statistics.per_case
    assert all(isinstance(c, CaseStat) for c in cases)
    assert [(c.case_id, c.n_valid, c.ci_low_pct) for c in cases] == [
        ("rows512", 5, 2569.715024072501),
        ("rows1024", 5, 6892.461908366121),
    ]
    assert [c.model_dump() for c in cases] == [c.model_dump() for c in comparison.per_case]
    assert result.statistics.order_effect == comparison.orders
    orders = comparison.orders
    assert orders is not None and (orders.ab_pairs, orders.ba_pairs) == (4, 6)


def test_a_v3_statistic_answers_every_name_of_the_v2_twin() -> None:
    v2, v3 = _v2().statistics, _load(jsonio.record_bytes(_v3_doc(_engine()))).statistics
    assert isinstance(v2, StatisticsV2) and isinstance(v3, Statistics)
    names = list(StatisticV2.model_fields)
    assert len(names) == 23
    assert {n: getattr(v3.primary, n) for n in names} == {n: getattr(v2.primary, n) for n in names}
    assert v3.primary.verdict_reason == "ci_clears_minimum_effect" and v3.primary.warnings == []
    case_names = list(CaseStatV2.model_fields)
    assert [{n: getattr(c, n) for n in case_names} for c in v3.per_case] == [
        c.model_dump() for c in v2.per_case
    ]
    assert v3.order_effect == v2.order_effect


def test_each_format_only_reads_its_own_shape() -> None:
    v3 = _v3_doc(_engine())
    for fmt in ("gpuopt.invocation-result/v1", "gpuopt.invocation-result/v2"):
        with pytest.raises(InputError) as err:
            _load(jsonio.record_bytes({**copy.deepcopy(v3), "format": fmt}))
        assert err.value.code == "field_invalid"
    v2 = json.loads(RESULT.read_bytes())
    with pytest.raises(InputError) as err:
        _load(jsonio.record_bytes({**v2, "format": formats.INVOCATION_RESULT}))
    assert err.value.code == "field_invalid"


def test_every_view_shows_the_same_numbers_for_v2_and_v3() -> None:
    v2 = _v2()
    v3 = _load(jsonio.record_bytes(_v3_doc(_engine())))
    lines = result_summary(v2)
    assert lines == result_summary(v3)
    assert lines[2] == (
        "primary time_ms: improved +6662.12 % (67.62x better) [+5659.74 %, +7990.91 %] at 0.95 "
        "(10 valid pairs, minimum effect 25 %)"
    )
    assert lines[3] == "primary time_ms case rows512: +4644.35 % [+2569.72 %, +6439.36 %] (5 valid pairs)"
    assert lines[5].startswith("warning per_case_effects_differ: the per-case CIs of time_ms do not overlap")
    expected = "primary time_ms improved +6662.12 % (67.62x better) [+5659.74 %, +7990.91 %]"
    assert handoff._stat(v2) == handoff._stat(v3) == expected
    d2, d3 = v2.model_dump(mode="json"), v3.model_dump(mode="json")
    rows = report._stat_rows(d2["statistics"])
    assert rows == report._stat_rows(d3["statistics"])
    primary = "| time_ms | primary | improved | +6662.12 % (67.62x better) | [+5659.74 %, +7990.91 %] "
    primary += "| 10 | 25 |"
    assert primary in rows
    assert "| rows1024 | 5 | +9910.59 % (100x better) | [+6892.46 %, +13748.70 %] |" in rows
    keys = store.ledger_keys(d2)
    assert keys == store.ledger_keys(d3)
    assert (keys["primary_verdict"], keys["primary_estimate_pct"]) == ("improved", 6662.118245477455)
