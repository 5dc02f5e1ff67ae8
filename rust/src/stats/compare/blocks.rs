//! The unit of analysis: rows that come in blocks (the same process, run or worker) are not independent.
//!
//! - **Per-block effects**: the estimator and its bootstrap CI within each block (reported; with
//!   `--block-column` given or a block-like column found). Paired: the block's pairs' effects. Unpaired:
//!   each side's blocks on their own, the block's calls against the other side's pooled estimate.
//! - **Disagreement**: blocks whose CIs do not all overlap (the largest CI low above the smallest CI
//!   high; unpaired: within one side) warn `dependent_samples_suspected`: a pooled CI that resamples
//!   pairs (or calls) treats them as independent and is too narrow.
//! - **Block bootstrap** (`resample`): replicate b draws as many blocks as there are, with replacement,
//!   from the `gpuopt.rng/v1` stream ("bootstrap", seed, scope, metric, "blocks", b), pools their
//!   pairs' effects and takes the estimator; the CI is the percentile interval of the replicates.
//!   Unpaired: stream ("bootstrap", seed, scope, metric, "unpaired", "blocks", b) draws the baseline's
//!   blocks, then the candidate's, each side as many as it has.

use super::estimate::{bootstrap_prefix, estimate_interval};
use super::input::Blocks;
use super::model::{BlockEffect, EffectEstimate, Warning};
use crate::stats::bootstrap::{self, CiMethod, Interval};
use crate::stats::codes;
use crate::stats::estimators::{Estimator, Sample};
use crate::stats::options::CompareOptions;
use crate::stats::resample::{replicates, Parallelism};
use crate::stats::rng::{Part, Stream};

/// Values (effects, or an unpaired side's log values) grouped by block, in block order.
pub type ByBlock = Vec<(String, Vec<f64>)>;

/// The valid pairs' effects of each block (blocks without valid pairs are left out), in block order.
pub fn effects_by_block(
    blocks: &Blocks,
    valid: &[usize],
    effect_of: impl Fn(usize) -> Option<f64>,
) -> ByBlock {
    let mut out: Vec<Vec<f64>> = vec![Vec::new(); blocks.names.len()];
    for &i in valid {
        let (Some(&b), Some(e)) = (blocks.block_of.get(i), effect_of(i)) else {
            continue;
        };
        if let Some(slot) = out.get_mut(b) {
            slot.push(e);
        }
    }
    blocks
        .names
        .iter()
        .cloned()
        .zip(out)
        .filter(|(_, e)| !e.is_empty())
        .collect()
}

/// Per-block effects, each with its own bootstrap CI (stream parts "block"[, side], name).
pub fn per_block(
    by_block: &[(String, Vec<f64>)],
    side: Option<&'static str>,
    options: &CompareOptions,
    parallelism: Parallelism,
    effect: impl Fn(usize, Option<f64>, Option<&Interval>) -> EffectEstimate,
) -> Vec<BlockEffect> {
    by_block
        .iter()
        .map(|(name, effects)| {
            let sample = Sample::new(effects.clone());
            let mut parts = vec![Part::Str("block")];
            if let Some(side) = side {
                parts.push(Part::Str(side));
            }
            parts.push(Part::Str(name));
            let prefix = bootstrap_prefix(options, &parts);
            let (estimate, interval) = estimate_interval(&sample, options, &prefix, parallelism);
            BlockEffect {
                case_id: name.clone(),
                side,
                effect: effect(sample.len(), estimate, interval.as_ref()),
            }
        })
        .collect()
}

/// True when the per-block CIs (those that exist) of one side (paired: of all blocks) do not all
/// overlap.
pub fn disagree(per_block: &[BlockEffect]) -> bool {
    [None, Some("baseline"), Some("candidate")]
        .into_iter()
        .any(|side| {
            let of_side = || per_block.iter().filter(move |b| b.side == side);
            let lows = of_side().filter_map(|b| b.effect.ci_low_pct);
            let highs = of_side().filter_map(|b| b.effect.ci_high_pct);
            match (lows.reduce(f64::max), highs.reduce(f64::min)) {
                (Some(low), Some(high)) => low > high,
                _ => false,
            }
        })
}

/// The `dependent_samples_suspected` warning, naming each block's effect.
pub fn disagreement_warning(column: &str, per_block: &[BlockEffect]) -> Warning {
    let pct = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:+.2}"));
    let unpaired = per_block.iter().any(|b| b.side.is_some());
    let unit = if unpaired { "calls" } else { "pairs" };
    let listed: Vec<String> = per_block
        .iter()
        .take(8)
        .map(|b| {
            format!(
                "{}{}: {} % [{}, {}] over {} {unit}",
                b.side.map_or(String::new(), |s| format!("{s} ")),
                b.case_id,
                pct(b.effect.estimate_pct),
                pct(b.effect.ci_low_pct),
                pct(b.effect.ci_high_pct),
                b.effect.n
            )
        })
        .collect();
    let message = if unpaired {
        format!(
            "calls come in {} blocks of column {column:?} whose effects disagree within a side ({}); \
             the CI resamples calls as if they were independent, so it is too narrow; --block-column \
             {column} resamples each side's blocks instead",
            per_block.len(),
            listed.join("; ")
        )
    } else {
        format!(
            "pairs come in {} blocks of column {column:?} whose effects disagree ({}); the CI resamples \
             pairs as if they were independent, so it is too narrow; --block-column {column} resamples \
             blocks instead",
            per_block.len(),
            listed.join("; ")
        )
    };
    Warning {
        code: codes::DEPENDENT_SAMPLES_SUSPECTED,
        message,
    }
}

/// The `blocks_too_few` warning of unpaired sides whose calls come from fewer than two blocks (`sides`:
/// each such side and its block count): the variation between blocks cannot be measured, so neither the
/// check nor the block bootstrap can see it.
pub fn too_few_blocks_warning(column: &str, sides: &[(&str, usize)]) -> Warning {
    let which = match sides {
        [(side, 1)] => format!("the {side}'s calls come from 1 block"),
        [(side, k)] => format!("the {side}'s calls come from {k} blocks"),
        _ => {
            let counts: Vec<String> = sides.iter().map(|(s, k)| format!("{s} {k}")).collect();
            format!(
                "each side's calls come from fewer than 2 blocks ({})",
                counts.join(", ")
            )
        }
    };
    Warning {
        code: codes::BLOCKS_TOO_FEW,
        message: format!(
            "{which} of column {column:?}: the variation between blocks (processes, runs) cannot be \
             measured and no CI includes it, so the effect may be a difference between blocks; compare \
             at least 2 blocks per side"
        ),
    }
}

/// Draws as many blocks as there are, with replacement, pools their values and takes the estimator.
fn draw_blocks(
    stream: &mut Stream,
    by_block: &[(String, Vec<f64>)],
    estimator: Estimator,
    drawn: &mut Vec<f64>,
) -> f64 {
    let k = by_block.len() as u64;
    drawn.clear();
    for _ in 0..k {
        let b = stream.below(k) as usize;
        if let Some((_, values)) = by_block.get(b) {
            drawn.extend_from_slice(values);
        }
    }
    Sample::new(drawn.clone())
        .estimate(estimator)
        .unwrap_or(f64::NAN)
}

/// The percentile interval of the finite replicates.
fn percentile_interval(mut reps: Vec<f64>, confidence: f64) -> Option<Interval> {
    reps.retain(|v| v.is_finite());
    bootstrap::sort(&mut reps);
    bootstrap::percentile(&reps, confidence).map(|(low, high)| Interval {
        low,
        high,
        method: CiMethod::Percentile,
        z0: None,
        acceleration: None,
        bca_degenerate: false,
    })
}

/// The block-bootstrap estimate and percentile CI of the pooled effects.
pub fn block_interval(
    by_block: &[(String, Vec<f64>)],
    options: &CompareOptions,
    parallelism: Parallelism,
) -> (Option<f64>, Option<Interval>) {
    let pooled: Vec<f64> = by_block
        .iter()
        .flat_map(|(_, e)| e.iter().copied())
        .collect();
    let estimate = Sample::new(pooled.clone()).estimate(options.estimator);
    if by_block.len() < 2 {
        return (estimate, None);
    }
    let prefix = bootstrap_prefix(options, &[Part::Str("blocks")]);
    let estimator = options.estimator;
    let reps = replicates(
        &prefix,
        options.resamples,
        parallelism,
        || Vec::with_capacity(pooled.len() * 2),
        |stream, drawn: &mut Vec<f64>| draw_blocks(stream, by_block, estimator, drawn),
    );
    (estimate, percentile_interval(reps, options.confidence))
}

/// The block-bootstrap percentile CI of an unpaired comparison, θ = sign·(est(candidate) −
/// est(baseline)) of the sides' log values grouped by block; none unless each side has 2 blocks.
pub fn unpaired_block_interval(
    baseline: &[(String, Vec<f64>)],
    candidate: &[(String, Vec<f64>)],
    sign: f64,
    options: &CompareOptions,
    parallelism: Parallelism,
) -> Option<Interval> {
    if baseline.len() < 2 || candidate.len() < 2 {
        return None;
    }
    let prefix = bootstrap_prefix(options, &[Part::Str("unpaired"), Part::Str("blocks")]);
    let estimator = options.estimator;
    let reps = replicates(
        &prefix,
        options.resamples,
        parallelism,
        Vec::new,
        |stream, drawn: &mut Vec<f64>| {
            let b = draw_blocks(stream, baseline, estimator, drawn);
            let c = draw_blocks(stream, candidate, estimator, drawn);
            sign * (c - b)
        },
    );
    percentile_interval(reps, options.confidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(block_of: Vec<usize>, names: &[&str]) -> Blocks {
        Blocks {
            block_of,
            names: names.iter().map(|s| (*s).to_string()).collect(),
            column: "run".into(),
            resample: true,
        }
    }

    #[test]
    fn effects_are_grouped_by_block_in_block_order() {
        let b = blocks(vec![1, 0, 1, 0, 2], &["r0", "r1", "r2"]);
        let effects = [0.1, 0.2, 0.3, 0.4, 0.5];
        let got = effects_by_block(&b, &[0, 1, 2, 3], |i| effects.get(i).copied());
        assert_eq!(
            got,
            vec![
                ("r0".to_string(), vec![0.2, 0.4]),
                ("r1".to_string(), vec![0.1, 0.3])
            ]
        );
    }

    #[test]
    fn the_block_bootstrap_is_wider_than_the_pair_bootstrap_when_blocks_differ() {
        // Two runs: one at +1 %, one at +20 %, 10 pairs each with a little spread inside.
        let run = |center: f64| {
            (0..10)
                .map(|i| center + 0.001 * f64::from(i))
                .collect::<Vec<_>>()
        };
        let by_block = vec![("a".to_string(), run(0.01)), ("b".to_string(), run(0.2))];
        let options = CompareOptions {
            estimator: crate::stats::estimators::Estimator::Mean,
            resamples: 2000,
            ..CompareOptions::default()
        };
        let (_, blocked) = block_interval(&by_block, &options, Parallelism::Sequential);
        let pooled = Sample::new(by_block.iter().flat_map(|(_, e)| e.clone()).collect());
        let prefix = bootstrap_prefix(&options, &[]);
        let (_, paired) = estimate_interval(&pooled, &options, &prefix, Parallelism::Sequential);
        let width = |i: Option<Interval>| i.map_or(0.0, |i| i.high - i.low);
        assert!(
            width(blocked) > 2.0 * width(paired),
            "{blocked:?} vs {paired:?}"
        );
        // Same seed, same numbers on any parallelism.
        let again = block_interval(&by_block, &options, Parallelism::Rayon).1;
        assert_eq!(blocked, again);
    }
}
