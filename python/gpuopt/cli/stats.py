"""``gpuopt stats compare`` and ``gpuopt stats noise``: paired statistics over sample files.

Each command is its options and one call (:func:`gpuopt.stats.compare_document`,
:func:`gpuopt.stats.noise_document`), rendered here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuopt._effects import ratio_note
from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import FiniteFloatRange, count
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section
from gpuopt.cli._tables import answered, current_sort, render_frame, table_options
from gpuopt.errors import InputError

if TYPE_CHECKING:
    from gpuopt.models.stats import Comparison, NoiseReport

F = TypeVar("F", bound=Callable[..., Any])

_FILE = click.Path(path_type=Path, dir_okay=False)


def _stat_options(fn: F) -> F:
    """The statistics settings shared by compare and noise."""
    options = [
        click.option(
            "--seed", type=click.IntRange(0, 2**53 - 1), default=0, show_default=True, help="Bootstrap seed."
        ),
        click.option(
            "--resamples",
            type=click.IntRange(1000, 10_000_000),
            default=10_000,
            show_default=True,
            help="Bootstrap replicates.",
        ),
        click.option(
            "--confidence",
            type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
            default=0.95,
            show_default=True,
            help="Confidence level of the intervals (0-1).",
        ),
        click.option(
            "--estimator",
            type=click.Choice(["median", "mean"]),
            default="median",
            show_default=True,
            help="Median or mean of the per-pair log ratios (the mean is the geometric-mean ratio).",
        ),
        click.option(
            "--within-call",
            type=click.Choice(["median", "mean", "min", "max", "p50", "p90", "p95", "p99"]),
            default="median",
            show_default=True,
            help="How several samples of one call (rows sharing a key) become one value.",
        ),
        click.option(
            "--minimum-pairs",
            type=count(2),
            default=10,
            show_default=True,
            help="Fewer valid pairs give inconclusive, never a rejection.",
        ),
        click.option(
            "--min-effect",
            type=FiniteFloatRange(min=0),
            default=0.0,
            show_default=True,
            help="Minimum effect m in percent.",
        ),
        click.option("--key-column", help="Pair by this column (rows sharing a key are one call's samples)."),
        click.option("--order-column", help="Column holding each pair's order, AB or BA."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f} %"


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"[{low:+.3f} %, {high:+.3f} %]"


def _ratio(c: Comparison, pct: float | None) -> str:
    return ratio_note(pct) if c.effect_scale == "log_ratio" else ""


def _render_comparison(c: Comparison) -> str:
    method = c.ci_method_run or c.ci_method
    sided = "pairs" if c.pairing == "paired" else "per side"
    rows: list[tuple[str, object]] = [
        ("verdict", f"{c.verdict} ({c.verdict_reason})"),
        (
            "effect",
            f"{_pct(c.estimate_pct)}{_ratio(c, c.estimate_pct)} {_interval(c.ci_low_pct, c.ci_high_pct)}"
            "  (> 0: candidate better)",
        ),
        ("change", f"{_pct(c.change_pct)} {_interval(c.change_ci_low_pct, c.change_ci_high_pct)}"),
        ("minimum effect", f"{c.minimum_effect_pct} %"),
        ("n", f"{c.n} valid {sided} ({c.n_invalid} invalid), minimum {c.minimum_pairs}"),
        (
            "method",
            f"{c.estimator} of {c.effect_scale}, {method} {100 * c.confidence:g} %, "
            f"{c.resamples} resamples, seed {c.seed}, {c.rng}",
        ),
    ]
    if c.pairs_needed_estimate is not None:
        rows.append(("pairs needed (est.)", c.pairs_needed_estimate))
    if c.spread is not None:
        rows.append(
            (
                "spread",
                f"SD {c.spread.sd_log:.5f} (robust {c.spread.robust_sd_log:.5f}); MDE at {c.n} pairs "
                f"{c.spread.mde_pct:.3f} % (robust {c.spread.robust_mde_pct:.3f} %, power {c.spread.power})",
            )
        )
    if c.orders is not None:
        rows.append(
            (
                "orders",
                f"{c.orders.ab_pairs} AB, {c.orders.ba_pairs} BA, effect {_pct(c.orders.order_effect_pct)}",
            )
        )
    for w in c.warnings:
        rows.append(("warning", f"{w.code}: {w.message}"))
    title = f"Comparison ({c.pairing}, metric {c.metric}, {c.direction} is better)"
    parts = [section(title, rows)]
    if c.per_case:
        parts.append(
            section(
                "Per case (reported, not used for the verdict)",
                [
                    (
                        p.case_id,
                        f"{_pct(p.estimate_pct)}{_ratio(c, p.estimate_pct)} "
                        f"{_interval(p.ci_low_pct, p.ci_high_pct)}",
                    )
                    for p in c.per_case
                ],
            )
        )
    if c.per_block:
        resampled = c.blocks is not None and c.blocks.resampled
        column = c.blocks.column if c.blocks is not None else "?"
        unit = "pairs" if c.pairing == "paired" else "calls"
        against = "" if c.pairing == "paired" else "; each block against the other side's pooled calls"
        parts.append(
            section(
                f"Per block of {column!r} "
                f"({'blocks resampled for the CI' if resampled else 'diagnosed only'}{against})",
                [
                    (
                        p.case_id if p.side is None else f"{p.side} {p.case_id}",
                        f"{_pct(p.estimate_pct)} {_interval(p.ci_low_pct, p.ci_high_pct)} ({p.n} {unit})",
                    )
                    for p in c.per_block
                ],
            )
        )
    if c.tails:
        parts.append(
            section(
                "Tails",
                [
                    (
                        t.quantile,
                        f"{_pct(t.estimate_pct)} {_interval(t.ci_low_pct, t.ci_high_pct)} {t.verdict}",
                    )
                    for t in c.tails
                ],
            )
        )
    return "\n\n".join(parts)


@click.group(cls=Group)
def stats() -> None:
    """Paired statistics: bootstrap CIs of effects and verdicts against a minimum effect."""


@stats.command("compare")
@click.argument("baseline", type=_FILE, help="The baseline's samples: JSON Lines or CSV (TSV).")
@click.argument("candidate", type=_FILE, help="The candidate's samples, in the same form as BASELINE.")
@click.option("--column", help="The value column (default: the only column, or one named 'value').")
@click.option("--case-column", help="Column naming each pair's case; the bootstrap is stratified by case.")
@click.option(
    "--direction",
    type=click.Choice(["lower", "higher"]),
    default="lower",
    show_default=True,
    help="Whether lower (durations) or higher (throughput) values are better.",
)
@click.option(
    "--ci-method",
    type=click.Choice(["bca", "percentile"]),
    default="bca",
    show_default=True,
    help="Bootstrap interval: bca (bias-corrected, accelerated; percentile if degenerate) or percentile.",
)
@click.option(
    "--tails", is_flag=True, help="Also report p50/p95/p99 effects where calls carry enough samples."
)
@click.option("--unpaired", is_flag=True, help="Treat the files as two independent samples.")
@click.option(
    "--block-column",
    help="Column naming each row's block (process, run): the bootstrap resamples whole blocks.",
)
@click.option("--metric", default="value", show_default=True, help="Metric name (part of the stream key).")
@_stat_options
@table_options
@command("gpuopt.stats.compare/v1")
def compare(
    baseline: Path,
    candidate: Path,
    column: str | None,
    case_column: str | None,
    direction: str,
    ci_method: str,
    tails: bool,
    unpaired: bool,
    block_column: str | None,
    metric: str,
    seed: int,
    resamples: int,
    confidence: float,
    estimator: str,
    within_call: str,
    minimum_pairs: int,
    min_effect: float,
    key_column: str | None,
    order_column: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Compare a candidate with a baseline from two sample files (JSON Lines or CSV).

    Each file holds one value per line, or a named column (--column). Row i of each file forms pair i,
    or pairs match by --key-column (rows sharing a key are the samples of one call, summarized by
    --within-call). The effect per pair is the log ratio, reported as a percent improvement (> 0:
    candidate better); the CI is BCa (or percentile) bootstrap; the verdict is improved (CI low ≥ m),
    regressed (CI high ≤ -m), equivalent (CI inside ±m, m > 0) or inconclusive with the pairs the
    observed spread says would be needed. Values must be finite and > 0 (else exit 2, naming the line).

    \b
    Examples:
      gpuopt stats compare base.txt cand.txt --min-effect 2
      gpuopt stats compare base.csv cand.csv --column ms --key-column run --json
      gpuopt stats compare a.jsonl b.jsonl --unpaired --direction higher --out pairs.parquet
      gpuopt stats compare base.csv cand.csv --column ms --block-column run
      gpuopt stats compare a.csv b.csv --unpaired --column ns --block-column process

    Rows that come in blocks (the same process or run) are not independent: --block-column NAME
    resamples whole blocks (with --unpaired, each side's blocks on their own) and reports each block's
    effect. Without it, a column named block, run, run_id, process, pid, worker, session or rank in both
    files is read as blocks for a check: blocks whose CIs do not overlap (unpaired: blocks of one side)
    warn dependent_samples_suspected, with the per-block effects; an unpaired side whose rows come from
    one block warns blocks_too_few.
    """
    from gpuopt import stats as lib
    from gpuopt.models.stats import CompareOptions

    options = CompareOptions(
        metric=metric,
        direction=direction,
        minimum_effect_pct=min_effect,
        within_call=within_call,
        tails=tails,
        confidence=confidence,
        resamples=resamples,
        minimum_pairs=minimum_pairs,
        seed=seed,
        estimator=estimator,
        ci_method=ci_method,
    )
    answer = lib.compare_document(
        baseline,
        candidate,
        column=column,
        key_column=key_column,
        case_column=case_column,
        order_column=order_column,
        block_column=block_column,
        unpaired=unpaired,
        options=options,
        limit=limit,
        sort=current_sort(),
    )
    return answered(
        answer,
        lambda: f"{_render_comparison(answer.data.comparison)}\n\n{render_frame(answer.table, limit)}",
        out=out,
    )


def _render_noise(r: NoiseReport) -> str:
    rows: list[tuple[str, object]] = [
        ("n", f"{r.n} A/A pairs"),
        ("SD of log ratios", f"{r.sd_log:.6f} ({r.sd_pct:.3f} %), robust {r.robust_sd_log:.6f}"),
        (
            "A/A effect",
            f"{_pct(r.aa.estimate_pct)} {_interval(r.aa.ci_low_pct, r.aa.ci_high_pct)} ({r.aa.verdict})",
        ),
        (
            "method",
            f"{r.method}, {r.estimator} (k = {r.k_factor:.4f}), {100 * r.confidence:g} %, power {r.power}",
        ),
    ]
    if r.pairs_for_minimum_effect is not None:
        rows.append((f"pairs for {r.minimum_effect_pct} %", r.pairs_for_minimum_effect))
    for w in r.warnings:
        rows.append(("warning", f"{w.code}: {w.message}"))
    at = section(
        "Resolution",
        [
            (
                f"{a.n_pairs} pairs",
                f"half-width {a.half_width_pct:.3f} %, MDE {a.mde_pct:.3f} % "
                f"(from the robust SD: {a.robust_half_width_pct:.3f} %, {a.robust_mde_pct:.3f} %)",
            )
            for a in r.at
        ],
    )
    return f"{section(f'Noise (metric {r.metric})', rows)}\n\n{at}"


@stats.command("noise")
@click.argument(
    "aa_file", type=_FILE, help="A/A pairs: JSON Lines or CSV with the two measurements in two columns."
)
@click.option("--first-column", default="a", show_default=True, help="Column of the first A/A value.")
@click.option("--second-column", default="b", show_default=True, help="Column of the second A/A value.")
@click.option("--at", "at_pairs", type=count(1), multiple=True, help="Pair counts to report (repeat).")
@click.option(
    "--power",
    type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
    default=0.8,
    show_default=True,
    help="Power the minimum detectable effect is computed for (0-1).",
)
@click.option("--metric", default="value", show_default=True, help="Metric name (part of the stream key).")
@_stat_options
@table_options
@command("gpuopt.stats.noise/v1")
def noise(
    aa_file: Path,
    first_column: str,
    second_column: str,
    at_pairs: tuple[int, ...],
    power: float,
    metric: str,
    seed: int,
    resamples: int,
    confidence: float,
    estimator: str,
    within_call: str,
    minimum_pairs: int,
    min_effect: float,
    key_column: str | None,
    order_column: str | None,
    limit: int,
    out: Path | None,
) -> Outcome:
    """Measure noise from A/A pairs: the same subject measured twice per pair, in two columns.

    Reports the SD (and 1.4826·MAD) of the pair log ratios, the CI half-width and the minimum detectable
    effect at n pairs, at --minimum-pairs and at 2n (or at each --at), the pairs needed to detect
    --min-effect with --power (normal approximations), and the A/A comparison itself; a CI excluding 0
    warns aa_effect_detected.

    \b
    Examples:
      gpuopt stats noise aa.csv
      gpuopt stats noise aa.jsonl --first-column first_ms --second-column second_ms --min-effect 1
      gpuopt stats noise aa.csv --at 10 --at 50 --json
    """
    from gpuopt import stats as lib
    from gpuopt.models.stats import CompareOptions

    options = CompareOptions(
        metric=metric,
        within_call=within_call,
        confidence=confidence,
        resamples=resamples,
        minimum_pairs=minimum_pairs,
        seed=seed,
        estimator=estimator,
        power=power,
        minimum_effect_pct=min_effect,
    )
    try:
        answer = lib.noise_document(
            aa_file,
            first_column=first_column,
            second_column=second_column,
            key_column=key_column,
            order_column=order_column,
            at=at_pairs,
            options=options,
            limit=limit,
            sort=current_sort(),
        )
    except InputError as exc:
        if exc.code == "column_missing" and exc.message.endswith((f'"{first_column}"', f'"{second_column}"')):
            exc.expected = f"{exc.expected}; --first-column NAME and --second-column NAME choose them"
        raise
    return answered(
        answer, lambda: f"{_render_noise(answer.data.noise)}\n\n{render_frame(answer.table, limit)}", out=out
    )
