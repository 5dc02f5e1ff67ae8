"""Models of the paired statistics engine: options, comparisons, noise, schedules, simulations.

Every model mirrors a JSON document the Rust engine (``rust/src/stats``) produces. Effects are on the
log-ratio scale ``l = ln(ref/cand)`` (lower is better) or ``ln(cand/ref)`` (higher is better), so ``l > 0``
always means "candidate better"; ``*_pct`` fields give ``100·(e^l - 1)``, ``change*_pct`` the raw change
``100·(cand/ref - 1)``. Random draws come from ``gpuopt.rng/v1`` (named in ``rng``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData

Direction = Literal["lower", "higher"]
EffectScale = Literal["log_ratio", "arithmetic_pct"]
Estimator = Literal["median", "mean"]
CiMethod = Literal["bca", "percentile"]
WithinCall = Literal["median", "mean", "min", "max", "p50", "p90", "p95", "p99"]
Verdict = Literal["improved", "regressed", "equivalent", "inconclusive"]
VerdictReason = Literal[
    "too_few_pairs",
    "ci_clears_minimum_effect",
    "ci_clears_minimum_regression",
    "ci_inside_equivalence_band",
    "ci_spans_threshold",
]
Order = Literal["AB", "BA"]


class CompareOptions(Model):
    """What a comparison computes. The defaults are the engine's (and the specification's)."""

    metric: str = Field(default="value", description="The metric's name; part of every bootstrap stream key")
    direction: Direction = "lower"
    minimum_effect_pct: float = Field(default=0.0, ge=0, description="Minimum effect m (%) for verdicts")
    within_call: WithinCall = Field(default="median", description="How a call's samples become one value")
    tails: bool = Field(default=False, description="Also report p50/p95/p99 effects where calls allow")
    confidence: float = Field(default=0.95, gt=0, lt=1)
    resamples: int = Field(default=10_000, ge=1, le=10_000_000)
    minimum_pairs: int = Field(default=10, ge=2, description="Fewer valid pairs give inconclusive")
    seed: int = Field(default=0, ge=0, le=2**53 - 1)
    estimator: Estimator = "median"
    ci_method: CiMethod = "bca"
    effect_scale: EffectScale = Field(
        default="log_ratio", description="arithmetic_pct (parity mode) needs median + percentile"
    )
    power: float = Field(default=0.8, gt=0, lt=1, description="Power for the minimum detectable effect")
    scope: str = Field(default="", description="What the comparison belongs to (a request digest)")
    noise_sd_log: float | None = Field(
        default=None, ge=0, description="SD of A/A log ratios, to judge the minimum effect's resolution"
    )


class BcaFacts(Model):
    """BCa diagnostics: bias correction z0 and acceleration a."""

    z0: float | None = Field(description="Bias correction z0; null when degenerate")
    acceleration: float | None = Field(description="Acceleration a (jackknife); null when degenerate")


class EffectEstimate(Model):
    """An estimate and its confidence interval, on the effect scale and as percentages."""

    n: int = Field(description="Valid pairs (paired) or the smaller side (unpaired)")
    estimate_log: float | None = Field(description="Estimate of l (log-ratio scale only)")
    ci_low_log: float | None = Field(description="Lower end of the CI of l (log-ratio scale only)")
    ci_high_log: float | None = Field(description="Upper end of the CI of l (log-ratio scale only)")
    estimate_pct: float | None = Field(description="Percent improvement; > 0 means candidate better")
    ci_low_pct: float | None = Field(description="Lower end of the CI as percent improvement")
    ci_high_pct: float | None = Field(description="Upper end of the CI as percent improvement")
    change_pct: float | None = Field(description="Raw change of the candidate, 100·(cand/ref - 1)")
    change_ci_low_pct: float | None = Field(
        description="Lower end of the CI of the raw change 100·(cand/ref - 1)"
    )
    change_ci_high_pct: float | None = Field(description="Upper end of the CI of the raw change")
    ci_method_run: CiMethod | None = Field(description="The interval that ran (percentile if BCa degenerate)")
    bca: BcaFacts | None = Field(description="BCa diagnostics; null when the interval is not BCa")


class StatsWarning(Model):
    code: str = Field(description="Stable warning code (aa_effect_detected, ...)")
    message: str = Field(description="What it means, for people")


class Spread(Model):
    """The observed spread of the pair log ratios and what it resolves (normal approximations)."""

    sd_log: float = Field(description="Sample SD of the valid pairs' log ratios")
    robust_sd_log: float = Field(description="1.4826·MAD")
    half_width_pct: float = Field(description="CI half-width the spread predicts at n")
    mde_pct: float = Field(description="Minimum detectable effect at n for the power")
    power: float = Field(description="The power the MDE is computed for")
    pairs_for_minimum_effect: int | None = Field(
        description="Pairs the SD predicts for the minimum effect at that power; null when m = 0"
    )
    robust_half_width_pct: float = Field(description="Half-width from the robust SD (1.4826·MAD)")
    robust_mde_pct: float = Field(description="MDE from the robust SD: the better basis for a median")
    robust_pairs_for_minimum_effect: int | None = Field(description="The same from the robust SD")
    method: Literal["normal_approx"] = Field(
        description="normal_approx: normal-theory formulas, not a simulation"
    )


class Resolution(Model):
    """Whether the minimum effect is above the MDE an A/A noise SD predicts at n."""

    noise_sd_log: float = Field(description="The A/A SD given (--noise-sd-log)")
    mde_pct: float = Field(description="MDE that SD predicts at n (%)")
    minimum_effect_pct: float = Field(description="The minimum effect asked for (%)")
    status: Literal["resolvable", "below_mde"] = Field(
        description="resolvable (minimum effect >= MDE) or below_mde"
    )


class CaseEffect(EffectEstimate):
    """The effect within one case: reported, never used for the verdict."""

    case_id: str = Field(
        description="The case the effect was estimated within (gpuopt stats compare: the --case-column value)"
    )


class BlockEffect(EffectEstimate):
    """The effect within one block (process, run) of the rows: reported, never used for the verdict."""

    case_id: str = Field(description="The block's label")
    side: Literal["baseline", "candidate"] | None = Field(
        default=None,
        description="Unpaired only: the side whose calls form the block; its effect is the block's calls "
        "against the other side's pooled estimate. Null for paired blocks (the block's pairs' effects)",
    )


class TailEffect(EffectEstimate):
    """The effect on a within-call quantile (latency tails), judged like the primary."""

    quantile: WithinCall = Field(description="The within-call quantile compared (p95, ...)")
    verdict: Verdict = Field(
        description="improved, regressed, equivalent or inconclusive, judged like the primary"
    )
    verdict_reason: VerdictReason = Field(description="Which rule gave the verdict")
    pairs_needed_estimate: int | None = Field(description="Inconclusive: pairs projected from the spread")


class TailUnavailable(Model):
    quantile: WithinCall = Field(description="A tail quantile that could not be compared")
    samples_needed_per_call: int = Field(description="Samples per call the quantile needs")
    samples_min_per_call: int = Field(description="The fewest samples a call held")


class OrderFacts(Model):
    ab_pairs: int = Field(description="Valid pairs run baseline first")
    ba_pairs: int = Field(description="Valid pairs run candidate first")
    order_effect_pct: float | None = Field(description="(mean l over AB - mean l over BA)/2, as %")


class BlockFacts(Model):
    """Pairs (or an unpaired side's calls) grouped in blocks (process, run, worker): what the comparison
    did with them."""

    column: str = Field(description="The block column of the input")
    blocks: int = Field(description="Blocks holding at least one valid pair (unpaired: of both sides)")
    resampled: bool = Field(
        description="True: the CI resampled whole blocks (--block-column; unpaired: each side's own)"
    )
    disagree: bool = Field(
        description="True when the per-block CIs do not all overlap (unpaired: within one side)"
    )


class Comparison(EffectEstimate):
    """The result of one comparison: estimate, CI, verdict and the settings that produced them."""

    pairing: Literal["paired", "unpaired"] = Field(
        description="paired (pairs of calls) or unpaired (two independent sides)"
    )
    metric: str = Field(
        description="The metric compared (gpuopt stats compare: --metric); part of every bootstrap stream key"
    )
    direction: Direction = Field(description="lower or higher is better")
    effect_scale: EffectScale = Field(description="log_ratio, or arithmetic_pct (parity mode)")
    estimator: Estimator = Field(description="median or mean of the per-pair effects")
    within_call: WithinCall = Field(description="How a call's samples became one value")
    ci_method: CiMethod = Field(description="The interval method asked for")
    confidence: float = Field(description="Confidence level of the CI")
    resamples: int = Field(description="Bootstrap resamples")
    seed: int = Field(description="Seed of the bootstrap streams")
    rng: str = Field(description="The random-number generator, e.g. gpuopt.rng/v1")
    scope: str = Field(description="What the comparison belongs to (a request digest; empty for the CLI)")
    n_invalid: int = Field(description="Pairs left out (a side missing, not positive or not finite)")
    n_baseline: int | None = Field(description="Unpaired: size of the baseline side")
    n_candidate: int | None = Field(description="Unpaired: size of the candidate side")
    minimum_pairs: int = Field(description="Fewer valid pairs give inconclusive (too_few_pairs)")
    minimum_effect_pct: float = Field(description="Minimum effect m (%) the verdict is judged against")
    threshold_log: float | None = Field(description="τ = ln(1 + m/100)")
    verdict: Verdict = Field(description="improved, regressed, equivalent or inconclusive")
    verdict_reason: VerdictReason = Field(description="Which rule gave the verdict")
    pairs_needed_estimate: int | None = Field(
        description="Inconclusive: ⌈n·(h/d)²⌉ pairs projected from the observed spread (per side if unpaired)"
    )
    spread: Spread | None = Field(
        description="The observed spread and what it resolves; null below two valid pairs"
    )
    resolution: Resolution | None = Field(
        description="Whether m is above the MDE an A/A SD predicts; null without --noise-sd-log"
    )
    per_case: list[CaseEffect] = Field(
        description="The effect within each case (reported, never used for the verdict)"
    )
    per_block: list[BlockEffect] = Field(
        default_factory=list, description="The effect within each block (case_id = the block's label)"
    )
    blocks: BlockFacts | None = Field(
        default=None, description="Rows grouped in blocks; null without a block column"
    )
    orders: OrderFacts | None = Field(
        description="AB/BA balance and order effect; null when orders are not recorded"
    )
    tails: list[TailEffect] = Field(description="Effects on within-call quantiles (with --tails)")
    tails_unavailable: list[TailUnavailable] = Field(
        description="Tail quantiles the calls hold too few samples for"
    )
    warnings: list[StatsWarning] = Field(description="Warnings about the input or the result")


class NoiseAt(Model):
    n_pairs: int = Field(description="Pairs this row is for")
    half_width_log: float = Field(description="CI half-width of l at n_pairs")
    half_width_pct: float = Field(description="The same as %")
    mde_log: float = Field(description="Minimum detectable effect of l at n_pairs and the power")
    mde_pct: float = Field(description="The same as %")
    robust_half_width_pct: float = Field(description="Half-width from the robust SD (%)")
    robust_mde_pct: float = Field(description="MDE from the robust SD (%)")


class NoiseReport(Model):
    """What A/A pairs say about a measurement's noise (normal approximations)."""

    metric: str = Field(
        description="The metric (gpuopt stats noise: --metric); part of every bootstrap stream key"
    )
    n: int = Field(description="Valid A/A pairs")
    estimator: Estimator = Field(description="median or mean")
    mean_log: float = Field(description="Mean of the A/A log ratios")
    median_log: float = Field(description="Median of the A/A log ratios")
    sd_log: float = Field(description="Sample SD of the A/A log ratios")
    robust_sd_log: float = Field(description="1.4826·MAD of the A/A log ratios")
    sd_pct: float = Field(description="100·(exp(sd_log) - 1)")
    confidence: float = Field(description="Confidence level used")
    power: float = Field(description="Power used for the MDE")
    k_factor: float = Field(description="1 for the mean, √(π/2) for the median")
    z_confidence: float = Field(description="Normal quantile of the confidence")
    z_power: float = Field(description="Normal quantile of the power")
    method: Literal["normal_approx"] = Field(description="normal_approx: normal-theory formulas")
    at: list[NoiseAt] = Field(description="Half-width and MDE at several pair counts")
    minimum_effect_pct: float = Field(description="The minimum effect asked for (%)")
    pairs_for_minimum_effect: int | None = Field(
        description="Pairs needed to detect it at the power; null when m = 0"
    )
    robust_pairs_for_minimum_effect: int | None = Field(description="The same from the robust SD")
    aa: Comparison = Field(description="The A/A comparison itself at m = 0")
    warnings: list[StatsWarning] = Field(
        description="Warnings (aa_effect_detected when the A/A CI excludes 0, ...)"
    )


class RelativeLimit(Model):
    kind: Literal["relative"] = Field(
        default="relative", description="Always relative: the limit is a percentage of the reference"
    )
    max_regression_pct: float = Field(ge=0, description="The candidate may be worse by at most this %")


class AbsoluteLimit(Model):
    kind: Literal["absolute"] = Field(
        default="absolute", description="Always absolute: the limit is in the metric's units"
    )
    max_regression: float = Field(ge=0, description="At most this much worse, in the metric's units")


ConstraintStatus = Literal["passed", "failed", "inconclusive"]


class ConstraintResult(Model):
    """Non-inferiority: passed if the regression's CI high <= limit, failed if its CI low > limit."""

    metric: str = Field(description="The constrained metric")
    direction: Direction = Field(description="lower or higher is better: which way is a regression")
    limit: RelativeLimit | AbsoluteLimit = Field(
        discriminator="kind",
        description="How much worse the candidate may be: a percentage (relative) or metric units (absolute)",
    )
    n: int = Field(description="Valid pairs used")
    n_invalid: int = Field(description="Pairs left out (a side missing, not positive or not finite)")
    minimum_pairs: int = Field(description="Fewer valid pairs than this give inconclusive, never failed")
    estimator: Estimator = Field(description="median or mean of the per-pair regressions")
    confidence: float = Field(description="Confidence level of the CI")
    resamples: int = Field(description="Bootstrap resamples")
    seed: int = Field(description="Seed of the bootstrap streams")
    rng: str = Field(description="The random-number generator, e.g. gpuopt.rng/v1")
    regression_estimate: float | None = Field(description="Relative: % worse; absolute: metric units")
    regression_ci_low: float | None = Field(
        description="Low end of the regression's CI (same unit as regression_estimate)"
    )
    regression_ci_high: float | None = Field(
        description="High end of the regression's CI (same unit): passed when at or below the limit"
    )
    status: ConstraintStatus = Field(
        description="passed (CI high <= limit), failed (CI low > limit) or inconclusive (otherwise, or too "
        "few pairs)"
    )


class GuardrailResult(Model):
    """An absolute limit on the candidate's values: every call, or the CI of the estimator."""

    metric: str = Field(description="The metric limited")
    op: Literal["le", "ge"] = Field(description="le: the candidate's values must be <= limit; ge: >= limit")
    limit: float = Field(description="The limit, in the metric's units")
    mode: Literal["every_call", "ci"] = Field(
        description="every_call: every sample of every valid pair must satisfy it; ci: the CI of the "
        "estimator over the candidate's per-pair values is judged"
    )
    n: int = Field(description="Valid pairs checked")
    minimum_pairs: int = Field(description="ci mode: fewer valid pairs give inconclusive")
    estimate: float | None = Field(
        description="ci mode: the estimator over the candidate's per-pair values (metric units); null in "
        "every_call mode"
    )
    ci_low: float | None = Field(description="ci mode: low end of its CI (metric units); null otherwise")
    ci_high: float | None = Field(description="ci mode: high end of its CI (metric units); null otherwise")
    violations: list[tuple[int, int]] = Field(description="every_call: (pair index, sample index)")
    status: ConstraintStatus = Field(
        description="passed, failed, or inconclusive (ci mode: the CI straddles the limit, or too few pairs)"
    )
    rng: str = Field(description="The random-number generator, e.g. gpuopt.rng/v1")


class Schedule(Model):
    """A seeded balanced AB/BA plan (AB = reference first)."""

    rng: str
    seed: int
    pairs: int
    orders: list[Order]


class SimulationOptions(Model):
    """The honesty harness: simulated durations measured in pairs of calls (see ``rust/src/stats``)."""

    simulations: int = Field(default=1000, ge=1, le=1_000_000)
    pairs: int = Field(default=30, ge=1)
    samples_per_call: int = Field(default=5, ge=1)
    design: Literal["interleaved", "fixed_ab", "fixed_ba"] = "interleaved"
    true_effect_pct: float = Field(default=0.0, description="The candidate's true improvement (0 = A/A)")
    base_value: float = 10.0
    drift_pct_per_call: float = Field(default=0.0, description="Linear drift per call, % of the start")
    block_sigma: float = 0.02
    call_sigma: float = 0.01
    sample_sigma: float = 0.02
    call_outlier_prob: float = 0.02
    sample_outlier_prob: float = 0.05
    outlier_scale: float = 0.5
    seed: int = Field(default=0, ge=0, le=2**53 - 1)
    statistics: CompareOptions = Field(default_factory=lambda: CompareOptions(resamples=1000))


class SimulationReport(Model):
    """Verdict counts and accuracy over all simulations."""

    rng: str
    options: SimulationOptions
    simulations: int
    improved: int
    regressed: int
    equivalent: int
    inconclusive: int
    decisive_rate: float = Field(description="(improved + regressed)/simulations")
    improved_rate: float
    true_effect_log: float
    coverage: float = Field(description="Share of CIs containing the true effect")
    mean_estimate_pct: float | None
    sd_estimate_log: float | None
    mean_ci_half_width_log: float | None
    pooled_sd_log: float
    mde_pct: float = Field(description="MDE at `pairs` from pooled_sd_log (normal approximation)")
    pooled_robust_sd_log: float
    robust_mde_pct: float = Field(description="MDE at `pairs` from pooled_robust_sd_log")


class SampleFileFacts(Model):
    """What was read from one sample file."""

    path: str = Field(description="The sample file")
    format: Literal["jsonl", "csv", "tsv"] = Field(description="jsonl, csv or tsv")
    value_column: str | None = Field(description="The column read as the value; null for a plain list")
    rows: int = Field(description="Rows read")
    calls: int = Field(description="Calls: rows sharing a key are one call's samples (else one call per row)")
    unmodeled_columns: list[str] = Field(description="Columns not read")


class FileComparison(Model):
    """A comparison of two sample files and what was read from each."""

    files: list[SampleFileFacts]
    comparison: Comparison


class FileNoise(Model):
    """A noise report from one sample file and what was read from it."""

    files: list[SampleFileFacts]
    noise: NoiseReport


class CompareData(Model):
    """``gpuopt stats compare``: the files read, the comparison, and the pairs (or values) table."""

    files: list[SampleFileFacts] = Field(description="What was read from each sample file")
    comparison: Comparison = Field(description="Estimate, CI, verdict and the settings that produced them")
    pairs: TableData = Field(
        description="Per pair (paired) or per call (unpaired, table values); gpuopt schema stats.pairs"
    )


class NoiseData(Model):
    """``gpuopt stats noise``: the file read, the noise report, and the A/A pairs table."""

    files: list[SampleFileFacts] = Field(description="What was read from the sample file")
    noise: NoiseReport = Field(description="What the A/A pairs say about the noise")
    pairs: TableData = Field(description="The A/A pairs (gpuopt schema stats.pairs)")
