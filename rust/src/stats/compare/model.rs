//! What a comparison reports: the effect estimate and its interval, per case, per tail, the order
//! effect, the spread and the resolution (serialized as the `Comparison` document).

use crate::stats::bootstrap::CiMethod;
use crate::stats::effect::{Direction, EffectScale};
use crate::stats::estimators::Estimator;
use crate::stats::quantile::WithinCall;
use crate::stats::verdict::{Verdict, VerdictReason};
use serde::Serialize;

/// What the comparison did with blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockFacts {
    pub column: String,
    /// Blocks holding at least one valid pair (unpaired: the blocks of both sides).
    pub blocks: usize,
    /// True when the CI resampled blocks (`--block-column`), false when blocks were only diagnosed.
    pub resampled: bool,
    /// True when the per-block CIs do not all overlap.
    pub disagree: bool,
}

/// BCa diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BcaFacts {
    pub z0: Option<f64>,
    pub acceleration: Option<f64>,
}

/// An estimate and its CI on the effect scale and as percentages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectEstimate {
    pub n: usize,
    /// The estimate of ℓ (log-ratio scale only).
    pub estimate_log: Option<f64>,
    pub ci_low_log: Option<f64>,
    pub ci_high_log: Option<f64>,
    /// The estimate as a percent improvement (positive = candidate better).
    pub estimate_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// The same as the raw change of the candidate, 100·(cand/ref − 1).
    pub change_pct: Option<f64>,
    pub change_ci_low_pct: Option<f64>,
    pub change_ci_high_pct: Option<f64>,
    /// The interval method that ran (percentile when BCa was degenerate); none without a CI.
    pub ci_method_run: Option<CiMethod>,
    pub bca: Option<BcaFacts>,
}

/// A warning attached to a result: a stable code and a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    pub code: &'static str,
    pub message: String,
}

/// The observed spread of the effects and what it resolves (normal approximations).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub sd_log: f64,
    pub robust_sd_log: f64,
    /// The CI half-width the spread predicts at n, as a percentage.
    pub half_width_pct: f64,
    /// The minimum detectable effect at n for `power`, as a percentage.
    pub mde_pct: f64,
    pub power: f64,
    /// Pairs needed to detect the minimum effect (m > 0) with `power`.
    pub pairs_for_minimum_effect: Option<u64>,
    /// The same three figures from the robust SD (1.4826·MAD): the better basis for a median when a
    /// few outlying pairs inflate the SD.
    pub robust_half_width_pct: f64,
    pub robust_mde_pct: f64,
    pub robust_pairs_for_minimum_effect: Option<u64>,
    pub method: &'static str,
}

/// Whether the minimum effect is above the MDE that an A/A noise SD predicts at n.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolution {
    pub noise_sd_log: f64,
    pub mde_pct: f64,
    pub minimum_effect_pct: f64,
    /// `resolvable` (m ≥ MDE) or `below_mde`.
    pub status: &'static str,
}

/// The effect within one case (reported, never used for the verdict).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseEffect {
    pub case_id: String,
    #[serde(flatten)]
    pub effect: EffectEstimate,
}

/// The effect within one block (process, run) of the rows (reported, never used for the verdict).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockEffect {
    pub case_id: String,
    /// Unpaired only: the side whose calls form the block (`baseline` or `candidate`); its effect is
    /// that of the block against the other side's pooled calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<&'static str>,
    #[serde(flatten)]
    pub effect: EffectEstimate,
}

/// The effect on a within-call quantile (latency tails).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TailEffect {
    pub quantile: WithinCall,
    #[serde(flatten)]
    pub effect: EffectEstimate,
    pub verdict: Verdict,
    pub verdict_reason: VerdictReason,
    pub pairs_needed_estimate: Option<u64>,
}

/// A tail quantile that could not be computed, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TailUnavailable {
    pub quantile: WithinCall,
    pub samples_needed_per_call: usize,
    pub samples_min_per_call: usize,
}

/// How many valid pairs ran in each order, and the order effect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderFacts {
    pub ab_pairs: usize,
    pub ba_pairs: usize,
    /// (mean ℓ over AB − mean ℓ over BA)/2, as a percentage; none unless both orders have pairs.
    pub order_effect_pct: Option<f64>,
}

/// The result of one comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// `paired` or `unpaired`.
    pub pairing: &'static str,
    pub metric: String,
    pub direction: Direction,
    pub effect_scale: EffectScale,
    pub estimator: Estimator,
    pub within_call: WithinCall,
    /// The interval method asked for.
    pub ci_method: CiMethod,
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
    pub rng: &'static str,
    pub scope: String,
    /// Valid pairs (paired), or the smaller side (unpaired).
    #[serde(flatten)]
    pub effect: EffectEstimate,
    pub n_invalid: usize,
    /// Unpaired only: the size of each side.
    pub n_baseline: Option<usize>,
    pub n_candidate: Option<usize>,
    pub minimum_pairs: usize,
    pub minimum_effect_pct: f64,
    /// τ on the effect scale (log-ratio scale only).
    pub threshold_log: Option<f64>,
    pub verdict: Verdict,
    pub verdict_reason: VerdictReason,
    /// Inconclusive only: ⌈n·(h/d)²⌉ pairs (per side when unpaired), projected from the observed spread.
    pub pairs_needed_estimate: Option<u64>,
    pub spread: Option<Spread>,
    pub resolution: Option<Resolution>,
    pub per_case: Vec<CaseEffect>,
    /// The effect within each block (`--block-column`, or a block-like column found).
    pub per_block: Vec<BlockEffect>,
    pub blocks: Option<BlockFacts>,
    pub orders: Option<OrderFacts>,
    pub tails: Vec<TailEffect>,
    pub tails_unavailable: Vec<TailUnavailable>,
    pub warnings: Vec<Warning>,
}

/// One pair's values and effect, for the pairs table.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRow {
    pub valid: bool,
    pub baseline_value: Option<f64>,
    pub candidate_value: Option<f64>,
    pub effect: Option<f64>,
}

/// A comparison and its per-pair rows.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedOutcome {
    pub comparison: Comparison,
    pub rows: Vec<PairRow>,
}
