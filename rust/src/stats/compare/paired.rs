//! The paired comparison: per-pair effects, the bootstrap CI of the estimator and the verdict against
//! the minimum effect.

use super::blocks;
use super::estimate::*;
use super::facts::*;
use super::input::PairedInput;
use super::model::*;
use crate::error::{Error, Result};
use crate::stats::codes;
use crate::stats::options::CompareOptions;
use crate::stats::resample::Parallelism;
use crate::stats::verdict;

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
        blocks::per_block(b, None, options, parallelism, |n, e, i| {
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
