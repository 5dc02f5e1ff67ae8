"""Compact views for people: which columns and rows of a table a person reads on screen, and how a cell
reads there. The only module of ``gpuopt.cli`` besides :mod:`gpuopt.cli._people` that works on polars
frames (``tests/test_cli_thin.py``); ``--json`` and ``--out`` always carry the whole table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

_ROOFLINE_COLUMNS = [  # launch_id left out so precision fits in 120 columns (rows stay in launch order)
    "kernel_function",
    "region",
    "arithmetic_intensity_flop_per_byte",
    "achieved_flop_per_s",
    "flop_pct_of_peak",
    "dram_pct_of_peak",
    "precision",
]


def columns(frame: pl.DataFrame, names: list[str] | tuple[str, ...]) -> pl.DataFrame:
    """``frame`` with only those of ``names`` it has, in that order."""
    return frame.select([c for c in names if c in frame.columns])


def without(frame: pl.DataFrame, *names: str) -> pl.DataFrame:
    """``frame`` without the columns ``names``."""
    return frame.drop(*names)


def roofline_points(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """What people read of the roofline: the points that say something (a precision a launch used; a
    launch that used none keeps one row, for its DRAM share) and the key columns; the count hidden."""
    import polars as pl

    if frame.height == 0 or "flop" not in frame.columns:
        return frame, 0
    used = pl.col("flop") > 0
    none_used = ~used.any().over("launch_id")
    first = pl.int_range(pl.len()).over("launch_id") == 0
    kept = frame.filter(used | (none_used & first))
    return columns(kept, _ROOFLINE_COLUMNS), frame.height - kept.height


def path_tree(frame: pl.DataFrame) -> pl.DataFrame:
    """Call paths as a tree: each path's own name indented by its depth, the time columns beside it."""
    import polars as pl

    indented = pl.lit("  ").repeat_by(pl.col("depth") - 1).list.join("") + pl.col("name")
    return frame.select(
        "rank",
        "path_id",
        indented.alias("path"),
        "instances",
        "cpu_inclusive_ns",
        "cpu_exclusive_ns",
        "gpu_inclusive_ns",
        "gpu_exclusive_ns",
        "graph_replay_inclusive_ns",
    )


def compact_signatures(frame: pl.DataFrame) -> pl.DataFrame:
    """Evidence as `/*addr*/ text` lines, pattern lists joined: what fits on a screen."""
    import polars as pl

    def lines(items: list[dict[str, object]]) -> str:
        return "\n".join(f"/*{int(str(e['address'])):04x}*/ {e['text']}" for e in items)

    return frame.select(
        "function",
        "signature",
        "status",
        pl.col("matched_patterns").list.join(" "),
        pl.col("missing_patterns").list.join(" "),
        pl.col("evidence").map_elements(lines, return_dtype=pl.String),
    )


def diff_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """A profile diff's keys as people read them: the change, its interval as one cell, the flag, the
    means, the q-value and the key."""
    import polars as pl

    interval = pl.format(
        "[{}, {}] %",
        pl.col("ci_low_pct").round(1).cast(pl.String),
        pl.col("ci_high_pct").round(1).cast(pl.String),
    ).alias("interval")
    return frame.select(
        "change_pct", interval, "flagged", "baseline_mean_ns", "candidate_mean_ns", "q_value", "key"
    )


def all_null(frame: pl.DataFrame, column: str) -> bool:
    """Whether a non-empty ``frame`` has ``column`` and it holds no value."""
    return bool(frame.height) and column in frame.columns and frame[column].null_count() == frame.height
