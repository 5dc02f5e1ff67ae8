//! The unpaired comparison: two independent samples, each side resampled on its own, same CI machinery.

use super::estimate::*;
use super::input::{check_ratio, check_values};
use super::model::*;
use crate::error::{Error, Result};
use crate::stats::bootstrap::{self, CiMethod};
use crate::stats::codes;
use crate::stats::effect::Direction;
use crate::stats::estimators::Sample;
use crate::stats::options::CompareOptions;
use crate::stats::quantile::Calls;
use crate::stats::resample::{replicates, Parallelism};
use crate::stats::rng::Part;
use crate::stats::verdict;

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
