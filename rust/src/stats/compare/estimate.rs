//! What every comparison shares: the bootstrap stream prefix, the estimate and its interval, the
//! effect on both scales, and the header of a `Comparison`.

use super::model::*;
use crate::stats::bootstrap::{self, CiMethod, Interval};
use crate::stats::codes;
use crate::stats::effect::change_interval;
use crate::stats::estimators::Sample;
use crate::stats::options::CompareOptions;
use crate::stats::resample::{replicates_batched, Parallelism};
use crate::stats::rng::{KeyPrefix, Part, RNG_NAME};
use crate::stats::verdict::Judgement;

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

pub(super) fn effect_estimate(
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

pub(super) fn interval_pair(interval: Option<&Interval>) -> Option<(f64, f64)> {
    interval.map(|i| (i.low, i.high))
}

pub(super) fn bca_degenerate_warning() -> Warning {
    Warning {
        code: codes::BCA_DEGENERATE,
        message:
            "the BCa interval could not be computed (the estimate lies at an end of the replicate \
                  distribution or the acceleration is too large); the percentile interval is given"
                .to_string(),
    }
}

/// The fields every comparison shares, with the verdict.
pub(super) fn header(options: &CompareOptions, judgement: Judgement) -> Comparison {
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
