//! The input of a paired comparison: per-pair calls of each side, the cases, orders and blocks, and the
//! checks every value passes before any statistic.

use crate::error::{Error, Result};
use crate::stats::codes;
use crate::stats::effect::{ratio_in_range, MAX_RATIO};
use crate::stats::quantile::{Calls, WithinCall};
use crate::stats::schedule::Order;

/// The block of every pair, the block names (first-seen order), the column they came from and whether
/// the CI resamples blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Blocks {
    pub block_of: Vec<usize>,
    pub names: Vec<String>,
    pub column: String,
    pub resample: bool,
}

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

    pub(super) fn is_valid(&self, i: usize) -> bool {
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

    pub(super) fn check_shape(&self) -> Result<()> {
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
    pub(super) fn check_pair(&self, i: usize, within_call: WithinCall) -> Result<()> {
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
pub(super) fn check_ratio(baseline: f64, candidate: f64, what: &str, path: &str) -> Result<()> {
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
