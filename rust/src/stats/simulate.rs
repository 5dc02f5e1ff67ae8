//! The honesty harness: simulated A/A and A/B experiments run through the real comparison, counting
//! how often each verdict comes out. The model is a duration (lower is better) measured in pairs of
//! calls, each call yielding several samples:
//!
//! - value of a call at call index t = base_role × block × drift(t) × e^{σ_call·Z} × call outlier;
//! - block = e^{σ_block·Z}: a level shift shared by both calls of a pair (what pairing removes);
//! - drift(t) = 1 + (d/100)·t: linear drift over the whole run (what AB/BA interleaving cancels);
//! - an outlier multiplies by 1 + s·E (E standard exponential) with its probability (heavy right tail);
//! - each sample = value × e^{σ_sample·Z} × sample outlier; the pair value is the within-call summary;
//! - the candidate's base is base/(1 + e/100), so its true effect is e % on the effect scale.
//!
//! Simulation i draws from the stream ("simulate", seed, i) and bootstraps with its own seed, so a report
//! is bit-identical for one seed on any machine and thread count.

use super::codes;
use super::compare::{compare_with, PairedInput};
use super::effect::Direction;
use super::options::CompareOptions;
use super::quantile::Calls;
use super::resample::Parallelism;
use super::resolution::Resolving;
use super::rng::{KeyPrefix, Part, Stream, MAX_EXACT_INT, RNG_NAME};
use super::schedule::{self, Order};
use super::verdict::Verdict;
use crate::error::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The order of the calls within pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Seeded balanced AB/BA orders.
    #[default]
    Interleaved,
    /// Baseline first in every pair.
    FixedAb,
    /// Candidate first in every pair.
    FixedBa,
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimulationOptions {
    pub simulations: usize,
    pub pairs: usize,
    pub samples_per_call: usize,
    pub design: Design,
    /// The candidate's true improvement, % (0 = A/A).
    pub true_effect_pct: f64,
    pub base_value: f64,
    /// Linear drift per call, % of the starting level (negative = getting faster).
    pub drift_pct_per_call: f64,
    pub block_sigma: f64,
    pub call_sigma: f64,
    pub sample_sigma: f64,
    pub call_outlier_prob: f64,
    pub sample_outlier_prob: f64,
    pub outlier_scale: f64,
    pub seed: u64,
    /// The comparison each simulation runs (its seed and scope are set per simulation).
    pub statistics: CompareOptions,
}

impl Default for SimulationOptions {
    fn default() -> Self {
        Self {
            simulations: 1000,
            pairs: 30,
            samples_per_call: 5,
            design: Design::Interleaved,
            true_effect_pct: 0.0,
            base_value: 10.0,
            drift_pct_per_call: 0.0,
            block_sigma: 0.02,
            call_sigma: 0.01,
            sample_sigma: 0.02,
            call_outlier_prob: 0.02,
            sample_outlier_prob: 0.05,
            outlier_scale: 0.5,
            seed: 0,
            statistics: CompareOptions {
                resamples: 1000,
                ..CompareOptions::default()
            },
        }
    }
}

/// Verdict counts and accuracy figures over all simulations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimulationReport {
    pub rng: &'static str,
    pub options: SimulationOptions,
    pub simulations: usize,
    pub improved: usize,
    pub regressed: usize,
    pub equivalent: usize,
    pub inconclusive: usize,
    /// (improved + regressed) / simulations: the false-positive rate when the true effect is 0.
    pub decisive_rate: f64,
    pub improved_rate: f64,
    /// The true effect on the log scale, ln(1 + e/100).
    pub true_effect_log: f64,
    /// Share of CIs that contain the true effect.
    pub coverage: f64,
    pub mean_estimate_pct: f64,
    /// SD of the estimates across simulations (log scale).
    pub sd_estimate_log: f64,
    pub mean_ci_half_width_log: f64,
    /// √(mean within-simulation variance of the pair log ratios).
    pub pooled_sd_log: f64,
    /// MDE at `pairs` predicted from `pooled_sd_log` (normal approximation), as a percentage.
    pub mde_pct: f64,
    /// √(mean within-simulation squared robust SD (1.4826·MAD) of the pair log ratios).
    pub pooled_robust_sd_log: f64,
    /// MDE at `pairs` predicted from `pooled_robust_sd_log`, as a percentage.
    pub robust_mde_pct: f64,
}

struct One {
    verdict: Verdict,
    estimate: f64,
    covered: bool,
    half_width: f64,
    variance: f64,
    robust_variance: f64,
}

fn invalid(field: &str, expected: &str) -> Error {
    Error::input(
        codes::STATISTICS_INVALID,
        format!("simulation option {field} is out of range"),
    )
    .with_path(field.to_string())
    .with_expected(expected.to_string())
}

impl SimulationOptions {
    fn validate(&self) -> Result<()> {
        if !(1..=1_000_000).contains(&self.simulations) {
            return Err(invalid("simulations", "1 to 1000000"));
        }
        if !(1..=100_000).contains(&self.pairs) {
            return Err(invalid("pairs", "1 to 100000"));
        }
        if !(1..=100_000).contains(&self.samples_per_call) {
            return Err(invalid("samples_per_call", "1 to 100000"));
        }
        let sigmas = [
            self.block_sigma,
            self.call_sigma,
            self.sample_sigma,
            self.outlier_scale,
        ];
        if sigmas
            .iter()
            .any(|s| !(s.is_finite() && *s >= 0.0 && *s <= 10.0))
        {
            return Err(invalid("*_sigma, outlier_scale", "finite, 0 to 10"));
        }
        let probs = [self.call_outlier_prob, self.sample_outlier_prob];
        if probs.iter().any(|p| !(0.0..=1.0).contains(p)) {
            return Err(invalid("*_outlier_prob", "0 to 1"));
        }
        if !(self.base_value.is_finite() && self.base_value > 0.0) {
            return Err(invalid("base_value", "finite and > 0"));
        }
        if !(self.true_effect_pct.is_finite() && self.true_effect_pct > -100.0) {
            return Err(invalid("true_effect_pct", "finite and > -100"));
        }
        let last = (2 * self.pairs) as f64;
        if !(self.drift_pct_per_call.is_finite()
            && 1.0 + self.drift_pct_per_call / 100.0 * last > 0.0)
        {
            return Err(invalid(
                "drift_pct_per_call",
                "a drift that keeps every value > 0",
            ));
        }
        if self.seed > MAX_EXACT_INT {
            return Err(invalid("seed", "0 to 2^53 − 1"));
        }
        self.statistics.validate()
    }
}

/// Runs the simulations (in parallel over simulations; each bootstrap runs on its own thread).
pub fn run(options: &SimulationOptions) -> Result<SimulationReport> {
    options.validate()?;
    let prefix = KeyPrefix::new("simulate", &[Part::Int(options.seed)]);
    let true_log = libm::log1p(options.true_effect_pct / 100.0);
    let results: Vec<Result<One>> = (0..options.simulations)
        .into_par_iter()
        .map(|i| simulate_one(options, &prefix, i, true_log))
        .collect();
    let mut ones = Vec::with_capacity(results.len());
    for r in results {
        ones.push(r?);
    }
    Ok(summarize(options, &ones, true_log))
}

fn simulate_one(
    options: &SimulationOptions,
    prefix: &KeyPrefix,
    i: usize,
    true_log: f64,
) -> Result<One> {
    let mut stream = Stream::from_key(prefix.key_with(i as u64));
    let plan_seed = stream.next_u64() >> 11;
    let bootstrap_seed = stream.next_u64() >> 11;
    let orders = match options.design {
        Design::Interleaved => schedule::balanced(options.pairs, plan_seed),
        Design::FixedAb => vec![Order::Ab; options.pairs],
        Design::FixedBa => vec![Order::Ba; options.pairs],
    };
    let base_candidate = options.base_value / (1.0 + options.true_effect_pct / 100.0);
    let mut baseline = Vec::with_capacity(options.pairs);
    let mut candidate = Vec::with_capacity(options.pairs);
    for (p, order) in orders.iter().enumerate() {
        let block = libm::exp(options.block_sigma * stream.normal());
        let roles = match order {
            Order::Ab => [(true, 0), (false, 1)],
            Order::Ba => [(false, 0), (true, 1)],
        };
        let mut calls: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for (is_baseline, position) in roles {
            let t = (2 * p + position) as f64;
            let drift = 1.0 + options.drift_pct_per_call / 100.0 * t;
            let base = if is_baseline {
                options.base_value
            } else {
                base_candidate
            };
            let level = base * block * drift * call_factor(options, &mut stream);
            let samples = (0..options.samples_per_call)
                .map(|_| level * sample_factor(options, &mut stream))
                .collect();
            if let Some(slot) = calls.get_mut(usize::from(!is_baseline)) {
                *slot = samples;
            }
        }
        let [b, c] = calls;
        baseline.push(b);
        candidate.push(c);
    }
    let input = PairedInput {
        baseline: Calls::from_nested(baseline)?,
        candidate: Calls::from_nested(candidate)?,
        ..PairedInput::default()
    };
    let stats = CompareOptions {
        direction: Direction::Lower,
        seed: bootstrap_seed,
        scope: format!("simulation {i}"),
        ..options.statistics.clone()
    };
    let outcome = compare_with(&input, &stats, Parallelism::Sequential)?;
    let c = outcome.comparison;
    let effects: Vec<f64> = outcome.rows.iter().filter_map(|r| r.effect).collect();
    let variance = super::estimators::std_dev(&effects).map_or(0.0, |s| s * s);
    let robust_variance = super::estimators::robust_sd(&effects).map_or(0.0, |s| s * s);
    let (low, high) = (c.effect.ci_low_log, c.effect.ci_high_log);
    Ok(One {
        verdict: c.verdict,
        estimate: c.effect.estimate_log.unwrap_or(f64::NAN),
        covered: matches!((low, high), (Some(l), Some(h)) if l <= true_log && true_log <= h),
        half_width: match (low, high) {
            (Some(l), Some(h)) => 0.5 * (h - l),
            _ => f64::NAN,
        },
        variance,
        robust_variance,
    })
}

fn call_factor(options: &SimulationOptions, stream: &mut Stream) -> f64 {
    let noise = libm::exp(options.call_sigma * stream.normal());
    noise * outlier(options.call_outlier_prob, options.outlier_scale, stream)
}

fn sample_factor(options: &SimulationOptions, stream: &mut Stream) -> f64 {
    let noise = libm::exp(options.sample_sigma * stream.normal());
    noise * outlier(options.sample_outlier_prob, options.outlier_scale, stream)
}

/// 1 + s·E with probability `prob`, else 1 (always one uniform drawn, plus one exponential on a hit).
fn outlier(prob: f64, scale: f64, stream: &mut Stream) -> f64 {
    if stream.unit_open() < prob {
        1.0 + scale * stream.exponential()
    } else {
        1.0
    }
}

fn summarize(options: &SimulationOptions, ones: &[One], true_log: f64) -> SimulationReport {
    let n = ones.len().max(1) as f64;
    let count = |v: Verdict| ones.iter().filter(|o| o.verdict == v).count();
    let (improved, regressed) = (count(Verdict::Improved), count(Verdict::Regressed));
    let mean = |f: &dyn Fn(&One) -> f64| ones.iter().map(f).sum::<f64>() / n;
    let mean_estimate = mean(&|o| o.estimate);
    let sd_estimate =
        super::estimators::std_dev(&ones.iter().map(|o| o.estimate).collect::<Vec<_>>())
            .unwrap_or(0.0);
    let pooled_sd = mean(&|o| o.variance).sqrt();
    let stats = &options.statistics;
    let resolving = Resolving::new(pooled_sd, stats.estimator, stats.confidence, stats.power);
    let pooled_robust = mean(&|o| o.robust_variance).sqrt();
    let robust = Resolving {
        sd: pooled_robust,
        ..resolving
    };
    SimulationReport {
        rng: RNG_NAME,
        options: options.clone(),
        simulations: ones.len(),
        improved,
        regressed,
        equivalent: count(Verdict::Equivalent),
        inconclusive: count(Verdict::Inconclusive),
        decisive_rate: (improved + regressed) as f64 / n,
        improved_rate: improved as f64 / n,
        true_effect_log: true_log,
        coverage: ones.iter().filter(|o| o.covered).count() as f64 / n,
        mean_estimate_pct: 100.0 * libm::expm1(mean_estimate),
        sd_estimate_log: sd_estimate,
        mean_ci_half_width_log: mean(&|o| o.half_width),
        pooled_sd_log: pooled_sd,
        mde_pct: 100.0 * libm::expm1(resolving.mde(options.pairs)),
        pooled_robust_sd_log: pooled_robust,
        robust_mde_pct: 100.0 * libm::expm1(robust.mde(options.pairs)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SimulationOptions {
        SimulationOptions {
            simulations: 40,
            pairs: 12,
            statistics: CompareOptions {
                resamples: 200,
                minimum_pairs: 5,
                ..CompareOptions::default()
            },
            ..SimulationOptions::default()
        }
    }

    #[test]
    fn a_report_is_reproducible_and_counts_every_simulation() {
        let a = run(&small()).unwrap();
        let b = run(&small()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.improved + a.regressed + a.equivalent + a.inconclusive, 40);
    }

    #[test]
    fn a_large_true_effect_is_found() {
        let o = SimulationOptions {
            true_effect_pct: 20.0,
            ..small()
        };
        let r = run(&o).unwrap();
        assert_eq!(r.improved, 40);
        assert!(
            (r.mean_estimate_pct - 20.0).abs() < 2.0,
            "{}",
            r.mean_estimate_pct
        );
    }

    #[test]
    fn fixed_order_turns_drift_into_a_false_win() {
        let o = SimulationOptions {
            drift_pct_per_call: -3.0,
            design: Design::FixedAb,
            ..small()
        };
        assert!(run(&o).unwrap().improved >= 30);
        let o = SimulationOptions {
            design: Design::Interleaved,
            ..o
        };
        assert!(run(&o).unwrap().improved <= 6);
    }

    #[test]
    fn drift_that_reaches_zero_is_refused() {
        let o = SimulationOptions {
            drift_pct_per_call: -10.0,
            ..small()
        };
        assert_eq!(run(&o).unwrap_err().code, codes::STATISTICS_INVALID);
    }
}
