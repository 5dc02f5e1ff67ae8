//! Constraints and guardrails: non-inferiority checks that can fail a candidate whatever its primary
//! effect.
//!
//! - **Relative constraint** on the regression ρ = −ℓ (positive = worse) against λ = ln(1 + L/100):
//!   `passed` if CI high of ρ ≤ λ, `failed` if CI low of ρ > λ, else `inconclusive`. Its CI is the
//!   comparison's own (same stream), mirrored.
//! - **Absolute constraint** on the per-pair regression in metric units (cand − ref for lower-is-better,
//!   ref − cand for higher-is-better) against a limit in those units, same rules.
//! - **Guardrail** on the candidate's own values: `every_call` fails on any violating call of a valid
//!   pair (at any pair count); `ci` judges the CI of the estimator over the candidate's per-pair values
//!   (`le`: passed if CI high ≤ limit, failed if CI low > limit; `ge` mirrored).
//!
//! Below the minimum pairs every statistical check is `inconclusive`, never `failed`.

use super::codes;
use super::compare::{bootstrap_prefix, estimate_interval, PairedInput};
use super::effect::Direction;
use super::estimators::{Estimator, Sample};
use super::options::CompareOptions;
use super::quantile::{Calls, WithinCall};
use super::resample::Parallelism;
use super::rng::{Part, RNG_NAME};
use super::verdict::{self, ConstraintStatus, LimitOp};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The limit of a constraint.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Limit {
    /// The candidate may be worse by at most this percentage (≥ 0).
    Relative { max_regression_pct: f64 },
    /// The candidate may be worse by at most this much, in the metric's units (≥ 0).
    Absolute { max_regression: f64 },
}

/// The result of a constraint check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConstraintResult {
    pub metric: String,
    pub direction: Direction,
    pub limit: Limit,
    pub n: usize,
    pub n_invalid: usize,
    pub minimum_pairs: usize,
    pub estimator: Estimator,
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
    pub rng: &'static str,
    /// Relative: the regression as a percentage, 100·(e^ρ − 1); absolute: in metric units.
    pub regression_estimate: Option<f64>,
    pub regression_ci_low: Option<f64>,
    pub regression_ci_high: Option<f64>,
    pub status: ConstraintStatus,
}

fn valid_positions(input: &PairedInput) -> Vec<usize> {
    (0..input.len())
        .filter(|&i| {
            input
                .valid
                .as_ref()
                .is_none_or(|v| v.get(i).copied().unwrap_or(false))
        })
        .collect()
}

fn check_finite(samples: &[f64], path: &str) -> Result<()> {
    match samples.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(k) => Err(Error::input(
            codes::NONFINITE_METRIC_VALUE,
            format!("{path} holds a value that is not a finite number"),
        )
        .with_path(format!("{path}.samples[{k}]"))
        .with_expected("finite values")),
    }
}

/// Checks a constraint on paired measurements of one metric.
pub fn constraint(
    input: &PairedInput,
    options: &CompareOptions,
    limit: Limit,
) -> Result<ConstraintResult> {
    options.validate()?;
    let bound = match limit {
        Limit::Relative {
            max_regression_pct: l,
        }
        | Limit::Absolute { max_regression: l } => l,
    };
    if !(bound.is_finite() && bound >= 0.0) {
        return Err(Error::input(
            codes::STATISTICS_INVALID,
            "a constraint limit must be finite and ≥ 0",
        )
        .with_path("limit")
        .with_observed(bound.to_string()));
    }
    let valid = valid_positions(input);
    let (regression_estimate, regression_ci, n) = match limit {
        Limit::Relative { max_regression_pct } => {
            let outcome = super::compare::compare_with(input, options, Parallelism::Rayon)?;
            let e = &outcome.comparison.effect;
            // ρ = −ℓ, so the regression's CI is the effect's CI mirrored.
            let to_pct = |rho: f64| 100.0 * libm::expm1(rho);
            let lambda = libm::log1p(max_regression_pct / 100.0);
            let ci = e.ci_low_log.zip(e.ci_high_log).map(|(lo, hi)| (-hi, -lo));
            let status = verdict::constraint(e.n, options.minimum_pairs, ci, lambda);
            return Ok(ConstraintResult {
                regression_estimate: e.estimate_log.map(|x| to_pct(-x)),
                regression_ci_low: ci.map(|c| to_pct(c.0)),
                regression_ci_high: ci.map(|c| to_pct(c.1)),
                status,
                ..header(input, options, limit, e.n, valid.len())
            });
        }
        Limit::Absolute { .. } => {
            let mut diffs = Vec::with_capacity(valid.len());
            for &i in &valid {
                for (role, calls) in [
                    ("baseline", &input.baseline),
                    ("candidate", &input.candidate),
                ] {
                    check_finite(calls.call(i), &format!("pairs[{i}].{role}"))?;
                }
                let b = summarize(options.within_call, input.baseline.call(i), i, "baseline")?;
                let c = summarize(options.within_call, input.candidate.call(i), i, "candidate")?;
                diffs.push(match options.direction {
                    Direction::Lower => c - b,
                    Direction::Higher => b - c,
                });
            }
            let sample = Sample::new(diffs);
            let prefix = bootstrap_prefix(options, &[Part::Str("absolute_regression")]);
            let (estimate, interval) =
                estimate_interval(&sample, options, &prefix, Parallelism::Rayon);
            (estimate, interval.map(|i| (i.low, i.high)), sample.len())
        }
    };
    Ok(ConstraintResult {
        regression_estimate,
        regression_ci_low: regression_ci.map(|c| c.0),
        regression_ci_high: regression_ci.map(|c| c.1),
        status: verdict::constraint(n, options.minimum_pairs, regression_ci, bound),
        ..header(input, options, limit, n, valid.len())
    })
}

fn summarize(within_call: WithinCall, samples: &[f64], i: usize, role: &str) -> Result<f64> {
    let needed = within_call.minimum_samples();
    match within_call.summarize(samples) {
        Some(v) if samples.len() >= needed => Ok(v),
        _ => Err(Error::input(
            codes::SAMPLES_TOO_FEW,
            format!(
                "pair {i}: a {} within-call summary needs at least {needed} samples per call",
                within_call.name()
            ),
        )
        .with_path(format!("pairs[{i}].{role}"))
        .with_expected(format!("≥ {needed} samples"))
        .with_observed(format!("{} samples", samples.len()))),
    }
}

fn header(
    input: &PairedInput,
    options: &CompareOptions,
    limit: Limit,
    n: usize,
    n_valid: usize,
) -> ConstraintResult {
    ConstraintResult {
        metric: options.metric.clone(),
        direction: options.direction,
        limit,
        n,
        n_invalid: input.len() - n_valid,
        minimum_pairs: options.minimum_pairs,
        estimator: options.estimator,
        confidence: options.confidence,
        resamples: options.resamples,
        seed: options.seed,
        rng: RNG_NAME,
        regression_estimate: None,
        regression_ci_low: None,
        regression_ci_high: None,
        status: ConstraintStatus::Inconclusive,
    }
}

/// How a guardrail is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardrailMode {
    EveryCall,
    Ci,
}

/// The result of a guardrail check on the candidate's values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardrailResult {
    pub metric: String,
    pub op: LimitOp,
    pub limit: f64,
    pub mode: GuardrailMode,
    pub n: usize,
    pub minimum_pairs: usize,
    /// `ci` mode: the estimate and CI of the estimator over the candidate's per-pair values.
    pub estimate: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// `every_call` mode: (pair index, sample index) of each violating sample in a valid pair.
    pub violations: Vec<(usize, usize)>,
    pub status: ConstraintStatus,
    pub rng: &'static str,
}

/// Checks a guardrail on the candidate's calls (`valid` marks the valid pairs; all when absent).
/// Values need only be finite: guardrails apply to counts and rates that may be 0.
pub fn guardrail(
    candidate: &Calls,
    valid: Option<&[bool]>,
    options: &CompareOptions,
    op: LimitOp,
    limit: f64,
    mode: GuardrailMode,
) -> Result<GuardrailResult> {
    options.validate()?;
    if !limit.is_finite() {
        return Err(Error::input(
            codes::STATISTICS_INVALID,
            "a guardrail limit must be finite",
        )
        .with_path("limit"));
    }
    let valid: Vec<usize> = (0..candidate.len())
        .filter(|&i| valid.is_none_or(|v| v.get(i).copied().unwrap_or(false)))
        .collect();
    for &i in &valid {
        check_finite(candidate.call(i), &format!("pairs[{i}].candidate"))?;
    }
    let mut result = GuardrailResult {
        metric: options.metric.clone(),
        op,
        limit,
        mode,
        n: valid.len(),
        minimum_pairs: options.minimum_pairs,
        estimate: None,
        ci_low: None,
        ci_high: None,
        violations: Vec::new(),
        status: ConstraintStatus::Inconclusive,
        rng: RNG_NAME,
    };
    match mode {
        GuardrailMode::EveryCall => {
            for &i in &valid {
                let call = candidate.call(i);
                for k in verdict::guardrail_every_call(call, op, limit) {
                    result.violations.push((i, k));
                }
            }
            result.status = if result.violations.is_empty() {
                ConstraintStatus::Passed
            } else {
                ConstraintStatus::Failed
            };
        }
        GuardrailMode::Ci => {
            let mut values = Vec::with_capacity(valid.len());
            for &i in &valid {
                values.push(summarize(
                    options.within_call,
                    candidate.call(i),
                    i,
                    "candidate",
                )?);
            }
            let sample = Sample::new(values);
            let prefix = bootstrap_prefix(options, &[Part::Str("guardrail")]);
            let (estimate, interval) =
                estimate_interval(&sample, options, &prefix, Parallelism::Rayon);
            let ci = interval.map(|i| (i.low, i.high));
            result.estimate = estimate;
            result.ci_low = ci.map(|c| c.0);
            result.ci_high = ci.map(|c| c.1);
            result.status =
                verdict::guardrail_ci(sample.len(), options.minimum_pairs, ci, op, limit);
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> CompareOptions {
        CompareOptions {
            resamples: 2000,
            minimum_pairs: 5,
            ..CompareOptions::default()
        }
    }

    fn input(base: &[f64], cand: &[f64]) -> PairedInput {
        PairedInput::from_values(base.to_vec(), cand.to_vec())
    }

    #[test]
    fn relative_constraint_mirrors_the_effect() {
        let base = vec![10.0; 20];
        let slower: Vec<f64> = (0..20)
            .map(|i| 10.0 * (1.05 + 0.001 * (i % 3) as f64))
            .collect();
        let limit = Limit::Relative {
            max_regression_pct: 2.0,
        };
        let r = constraint(&input(&base, &slower), &opts(), limit).unwrap();
        assert_eq!(r.status, ConstraintStatus::Failed);
        let est = r.regression_estimate.unwrap();
        assert!((est - 5.1).abs() < 0.2, "{est}");
        let r = constraint(&input(&base, &base), &opts(), limit).unwrap();
        assert_eq!(r.status, ConstraintStatus::Passed);
        let few = constraint(&input(&base[..3], &slower[..3]), &opts(), limit).unwrap();
        assert_eq!(few.status, ConstraintStatus::Inconclusive);
    }

    #[test]
    fn absolute_constraint_in_metric_units() {
        let base = vec![100.0; 20];
        let more: Vec<f64> = (0..20).map(|i| 130.0 + (i % 4) as f64).collect();
        let r = constraint(
            &input(&base, &more),
            &opts(),
            Limit::Absolute {
                max_regression: 10.0,
            },
        )
        .unwrap();
        assert_eq!(r.status, ConstraintStatus::Failed);
        assert_eq!(r.regression_estimate, Some(31.5));
        let r = constraint(
            &input(&base, &more),
            &opts(),
            Limit::Absolute {
                max_regression: 40.0,
            },
        )
        .unwrap();
        assert_eq!(r.status, ConstraintStatus::Passed);
        // Higher is better: a drop is the regression.
        let o = CompareOptions {
            direction: Direction::Higher,
            ..opts()
        };
        let r = constraint(
            &input(&more, &base),
            &o,
            Limit::Absolute {
                max_regression: 10.0,
            },
        )
        .unwrap();
        assert_eq!(r.status, ConstraintStatus::Failed);
    }

    #[test]
    fn every_call_guardrail_fails_on_one_violation_at_any_count() {
        let calls = Calls::from_values(vec![0.0, 0.0, 2.0]);
        let every = GuardrailMode::EveryCall;
        let r = guardrail(&calls, None, &opts(), LimitOp::Le, 0.0, every).unwrap();
        assert_eq!(
            (r.status, r.violations.clone()),
            (ConstraintStatus::Failed, vec![(2, 0)])
        );
        let valid = [true, true, false];
        let r = guardrail(&calls, Some(&valid), &opts(), LimitOp::Le, 0.0, every).unwrap();
        assert_eq!(r.status, ConstraintStatus::Passed);
    }

    #[test]
    fn ci_guardrail() {
        let cand = Calls::from_values((0..20).map(|i| 0.99 + 0.001 * (i % 5) as f64).collect());
        let ci = GuardrailMode::Ci;
        let r = guardrail(&cand, None, &opts(), LimitOp::Ge, 0.98, ci).unwrap();
        assert_eq!(r.status, ConstraintStatus::Passed);
        let r = guardrail(&cand, None, &opts(), LimitOp::Ge, 0.999, ci).unwrap();
        assert_eq!(r.status, ConstraintStatus::Failed);
    }
}
