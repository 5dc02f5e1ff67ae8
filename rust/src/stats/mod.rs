//! Paired statistics: effects on a log-ratio scale, bootstrap confidence intervals (BCa by default,
//! percentile as an option), verdicts against a minimum effect, guardrails, A/A noise and the minimum
//! detectable effect, seeded balanced AB/BA schedules, and a simulation harness that measures how
//! honest the verdicts are. Every random draw comes from [`rng`] (`gpuopt.rng/v1`), so one seed gives
//! bit-identical results on any machine and any number of threads; logarithms and exponentials come from
//! the pure-Rust `libm`, so no result depends on the platform's C library.
//!
//! The entry points:
//! - [`compare()`] / [`compare::compare_with`]: paired comparison → [`Comparison`] and per-pair rows;
//! - [`compare_unpaired`]: two independent samples, same CI machinery;
//! - [`noise()`]: A/A noise facts (SD, half-width, MDE, pairs for a minimum effect);
//! - [`constraint::constraint`] / [`constraint::guardrail`]: non-inferiority and absolute limits;
//! - [`verdict`]: the verdict, constraint and guardrail rules on their own;
//! - [`schedule::balanced`]: the seeded AB/BA plan;
//! - [`simulate::run`]: the honesty harness (A/A false-positive rate, power, drift under each design).

pub mod bootstrap;
pub mod compare;
pub mod constraint;
pub mod effect;
pub mod estimators;
pub mod fdr;
pub mod fields;
pub mod lanes;
pub mod noise;
pub mod normal;
pub mod options;
pub mod quantile;
pub mod resample;
pub mod resolution;
pub mod rng;
pub mod sample_file;
pub mod schedule;
pub mod simulate;
pub mod student;
pub mod tables;
pub mod verdict;

pub use compare::{
    compare, compare_unpaired, Cases, Comparison, PairedInput, PairedOutcome, UnpairedInput,
    UnpairedOutcome,
};
pub use noise::{noise, NoiseOutcome, NoiseReport};
pub use options::CompareOptions;

/// Error and warning codes of the statistics area.
pub mod codes {
    /// A statistics option or input structure is out of range (bad confidence, weights, offsets...).
    pub const STATISTICS_INVALID: &str = "statistics_invalid";
    /// A metric value is ≤ 0, so no ratio exists.
    pub const NONPOSITIVE_METRIC_VALUE: &str = "nonpositive_metric_value";
    /// A metric value is NaN or infinite.
    pub const NONFINITE_METRIC_VALUE: &str = "nonfinite_metric_value";
    /// Two values compared are further apart than `effect::MAX_RATIO`: the percentages would overflow.
    pub const METRIC_RATIO_OUT_OF_RANGE: &str = "metric_ratio_out_of_range";
    /// Baseline and candidate (or a per-pair column) disagree on the number of pairs.
    pub const PAIR_COUNT_MISMATCH: &str = "pair_count_mismatch";
    /// A key appears on one side only.
    pub const PAIR_KEY_UNMATCHED: &str = "pair_key_unmatched";
    /// A pair's case differs between its rows or between the two sides.
    pub const CASE_MISMATCH: &str = "case_mismatch";
    /// A call holds fewer samples than its within-call summary needs.
    pub const SAMPLES_TOO_FEW: &str = "samples_too_few";
    /// A named column is missing from a sample file.
    pub const COLUMN_MISSING: &str = "column_missing";
    /// Noise needs at least two valid A/A pairs.
    pub const NOISE_TOO_FEW_PAIRS: &str = "noise_too_few_pairs";
    /// Warning: BCa could not be computed; the percentile interval is given.
    pub const BCA_DEGENERATE: &str = "bca_degenerate";
    /// Warning: an A/A comparison's CI excludes 0.
    pub const AA_EFFECT_DETECTED: &str = "aa_effect_detected";
    /// Warning: pairs (or an unpaired side's calls) come in blocks (process, run) whose effects disagree;
    /// they are not independent.
    pub const DEPENDENT_SAMPLES_SUSPECTED: &str = "dependent_samples_suspected";
    /// Warning: an unpaired side's calls come from fewer than 2 blocks; variation between blocks is
    /// unmeasured.
    pub const BLOCKS_TOO_FEW: &str = "blocks_too_few";
    /// Warning: the minimum effect is below the MDE the noise resolves.
    pub const MINIMUM_EFFECT_BELOW_MDE: &str = "minimum_effect_below_mde";
}
