//! Paired and unpaired comparisons: effects per pair, a bootstrap CI of the estimator, the verdict
//! against the minimum effect, per-case and tail effects, the order effect and the observed spread.

use super::blocks::{self, BlockFacts, Blocks};
use super::bootstrap::{self, CiMethod, Interval};
use super::codes;
use super::effect::{change_interval, ratio_in_range, Direction, EffectScale, MAX_RATIO};
use super::estimators::{self, Estimator, Sample};
use super::noise;
use super::options::CompareOptions;
use super::quantile::{Calls, WithinCall};
use super::resample::{replicates, replicates_batched, Parallelism};
use super::rng::{KeyPrefix, Part, RNG_NAME};
use super::schedule::Order;
use super::verdict::{self, Judgement, Verdict, VerdictReason};
use crate::error::{Error, Result};
use serde::Serialize;

/// The case (stratum) of every pair, the case names in plan order, and optional case weights.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cases {
    pub case_of: Vec<usize>,
    pub names: Vec<String>,
    pub weights: Option<Vec<f64>>,
}

/// Paired measurements: call i of the baseline and call i of the candidate form pair i (plan order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PairedInput {
    pub baseline: Calls,
    pub candidate: Calls,
    pub cases: Option<Cases>,
    /// The order each pair ran in; gives the order effect.
    pub orders: Option<Vec<Order>>,
    /// Which pairs are valid; invalid pairs are listed but excluded from every statistic.
    pub valid: Option<Vec<bool>>,
    /// A label per pair (a key column's value), used in the pairs table and in error messages.
    pub keys: Option<Vec<String>>,
    /// The block (process, run, worker) of every pair: per-block effects, and the block bootstrap.
    pub blocks: Option<Blocks>,
}

impl PairedInput {
    /// One value per call, no cases, all pairs valid.
    pub fn from_values(baseline: Vec<f64>, candidate: Vec<f64>) -> Self {
        Self {
            baseline: Calls::from_values(baseline),
            candidate: Calls::from_values(candidate),
            ..Self::default()
        }
    }

    pub fn len(&self) -> usize {
        self.baseline.len()
    }

    pub fn is_empty(&self) -> bool {
        self.baseline.is_empty()
    }

    fn is_valid(&self, i: usize) -> bool {
        self.valid
            .as_ref()
            .is_none_or(|v| v.get(i).copied().unwrap_or(false))
    }

    fn describe(&self, i: usize) -> String {
        let mut out = format!("pair {i}");
        if let Some(key) = self.keys.as_ref().and_then(|k| k.get(i)) {
            out.push_str(&format!(" (key {key:?})"));
        }
        if let Some(cases) = &self.cases {
            if let Some(name) = cases.case_of.get(i).and_then(|&c| cases.names.get(c)) {
                out.push_str(&format!(" of case {name:?}"));
            }
        }
        out
    }

    fn check_shape(&self) -> Result<()> {
        let n = self.len();
        if self.candidate.len() != n {
            return Err(Error::input(
                codes::PAIR_COUNT_MISMATCH,
                format!(
                    "baseline has {n} calls but candidate has {}; pairs need one call of each",
                    self.candidate.len()
                ),
            )
            .with_expected(format!("{n} candidate calls"))
            .with_observed(format!("{} candidate calls", self.candidate.len())));
        }
        let lengths = [
            ("cases", self.cases.as_ref().map(|c| c.case_of.len())),
            ("orders", self.orders.as_ref().map(Vec::len)),
            ("valid", self.valid.as_ref().map(Vec::len)),
            ("keys", self.keys.as_ref().map(Vec::len)),
            ("blocks", self.blocks.as_ref().map(|b| b.block_of.len())),
        ];
        for (name, len) in lengths {
            if let Some(len) = len.filter(|&len| len != n) {
                return Err(Error::input(
                    codes::PAIR_COUNT_MISMATCH,
                    format!("{name} has {len} entries for {n} pairs"),
                )
                .with_path(name.to_string())
                .with_expected(format!("{n} entries"))
                .with_observed(format!("{len} entries")));
            }
        }
        if let Some(cases) = &self.cases {
            if let Some(&bad) = cases.case_of.iter().find(|&&c| c >= cases.names.len()) {
                return Err(Error::input(
                    codes::STATISTICS_INVALID,
                    format!("case index {bad} has no case name"),
                )
                .with_expected(format!("< {}", cases.names.len())));
            }
        }
        Ok(())
    }

    /// Checks every sample of pair `i` is finite and > 0 and that each call has enough samples.
    fn check_pair(&self, i: usize, within_call: WithinCall) -> Result<()> {
        for (role, calls) in [("baseline", &self.baseline), ("candidate", &self.candidate)] {
            let samples = calls.call(i);
            check_values(
                samples,
                within_call,
                || self.describe(i),
                &format!("pairs[{i}].{role}"),
            )?;
        }
        let b = within_call.summarize(self.baseline.call(i));
        let c = within_call.summarize(self.candidate.call(i));
        match (b, c) {
            (Some(b), Some(c)) => check_ratio(b, c, &self.describe(i), &format!("pairs[{i}]")),
            _ => Ok(()),
        }
    }
}

/// Refuses two values (pair or side extremes) further apart than [`MAX_RATIO`].
fn check_ratio(baseline: f64, candidate: f64, what: &str, path: &str) -> Result<()> {
    if ratio_in_range(candidate, baseline) {
        return Ok(());
    }
    Err(Error::input(
        codes::METRIC_RATIO_OUT_OF_RANGE,
        format!(
            "{what}: candidate {candidate:e} against baseline {baseline:e} is a ratio beyond \
             {MAX_RATIO:e}; the percent effects would overflow"
        ),
    )
    .with_path(path.to_string())
    .with_expected(format!(
        "values within a factor {MAX_RATIO:e} of each other"
    ))
    .with_observed(format!("{baseline:e} and {candidate:e}")))
}

/// Checks one call's samples: enough of them for the summary, each finite and > 0.
pub(crate) fn check_values(
    samples: &[f64],
    within_call: WithinCall,
    describe: impl Fn() -> String,
    path: &str,
) -> Result<()> {
    let needed = within_call.minimum_samples();
    if samples.len() < needed {
        return Err(Error::input(
            codes::SAMPLES_TOO_FEW,
            format!(
                "{}: a {} within-call summary needs at least {needed} samples per call",
                describe(),
                within_call.name()
            ),
        )
        .with_path(path.to_string())
        .with_expected(format!("≥ {needed} samples"))
        .with_observed(format!("{} samples", samples.len())));
    }
    for (k, &v) in samples.iter().enumerate() {
        let at = if samples.len() > 1 {
            format!("{path}.samples[{k}]")
        } else {
            path.to_string()
        };
        if !v.is_finite() {
            return Err(Error::input(
                codes::NONFINITE_METRIC_VALUE,
                format!("{}: {at} is {v}, not a finite number", describe()),
            )
            .with_path(at)
            .with_expected("a finite value > 0")
            .with_observed(v.to_string()));
        }
        if v <= 0.0 {
            return Err(Error::input(
                codes::NONPOSITIVE_METRIC_VALUE,
                format!("{}: {at} is {v}; ratios need values > 0", describe()),
            )
            .with_path(at)
            .with_expected("a finite value > 0")
            .with_observed(v.to_string()));
        }
    }
    Ok(())
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
    pub per_block: Vec<CaseEffect>,
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

/// The stream prefix of a bootstrap: ("bootstrap", seed, scope, metric, extra parts…); replicate b
/// appends b.
pub fn bootstrap_prefix(options: &CompareOptions, extra: &[Part<'_>]) -> KeyPrefix {
    let mut prefix = KeyPrefix::new(
        "bootstrap",
        &[
            Part::Int(options.seed),
            Part::Str(&options.scope),
            Part::Str(&options.metric),
        ],
    );
    for part in extra {
        prefix.push(*part);
    }
    prefix
}

/// Estimate and CI of `sample` with the options' estimator, method and replicates.
pub fn estimate_interval(
    sample: &Sample,
    options: &CompareOptions,
    prefix: &KeyPrefix,
    parallelism: Parallelism,
) -> (Option<f64>, Option<Interval>) {
    let estimator = options.estimator;
    let estimate = sample.estimate(estimator);
    let Some(theta) = estimate.filter(|_| sample.len() >= 2) else {
        return (estimate, None);
    };
    let mut reps = replicates_batched(
        prefix,
        options.resamples,
        parallelism,
        || sample.scratch(),
        |streams, scratch, out| sample.replicates_into(estimator, streams, scratch, out),
    );
    bootstrap::sort(&mut reps);
    let acceleration = match options.ci_method {
        CiMethod::Bca => bootstrap::acceleration(&sample.jackknife(estimator)),
        CiMethod::Percentile => 0.0,
    };
    let interval = bootstrap::interval(
        &reps,
        theta,
        acceleration,
        options.ci_method,
        options.confidence,
    );
    (estimate, interval)
}

fn effect_estimate(
    n: usize,
    estimate: Option<f64>,
    interval: Option<&Interval>,
    options: &CompareOptions,
) -> EffectEstimate {
    let scale = options.effect_scale;
    let log = |v: Option<f64>| v.filter(|_| scale.is_log());
    let low = interval.map(|i| i.low);
    let high = interval.map(|i| i.high);
    let changes = interval.map(|i| change_interval(scale, options.direction, i.low, i.high));
    EffectEstimate {
        n,
        estimate_log: log(estimate),
        ci_low_log: log(low),
        ci_high_log: log(high),
        estimate_pct: estimate.map(|e| scale.to_pct(e)),
        ci_low_pct: low.map(|e| scale.to_pct(e)),
        ci_high_pct: high.map(|e| scale.to_pct(e)),
        change_pct: estimate.map(|e| scale.to_change_pct(options.direction, e)),
        change_ci_low_pct: changes.map(|c| c.0),
        change_ci_high_pct: changes.map(|c| c.1),
        ci_method_run: interval.map(|i| i.method),
        bca: interval
            .filter(|_| options.ci_method == CiMethod::Bca)
            .map(|i| BcaFacts {
                z0: i.z0,
                acceleration: i.acceleration,
            }),
    }
}

fn interval_pair(interval: Option<&Interval>) -> Option<(f64, f64)> {
    interval.map(|i| (i.low, i.high))
}

/// Compares paired measurements (replicates on the rayon pool).
pub fn compare(input: &PairedInput, options: &CompareOptions) -> Result<PairedOutcome> {
    compare_with(input, options, Parallelism::Rayon)
}

/// Compares paired measurements with the given parallelism (results are identical either way).
pub fn compare_with(
    input: &PairedInput,
    options: &CompareOptions,
    parallelism: Parallelism,
) -> Result<PairedOutcome> {
    options.validate()?;
    input.check_shape()?;
    let n_all = input.len();
    let mut rows = Vec::with_capacity(n_all);
    let mut valid_positions = Vec::new();
    for i in 0..n_all {
        let valid = input.is_valid(i);
        if valid {
            input.check_pair(i, options.within_call)?;
            valid_positions.push(i);
        }
        let b = options.within_call.summarize(input.baseline.call(i));
        let c = options.within_call.summarize(input.candidate.call(i));
        let effect = match (b, c) {
            (Some(b), Some(c)) if b > 0.0 && c > 0.0 && b.is_finite() && c.is_finite() => {
                Some(options.effect_scale.pair_effect(options.direction, b, c))
            }
            _ => None,
        };
        rows.push(PairRow {
            valid,
            baseline_value: b,
            candidate_value: c,
            effect,
        });
    }
    let effects: Vec<f64> = valid_positions
        .iter()
        .filter_map(|&i| rows.get(i).and_then(|r| r.effect))
        .collect();
    let sample = pooled_sample(input, &valid_positions, effects.clone())?;
    let n = sample.len();
    let by_block = input.blocks.as_ref().map(|b| {
        blocks::effects_by_block(b, &valid_positions, |i| rows.get(i).and_then(|r| r.effect))
    });
    let resample_blocks = input.blocks.as_ref().is_some_and(|b| b.resample);
    if resample_blocks && input.cases.is_some() {
        return Err(Error::input(
            codes::STATISTICS_INVALID,
            "a block bootstrap cannot also stratify by case: give a block column or a case column",
        ));
    }
    let (estimate, interval) = match &by_block {
        Some(by_block) if resample_blocks => blocks::block_interval(by_block, options, parallelism),
        _ => estimate_interval(
            &sample,
            options,
            &bootstrap_prefix(options, &[]),
            parallelism,
        ),
    };
    let tau = options.threshold();
    let judgement = verdict::judge(
        n,
        options.minimum_pairs,
        estimate,
        interval_pair(interval.as_ref()),
        tau,
    );
    let mut warnings = Vec::new();
    if interval.is_some_and(|i| i.bca_degenerate) {
        warnings.push(bca_degenerate_warning());
    }
    let spread = spread(&effects, options);
    let resolution = resolution(n, options, &mut warnings);
    let per_case = per_case(input, &valid_positions, &rows, options, parallelism);
    let per_block = by_block.as_deref().map_or_else(Vec::new, |b| {
        blocks::per_block(b, options, parallelism, |n, e, i| {
            effect_estimate(n, e, i, options)
        })
    });
    let block_facts = input.blocks.as_ref().map(|b| BlockFacts {
        column: b.column.clone(),
        blocks: per_block.len(),
        resampled: b.resample,
        disagree: blocks::disagree(&per_block),
    });
    if block_facts
        .as_ref()
        .is_some_and(|f| f.disagree && !f.resampled)
    {
        warnings.push(blocks::disagreement_warning(
            block_facts.as_ref().map_or("", |f| f.column.as_str()),
            &per_block,
        ));
    }
    let orders = order_facts(input, &valid_positions, &rows, options);
    let (tails, tails_unavailable) = tails(input, &valid_positions, options, parallelism)?;
    let comparison = Comparison {
        pairing: "paired",
        effect: effect_estimate(n, estimate, interval.as_ref(), options),
        n_invalid: n_all - valid_positions.len(),
        n_baseline: None,
        n_candidate: None,
        spread,
        resolution,
        per_case,
        per_block,
        blocks: block_facts,
        orders,
        tails,
        tails_unavailable,
        warnings,
        ..header(options, judgement)
    };
    Ok(PairedOutcome { comparison, rows })
}

fn bca_degenerate_warning() -> Warning {
    Warning {
        code: codes::BCA_DEGENERATE,
        message:
            "the BCa interval could not be computed (the estimate lies at an end of the replicate \
                  distribution or the acceleration is too large); the percentile interval is given"
                .to_string(),
    }
}

/// The fields every comparison shares, with the verdict.
fn header(options: &CompareOptions, judgement: Judgement) -> Comparison {
    Comparison {
        pairing: "paired",
        metric: options.metric.clone(),
        direction: options.direction,
        effect_scale: options.effect_scale,
        estimator: options.estimator,
        within_call: options.within_call,
        ci_method: options.ci_method,
        confidence: options.confidence,
        resamples: options.resamples,
        seed: options.seed,
        rng: RNG_NAME,
        scope: options.scope.clone(),
        effect: effect_estimate(0, None, None, options),
        n_invalid: 0,
        n_baseline: None,
        n_candidate: None,
        minimum_pairs: options.minimum_pairs,
        minimum_effect_pct: options.minimum_effect_pct,
        threshold_log: options.effect_scale.is_log().then(|| options.threshold()),
        verdict: judgement.verdict,
        verdict_reason: judgement.reason,
        pairs_needed_estimate: judgement.pairs_needed_estimate,
        spread: None,
        resolution: None,
        per_case: Vec::new(),
        per_block: Vec::new(),
        blocks: None,
        orders: None,
        tails: Vec::new(),
        tails_unavailable: Vec::new(),
        warnings: Vec::new(),
    }
}

/// The valid pairs' effects, stratified by case (cases without valid pairs are left out).
fn pooled_sample(input: &PairedInput, valid: &[usize], effects: Vec<f64>) -> Result<Sample> {
    let Some(cases) = &input.cases else {
        return Ok(Sample::new(effects));
    };
    let mut remap: Vec<Option<usize>> = vec![None; cases.names.len()];
    let mut kept_weights = Vec::new();
    let mut stratum_of = Vec::with_capacity(valid.len());
    for &i in valid {
        let c = cases.case_of.get(i).copied().unwrap_or(0);
        let slot = remap.get_mut(c);
        let s = match slot {
            Some(Some(s)) => *s,
            Some(slot) => {
                let s = kept_weights.len();
                *slot = Some(s);
                kept_weights.push(cases.weights.as_ref().and_then(|w| w.get(c).copied()));
                s
            }
            None => 0,
        };
        stratum_of.push(s);
    }
    let n_strata = kept_weights.len().max(1);
    let weights = cases
        .weights
        .as_ref()
        .map(|_| kept_weights.into_iter().map(|w| w.unwrap_or(0.0)).collect());
    Sample::stratified(effects, stratum_of, n_strata, weights)
}

fn spread(effects: &[f64], options: &CompareOptions) -> Option<Spread> {
    if !options.effect_scale.is_log() {
        return None;
    }
    let sd = estimators::std_dev(effects)?;
    let robust = estimators::robust_sd(effects)?;
    let n = effects.len();
    let facts = noise::Resolving::new(sd, options.estimator, options.confidence, options.power);
    let robust_facts = noise::Resolving {
        sd: robust,
        ..facts
    };
    let tau = options.threshold();
    Some(Spread {
        sd_log: sd,
        robust_sd_log: robust,
        half_width_pct: 100.0 * libm::expm1(facts.half_width(n)),
        mde_pct: 100.0 * libm::expm1(facts.mde(n)),
        power: options.power,
        pairs_for_minimum_effect: facts.pairs_for(tau),
        robust_half_width_pct: 100.0 * libm::expm1(robust_facts.half_width(n)),
        robust_mde_pct: 100.0 * libm::expm1(robust_facts.mde(n)),
        robust_pairs_for_minimum_effect: robust_facts.pairs_for(tau),
        method: noise::METHOD,
    })
}

fn resolution(
    n: usize,
    options: &CompareOptions,
    warnings: &mut Vec<Warning>,
) -> Option<Resolution> {
    let sd = options.noise_sd_log?;
    if !options.effect_scale.is_log() || n == 0 {
        return None;
    }
    let facts = noise::Resolving::new(sd, options.estimator, options.confidence, options.power);
    let mde_pct = 100.0 * libm::expm1(facts.mde(n));
    let resolvable = options.minimum_effect_pct >= mde_pct;
    if !resolvable {
        warnings.push(Warning {
            code: codes::MINIMUM_EFFECT_BELOW_MDE,
            message: format!(
                "the minimum effect {}% is below the {mde_pct:.3}% that the noise SD resolves at {n} pairs",
                options.minimum_effect_pct
            ),
        });
    }
    Some(Resolution {
        noise_sd_log: sd,
        mde_pct,
        minimum_effect_pct: options.minimum_effect_pct,
        status: if resolvable {
            "resolvable"
        } else {
            "below_mde"
        },
    })
}

fn per_case(
    input: &PairedInput,
    valid: &[usize],
    rows: &[PairRow],
    options: &CompareOptions,
    parallelism: Parallelism,
) -> Vec<CaseEffect> {
    let Some(cases) = input.cases.as_ref().filter(|c| c.names.len() > 1) else {
        return Vec::new();
    };
    cases
        .names
        .iter()
        .enumerate()
        .map(|(c, name)| {
            let effects: Vec<f64> = valid
                .iter()
                .filter(|&&i| cases.case_of.get(i) == Some(&c))
                .filter_map(|&i| rows.get(i).and_then(|r| r.effect))
                .collect();
            let sample = Sample::new(effects);
            let prefix = bootstrap_prefix(options, &[Part::Str(name)]);
            let (estimate, interval) = estimate_interval(&sample, options, &prefix, parallelism);
            CaseEffect {
                case_id: name.clone(),
                effect: effect_estimate(sample.len(), estimate, interval.as_ref(), options),
            }
        })
        .collect()
}

fn order_facts(
    input: &PairedInput,
    valid: &[usize],
    rows: &[PairRow],
    options: &CompareOptions,
) -> Option<OrderFacts> {
    let orders = input.orders.as_ref()?;
    let mean_of = |which: Order| {
        let values: Vec<f64> = valid
            .iter()
            .filter(|&&i| orders.get(i) == Some(&which))
            .filter_map(|&i| rows.get(i).and_then(|r| r.effect))
            .collect();
        let n = values.len();
        (n, (n > 0).then(|| values.iter().sum::<f64>() / n as f64))
    };
    let (ab_pairs, ab) = mean_of(Order::Ab);
    let (ba_pairs, ba) = mean_of(Order::Ba);
    let order_effect_pct = match (ab, ba) {
        (Some(ab), Some(ba)) => Some(options.effect_scale.to_pct(0.5 * (ab - ba))),
        _ => None,
    };
    Some(OrderFacts {
        ab_pairs,
        ba_pairs,
        order_effect_pct,
    })
}

type Tails = (Vec<TailEffect>, Vec<TailUnavailable>);

fn tails(
    input: &PairedInput,
    valid: &[usize],
    options: &CompareOptions,
    parallelism: Parallelism,
) -> Result<Tails> {
    let mut out = (Vec::new(), Vec::new());
    if !options.tails || !options.effect_scale.is_log() {
        return Ok(out);
    }
    let min_samples = valid
        .iter()
        .flat_map(|&i| [input.baseline.call(i).len(), input.candidate.call(i).len()])
        .min()
        .unwrap_or(0);
    for quantile in [WithinCall::P50, WithinCall::P95, WithinCall::P99] {
        let needed = quantile.minimum_samples().max(2);
        if min_samples < needed {
            out.1.push(TailUnavailable {
                quantile,
                samples_needed_per_call: needed,
                samples_min_per_call: min_samples,
            });
            continue;
        }
        let effects: Vec<f64> = valid
            .iter()
            .filter_map(|&i| {
                let b = quantile.summarize(input.baseline.call(i))?;
                let c = quantile.summarize(input.candidate.call(i))?;
                Some(options.effect_scale.pair_effect(options.direction, b, c))
            })
            .collect();
        let sample = pooled_sample(input, valid, effects)?;
        let prefix = bootstrap_prefix(options, &[Part::Str(quantile.name())]);
        let (estimate, interval) = estimate_interval(&sample, options, &prefix, parallelism);
        let j = verdict::judge(
            sample.len(),
            options.minimum_pairs,
            estimate,
            interval_pair(interval.as_ref()),
            options.threshold(),
        );
        out.0.push(TailEffect {
            quantile,
            effect: effect_estimate(sample.len(), estimate, interval.as_ref(), options),
            verdict: j.verdict,
            verdict_reason: j.reason,
            pairs_needed_estimate: j.pairs_needed_estimate,
        });
    }
    Ok(out)
}

/// Two independent sets of calls (for example kernel durations from two profiles).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnpairedInput {
    pub baseline: Calls,
    pub candidate: Calls,
}

/// The values of an unpaired comparison, for its table.
#[derive(Debug, Clone, PartialEq)]
pub struct UnpairedOutcome {
    pub comparison: Comparison,
    pub baseline_values: Vec<f64>,
    pub candidate_values: Vec<f64>,
}

/// Compares two independent samples: θ = est(ln cand) − est(ln ref) (sign flipped for lower-is-better),
/// each side resampled independently from one stream per replicate (baseline draws first), BCa
/// acceleration from both sides' jackknifes.
pub fn compare_unpaired(
    input: &UnpairedInput,
    options: &CompareOptions,
) -> Result<UnpairedOutcome> {
    options.validate()?;
    if !options.effect_scale.is_log() {
        return Err(Error::input(
            codes::STATISTICS_INVALID,
            "an unpaired comparison uses the log-ratio scale",
        )
        .with_path("effect_scale")
        .with_expected("log_ratio")
        .with_observed("arithmetic_pct"));
    }
    let mut sides = Vec::new();
    for (role, calls) in [
        ("baseline", &input.baseline),
        ("candidate", &input.candidate),
    ] {
        let mut values = Vec::with_capacity(calls.len());
        for i in 0..calls.len() {
            let describe = || format!("{role} call {i}");
            check_values(
                calls.call(i),
                options.within_call,
                describe,
                &format!("{role}[{i}]"),
            )?;
            values.push(
                options
                    .within_call
                    .summarize(calls.call(i))
                    .unwrap_or(f64::NAN),
            );
        }
        sides.push(values);
    }
    let candidate_values = sides.pop().unwrap_or_default();
    let baseline_values = sides.pop().unwrap_or_default();
    let all = || baseline_values.iter().chain(&candidate_values).copied();
    let low = all().fold(f64::INFINITY, f64::min);
    let high = all().fold(f64::NEG_INFINITY, f64::max);
    if low.is_finite() && high.is_finite() {
        check_ratio(low, high, "the smallest and largest calls", "calls")?;
    }
    let base = Sample::new(baseline_values.iter().map(|&v| libm::log(v)).collect());
    let cand = Sample::new(candidate_values.iter().map(|&v| libm::log(v)).collect());
    let sign = match options.direction {
        Direction::Lower => -1.0,
        Direction::Higher => 1.0,
    };
    let est = options.estimator;
    let theta = |b: Option<f64>, c: Option<f64>| Some(sign * (c? - b?));
    let estimate = theta(base.estimate(est), cand.estimate(est));
    let n = base.len().min(cand.len());
    let interval = match estimate {
        Some(theta_hat) if n >= 2 => {
            let prefix = bootstrap_prefix(options, &[Part::Str("unpaired")]);
            let mut reps = replicates(
                &prefix,
                options.resamples,
                Parallelism::Rayon,
                || (base.scratch(), cand.scratch()),
                |stream, (sb, sc)| {
                    let b = base.replicate(est, stream, sb);
                    let c = cand.replicate(est, stream, sc);
                    sign * (c - b)
                },
            );
            bootstrap::sort(&mut reps);
            let acceleration = match options.ci_method {
                CiMethod::Bca => {
                    let (b_hat, c_hat) = (base.estimate(est), cand.estimate(est));
                    let jb: Vec<f64> = base
                        .jackknife(est)
                        .iter()
                        .map(|&b| sign * (c_hat.unwrap_or(0.0) - b))
                        .collect();
                    let jc: Vec<f64> = cand
                        .jackknife(est)
                        .iter()
                        .map(|&c| sign * (c - b_hat.unwrap_or(0.0)))
                        .collect();
                    bootstrap::acceleration_multi(&[&jb, &jc])
                }
                CiMethod::Percentile => 0.0,
            };
            bootstrap::interval(
                &reps,
                theta_hat,
                acceleration,
                options.ci_method,
                options.confidence,
            )
        }
        _ => None,
    };
    let judgement = verdict::judge(
        n,
        options.minimum_pairs,
        estimate,
        interval_pair(interval.as_ref()),
        options.threshold(),
    );
    let mut warnings = Vec::new();
    if interval.is_some_and(|i| i.bca_degenerate) {
        warnings.push(bca_degenerate_warning());
    }
    let comparison = Comparison {
        pairing: "unpaired",
        effect: effect_estimate(n, estimate, interval.as_ref(), options),
        n_baseline: Some(base.len()),
        n_candidate: Some(cand.len()),
        warnings,
        ..header(options, judgement)
    };
    Ok(UnpairedOutcome {
        comparison,
        baseline_values,
        candidate_values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> CompareOptions {
        CompareOptions {
            resamples: 2000,
            minimum_pairs: 5,
            seed: 7,
            ..CompareOptions::default()
        }
    }

    #[test]
    fn a_clear_speedup_is_improved() {
        let base: Vec<f64> = (0..40).map(|i| 10.0 + (i % 7) as f64 * 0.05).collect();
        let cand: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(i, b)| b * (0.8 + (i % 3) as f64 * 0.004))
            .collect();
        let out = compare(&PairedInput::from_values(base, cand), &options()).unwrap();
        let c = &out.comparison;
        assert_eq!(c.verdict, Verdict::Improved);
        assert_eq!(c.effect.n, 40);
        let est = c.effect.estimate_pct.unwrap();
        assert!(est > 24.0 && est < 25.1, "{est}");
        assert!(c.effect.ci_low_pct.unwrap() <= est && est <= c.effect.ci_high_pct.unwrap());
        assert_eq!(c.rng, "gpuopt.rng/v1");
        assert_eq!(out.rows.len(), 40);
    }

    #[test]
    fn identical_pairs_give_a_point_ci_and_inconclusive_at_m_zero() {
        let v = vec![5.0; 12];
        let out = compare(&PairedInput::from_values(v.clone(), v), &options()).unwrap();
        let c = &out.comparison;
        assert_eq!(
            (c.effect.ci_low_log, c.effect.ci_high_log),
            (Some(0.0), Some(0.0))
        );
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert_eq!(c.pairs_needed_estimate, None);
        // With m > 0 a point CI at 0 is equivalent.
        let m = CompareOptions {
            minimum_effect_pct: 1.0,
            ..options()
        };
        let v = vec![5.0; 12];
        let out = compare(&PairedInput::from_values(v.clone(), v), &m).unwrap();
        assert_eq!(out.comparison.verdict, Verdict::Equivalent);
    }

    #[test]
    fn too_few_pairs_never_reject() {
        let out = compare(
            &PairedInput::from_values(vec![1.0, 1.0, 1.0], vec![2.0, 2.1, 2.2]),
            &options(),
        )
        .unwrap();
        assert_eq!(out.comparison.verdict, Verdict::Inconclusive);
        assert_eq!(out.comparison.verdict_reason, VerdictReason::TooFewPairs);
        assert_eq!(out.comparison.pairs_needed_estimate, Some(5));
    }

    #[test]
    fn bad_values_name_the_pair() {
        let mut input = PairedInput::from_values(vec![1.0, 2.0, 3.0], vec![1.0, -2.0, 3.0]);
        input.keys = Some(vec!["a".into(), "b".into(), "c".into()]);
        let err = compare(&input, &options()).unwrap_err();
        assert_eq!(err.code, codes::NONPOSITIVE_METRIC_VALUE);
        assert_eq!(err.path.as_deref(), Some("pairs[1].candidate"));
        assert!(
            err.message.contains("pair 1 (key \"b\")"),
            "{}",
            err.message
        );
        let nan = PairedInput::from_values(vec![1.0, f64::NAN], vec![1.0, 1.0]);
        assert_eq!(
            compare(&nan, &options()).unwrap_err().code,
            codes::NONFINITE_METRIC_VALUE
        );
        let short = PairedInput::from_values(vec![1.0, 2.0], vec![1.0]);
        assert_eq!(
            compare(&short, &options()).unwrap_err().code,
            codes::PAIR_COUNT_MISMATCH
        );
        // Issue 13.4: a subnormal sample overflowed every percentage to null (ValidationError, exit 1).
        let tiny = PairedInput::from_values(vec![1.0, 2.0, 3.0], vec![1.0, 4.9e-324, 3.0]);
        let err = compare(&tiny, &options()).unwrap_err();
        assert_eq!(err.code, codes::METRIC_RATIO_OUT_OF_RANGE);
        assert_eq!(err.path.as_deref(), Some("pairs[1]"));
        let wide = UnpairedInput {
            baseline: Calls::from_values(vec![1e-300, 1.0]),
            candidate: Calls::from_values(vec![1.0, 2.0]),
        };
        assert_eq!(
            compare_unpaired(&wide, &options()).unwrap_err().code,
            codes::METRIC_RATIO_OUT_OF_RANGE
        );
        // Right at the limit still compares, with finite percentages.
        let edge = PairedInput::from_values(vec![1.0, 1.0, 1.0], vec![1.0, 1e-9, 1e9]);
        let out = compare(&edge, &options()).unwrap();
        let spread = out.comparison.spread.unwrap();
        assert!(spread.mde_pct.is_finite() && spread.half_width_pct.is_finite());
        // An invalid pair is excluded, not checked.
        let mut skip = PairedInput::from_values(vec![1.0, 0.0, 3.0], vec![1.0, 2.0, 3.0]);
        skip.valid = Some(vec![true, false, true]);
        let out = compare(&skip, &options()).unwrap();
        assert_eq!((out.comparison.effect.n, out.comparison.n_invalid), (2, 1));
    }

    #[test]
    fn orders_cases_and_tails() {
        let n = 20;
        let base: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..200)
                    .map(|k| 10.0 + ((i * 31 + k * 17) % 23) as f64 * 0.01)
                    .collect()
            })
            .collect();
        let cand: Vec<Vec<f64>> = base
            .iter()
            .map(|c| c.iter().map(|v| v * 0.9).collect())
            .collect();
        let mut input = PairedInput {
            baseline: Calls::from_nested(base).unwrap(),
            candidate: Calls::from_nested(cand).unwrap(),
            ..PairedInput::default()
        };
        input.orders = Some(
            (0..n)
                .map(|i| if i % 2 == 0 { Order::Ab } else { Order::Ba })
                .collect(),
        );
        input.cases = Some(Cases {
            case_of: (0..n).map(|i| i % 2).collect(),
            names: vec!["small".into(), "large".into()],
            weights: None,
        });
        let opts = CompareOptions {
            tails: true,
            ..options()
        };
        let c = compare(&input, &opts).unwrap().comparison;
        assert_eq!(c.per_case.len(), 2);
        assert_eq!(c.per_case[0].effect.n, 10);
        let orders = c.orders.unwrap();
        assert_eq!((orders.ab_pairs, orders.ba_pairs), (10, 10));
        assert!(orders.order_effect_pct.unwrap().abs() < 1e-9);
        assert_eq!(c.tails.len(), 2, "p50 and p95 computed");
        assert_eq!(c.tails_unavailable.len(), 1, "p99 needs 1000 samples");
        for t in &c.tails {
            assert!((t.effect.estimate_pct.unwrap() - 11.111_111).abs() < 1e-3);
        }
    }

    #[test]
    fn unpaired_comparison_uses_the_same_ci_machinery() {
        let base: Vec<f64> = (0..60).map(|i| 10.0 + (i % 11) as f64 * 0.1).collect();
        let cand: Vec<f64> = (0..50).map(|i| 8.0 + (i % 13) as f64 * 0.1).collect();
        let input = UnpairedInput {
            baseline: Calls::from_values(base),
            candidate: Calls::from_values(cand),
        };
        let out = compare_unpaired(&input, &options()).unwrap();
        let c = &out.comparison;
        assert_eq!(c.pairing, "unpaired");
        assert_eq!(
            (c.n_baseline, c.n_candidate, c.effect.n),
            (Some(60), Some(50), 50)
        );
        assert_eq!(c.verdict, Verdict::Improved);
        assert!(c.effect.bca.unwrap().acceleration.is_some());
    }
}
