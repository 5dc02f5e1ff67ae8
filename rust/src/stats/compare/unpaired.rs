//! The unpaired comparison: two independent samples, each side resampled on its own, same CI machinery.
//! With blocks (the process or run of each call), each side's blocks are diagnosed and, when asked,
//! resampled on their own.

use super::blocks::{self, ByBlock};
use super::estimate::*;
use super::input::{check_ratio, check_values, Blocks};
use super::model::*;
use crate::error::{Error, Result};
use crate::stats::bootstrap::{self, CiMethod, Interval};
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
    /// The block (process, run) of every call of each side: per-block effects, the block bootstrap.
    pub blocks: Option<UnpairedBlocks>,
}

/// The blocks of each side's calls, from one column. The sides are independent samples, so a baseline
/// block and a candidate block are never the same block, whatever their labels; the column and
/// `resample` are the baseline's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnpairedBlocks {
    pub baseline: Blocks,
    pub candidate: Blocks,
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
/// acceleration from both sides' jackknifes. With blocks: per-block effects and the disagreement check
/// per side, and with `resample` the block bootstrap of each side's blocks instead of its calls.
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
    let base_logs: Vec<f64> = baseline_values.iter().map(|&v| libm::log(v)).collect();
    let cand_logs: Vec<f64> = candidate_values.iter().map(|&v| libm::log(v)).collect();
    let base = Sample::new(base_logs.clone());
    let cand = Sample::new(cand_logs.clone());
    let sign = match options.direction {
        Direction::Lower => -1.0,
        Direction::Higher => 1.0,
    };
    let est = options.estimator;
    let theta = |b: Option<f64>, c: Option<f64>| Some(sign * (c? - b?));
    let estimate = theta(base.estimate(est), cand.estimate(est));
    let n = base.len().min(cand.len());
    let by_block = match &input.blocks {
        Some(b) => Some(side_blocks(b, &base_logs, &cand_logs)?),
        None => None,
    };
    let resample_blocks = input.blocks.as_ref().is_some_and(|b| b.baseline.resample);
    let interval = match (&by_block, estimate) {
        (Some((b, c)), Some(_)) if resample_blocks => {
            blocks::unpaired_block_interval(b, c, sign, options, Parallelism::Rayon)
        }
        (_, Some(theta_hat)) if n >= 2 => row_interval(&base, &cand, sign, theta_hat, options),
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
    let (per_block, block_facts) = match (&input.blocks, &by_block) {
        (Some(b), Some((bb, cb))) => {
            let levels = (base.estimate(est), cand.estimate(est));
            let per_block = per_block(bb, cb, levels, sign, options);
            let facts = block_facts(b, bb, cb, &per_block, &mut warnings);
            (per_block, Some(facts))
        }
        _ => (Vec::new(), None),
    };
    let comparison = Comparison {
        pairing: "unpaired",
        effect: effect_estimate(n, estimate, interval.as_ref(), options),
        n_baseline: Some(base.len()),
        n_candidate: Some(cand.len()),
        per_block,
        blocks: block_facts,
        warnings,
        ..header(options, judgement)
    };
    Ok(UnpairedOutcome {
        comparison,
        baseline_values,
        candidate_values,
    })
}

/// The row-level CI: each side's calls resampled independently from one stream per replicate
/// (baseline draws first); BCa acceleration from both sides' jackknifes.
fn row_interval(
    base: &Sample,
    cand: &Sample,
    sign: f64,
    theta_hat: f64,
    options: &CompareOptions,
) -> Option<Interval> {
    let est = options.estimator;
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

/// Each side's log values grouped by block; a block list whose length is not the side's call count is
/// `pair_count_mismatch`.
fn side_blocks(
    blocks: &UnpairedBlocks,
    base_logs: &[f64],
    cand_logs: &[f64],
) -> Result<(ByBlock, ByBlock)> {
    let group = |side: &str, b: &Blocks, logs: &[f64]| {
        if b.block_of.len() != logs.len() {
            return Err(Error::input(
                codes::PAIR_COUNT_MISMATCH,
                format!(
                    "{side} blocks has {} entries for {} calls",
                    b.block_of.len(),
                    logs.len()
                ),
            )
            .with_path(format!("blocks.{side}"))
            .with_expected(format!("{} entries", logs.len()))
            .with_observed(format!("{} entries", b.block_of.len())));
        }
        let all: Vec<usize> = (0..logs.len()).collect();
        Ok(blocks::effects_by_block(b, &all, |i| logs.get(i).copied()))
    };
    Ok((
        group("baseline", &blocks.baseline, base_logs)?,
        group("candidate", &blocks.candidate, cand_logs)?,
    ))
}

/// Each block's effect with its CI: a baseline block's calls against the candidate's pooled estimate,
/// a candidate block's against the baseline's (the other side held at its estimate), so that blocks of
/// one side are comparable with each other and with the pooled effect.
fn per_block(
    baseline: &[(String, Vec<f64>)],
    candidate: &[(String, Vec<f64>)],
    levels: (Option<f64>, Option<f64>),
    sign: f64,
    options: &CompareOptions,
) -> Vec<BlockEffect> {
    let (Some(b_hat), Some(c_hat)) = levels else {
        return Vec::new();
    };
    let against = |by_block: &[(String, Vec<f64>)], effect: &dyn Fn(f64) -> f64| -> ByBlock {
        by_block
            .iter()
            .map(|(name, logs)| (name.clone(), logs.iter().map(|&l| effect(l)).collect()))
            .collect()
    };
    let estimate = |n, e, i: Option<&Interval>| effect_estimate(n, e, i, options);
    let mut out = blocks::per_block(
        &against(baseline, &|l| sign * (c_hat - l)),
        Some("baseline"),
        options,
        Parallelism::Rayon,
        estimate,
    );
    out.extend(blocks::per_block(
        &against(candidate, &|l| sign * (l - b_hat)),
        Some("candidate"),
        options,
        Parallelism::Rayon,
        estimate,
    ));
    out
}

/// What the comparison did with the blocks, and its warnings: blocks of one side that disagree (unless
/// resampled), and a side with fewer than 2 blocks (the variation between blocks is then unmeasured).
fn block_facts(
    blocks: &UnpairedBlocks,
    baseline: &[(String, Vec<f64>)],
    candidate: &[(String, Vec<f64>)],
    per_block: &[BlockEffect],
    warnings: &mut Vec<Warning>,
) -> BlockFacts {
    let facts = BlockFacts {
        column: blocks.baseline.column.clone(),
        blocks: baseline.len() + candidate.len(),
        resampled: blocks.baseline.resample,
        disagree: blocks::disagree(per_block),
    };
    if facts.disagree && !facts.resampled {
        warnings.push(blocks::disagreement_warning(&facts.column, per_block));
    }
    let few: Vec<(&str, usize)> = [("baseline", baseline.len()), ("candidate", candidate.len())]
        .into_iter()
        .filter(|&(_, k)| k < 2)
        .collect();
    if !few.is_empty() {
        warnings.push(blocks::too_few_blocks_warning(&facts.column, &few));
    }
    facts
}
