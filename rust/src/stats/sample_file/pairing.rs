//! Pairing two sample files (by key, else by order) and the blocks of paired calls.

use super::model::{ReadOptions, SampleFile};
use crate::error::{Error, Result};
use crate::stats::codes;
use crate::stats::compare::{Blocks, Cases, PairedInput};
use std::collections::HashMap;

/// Pairs two sample files: by key when both have keys, else by order (row i with row i).
pub fn pair(baseline: SampleFile, candidate: SampleFile) -> Result<PairedInput> {
    let (candidate_calls, candidate_cases, candidate_orders) = match (
        &baseline.keys,
        &candidate.keys,
    ) {
        (Some(base_keys), Some(cand_keys)) => {
            let position: HashMap<&str, usize> = cand_keys
                .iter()
                .enumerate()
                .map(|(i, k)| (k.as_str(), i))
                .collect();
            let base_set: std::collections::HashSet<&str> =
                base_keys.iter().map(String::as_str).collect();
            let missing: Vec<&str> = base_keys
                .iter()
                .map(String::as_str)
                .filter(|k| !position.contains_key(k))
                .collect();
            let extra: Vec<&str> = cand_keys
                .iter()
                .map(String::as_str)
                .filter(|k| !base_set.contains(k))
                .collect();
            if !missing.is_empty() || !extra.is_empty() {
                let show = |v: &[&str]| {
                    v.iter()
                        .take(5)
                        .map(|k| format!("{k:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(Error::input(
                    codes::PAIR_KEY_UNMATCHED,
                    format!(
                        "{} key(s) only in {} [{}], {} key(s) only in {} [{}]",
                        missing.len(),
                        baseline.path,
                        show(&missing),
                        extra.len(),
                        candidate.path,
                        show(&extra)
                    ),
                )
                .with_expected("the same keys on both sides")
                .with_observed(format!(
                    "{} baseline keys, {} candidate keys",
                    base_keys.len(),
                    cand_keys.len()
                )));
            }
            let order: Vec<usize> = base_keys
                .iter()
                .filter_map(|k| position.get(k.as_str()).copied())
                .collect();
            let pick = |v: &Option<Vec<String>>| {
                v.as_ref().map(|v| {
                    order
                        .iter()
                        .filter_map(|&i| v.get(i).cloned())
                        .collect::<Vec<_>>()
                })
            };
            let orders = candidate.orders.as_ref().map(|o| {
                order
                    .iter()
                    .filter_map(|&i| o.get(i).copied())
                    .collect::<Vec<_>>()
            });
            (
                candidate.calls.select(&order),
                pick(&candidate.cases),
                orders,
            )
        }
        _ => {
            if baseline.calls.len() != candidate.calls.len() {
                return Err(Error::input(
                    codes::PAIR_COUNT_MISMATCH,
                    format!(
                        "{} has {} calls but {} has {}; pairing by order needs equal counts (or use a key column)",
                        baseline.path, baseline.calls.len(), candidate.path, candidate.calls.len()
                    ),
                )
                .with_expected(format!("{} calls", baseline.calls.len()))
                .with_observed(format!("{} calls", candidate.calls.len())));
            }
            (
                candidate.calls.clone(),
                candidate.cases.clone(),
                candidate.orders.clone(),
            )
        }
    };
    let n = baseline.calls.len();
    let cases = match (&baseline.cases, &candidate_cases) {
        (Some(base), cand) => {
            if let Some(cand) = cand {
                if let Some(i) = (0..n).find(|&i| base.get(i) != cand.get(i)) {
                    return Err(Error::input(
                        codes::CASE_MISMATCH,
                        format!(
                            "pair {i} is case {:?} in {} but {:?} in {}",
                            base.get(i).map_or("", String::as_str),
                            baseline.path,
                            cand.get(i).map_or("", String::as_str),
                            candidate.path
                        ),
                    )
                    .with_path(format!(
                        "{}:{}",
                        baseline.path,
                        baseline.lines.get(i).copied().unwrap_or(0)
                    )));
                }
            }
            let mut names: Vec<String> = Vec::new();
            let case_of = base
                .iter()
                .map(|c| match names.iter().position(|x| x == c) {
                    Some(p) => p,
                    None => {
                        names.push(c.clone());
                        names.len() - 1
                    }
                })
                .collect();
            Some(Cases {
                case_of,
                names,
                weights: None,
            })
        }
        (None, _) => None,
    };
    let orders = match (&baseline.orders, &candidate_orders) {
        (Some(b), Some(c)) if b != c => {
            return Err(Error::input(
                "format_invalid",
                format!(
                    "{} and {} disagree on the order of some pairs",
                    baseline.path, candidate.path
                ),
            ));
        }
        (Some(b), _) => Some(b.clone()),
        (None, c) => c.clone(),
    };
    Ok(PairedInput {
        baseline: baseline.calls,
        candidate: candidate_calls,
        cases,
        orders,
        valid: None,
        keys: baseline.keys,
        blocks: None,
    })
}

/// The blocks of paired calls from the baseline's block labels (first-seen order), as `options` asks.
pub fn blocks(labels: Option<&[String]>, options: &ReadOptions) -> Option<Blocks> {
    let (labels, column) = (labels?, options.block_column.clone()?);
    let mut names: Vec<String> = Vec::new();
    let block_of = labels
        .iter()
        .map(|label| match names.iter().position(|n| n == label) {
            Some(p) => p,
            None => {
                names.push(label.clone());
                names.len() - 1
            }
        })
        .collect();
    Some(Blocks {
        block_of,
        names,
        column,
        resample: options.resample_blocks,
    })
}
