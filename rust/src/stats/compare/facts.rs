//! The facts a paired comparison reports beside its verdict: the stratified sample, the observed
//! spread and its resolution, per-case effects, the AB/BA order effect and the tail effects.

use super::estimate::*;
use super::input::PairedInput;
use super::model::*;
use crate::error::Result;
use crate::stats::codes;
use crate::stats::estimators::{self, Sample};
use crate::stats::options::CompareOptions;
use crate::stats::quantile::WithinCall;
use crate::stats::resample::Parallelism;
use crate::stats::resolution::{Resolving, METHOD};
use crate::stats::rng::Part;
use crate::stats::schedule::Order;
use crate::stats::verdict;

/// The valid pairs' effects, stratified by case (cases without valid pairs are left out).
pub(super) fn pooled_sample(
    input: &PairedInput,
    valid: &[usize],
    effects: Vec<f64>,
) -> Result<Sample> {
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

pub(super) fn spread(effects: &[f64], options: &CompareOptions) -> Option<Spread> {
    if !options.effect_scale.is_log() {
        return None;
    }
    let sd = estimators::std_dev(effects)?;
    let robust = estimators::robust_sd(effects)?;
    let n = effects.len();
    let facts = Resolving::new(sd, options.estimator, options.confidence, options.power);
    let robust_facts = Resolving {
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
        method: METHOD,
    })
}

pub(super) fn resolution(
    n: usize,
    options: &CompareOptions,
    warnings: &mut Vec<Warning>,
) -> Option<Resolution> {
    let sd = options.noise_sd_log?;
    if !options.effect_scale.is_log() || n == 0 {
        return None;
    }
    let facts = Resolving::new(sd, options.estimator, options.confidence, options.power);
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

pub(super) fn per_case(
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

pub(super) fn order_facts(
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

pub(super) fn tails(
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
