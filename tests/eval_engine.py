"""The engine's comparison of a comparison result's primary, run again from the result's own samples table
and Target: what ``gpuopt.stats.compare`` returns for the same samples and settings as the evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from gpuopt import stats
from gpuopt.models.stats import Comparison


def engine_comparison(result: Any, samples: Path, target: Path) -> Comparison:
    """The primary of ``result`` compared by the engine over its valid pairs (their samples read from the
    invocation's ``samples.parquet``), with the Target's settings and the request digest as scope."""
    t = json.loads(target.read_text())
    metric = t["objective"]["primary"]
    decl, s = t["metrics"][metric], t["statistics"]
    table = pl.read_parquet(samples).filter(pl.col("metric") == metric).sort("index")
    pairs = [p for p in result.pairs if p.valid]

    def side(role: str) -> list[list[float]]:
        return [
            table.filter(
                (pl.col("pair") == p.pair_index) & (pl.col("case") == p.case_id) & (pl.col("role") == role)
            )["value"].to_list()
            for p in pairs
        ]

    out = stats.compare(
        side("reference"),
        side("candidate"),
        direction=decl["direction"],
        min_effect=float(t["objective"]["minimum_effect_pct"]),
        effect_scale=s["effect_scale"],
        power=s["power"],
        cases=[p.case_id for p in pairs],
        case_weights=t["test_set"].get("case_weights"),
        orders=[p.order for p in pairs],
        estimator=s["estimator"],
        ci_method=s["ci_method"],
        confidence=s["confidence"],
        resamples=s["resamples"],
        seed=s["seed"],
        minimum_pairs=s["minimum_pairs"],
        within_call=decl["within_call"],
        metric=metric,
        scope=result.request_digest,
    )
    return out.result
