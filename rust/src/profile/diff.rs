//! The per-key comparison over captures.
//!
//! For key j, side s holds one value per capture (its total time in that capture, or per step; 0 when the
//! key is absent). The effect is mean(candidate) − mean(baseline) in ns, and 100·(mean(c)/mean(b) − 1) in
//! percent. With k ≥ 2 captures per side, one test gives the p-value and the interval, so the two always
//! tell the same story:
//! - **Test**: Welch's t test (unpaired) or the paired t test (captures interleaved in pairs) of the
//!   per-capture values. Totals are sums of many instances; the t interval keeps its coverage at k = 2
//!   (a percentile bootstrap over 2–4 values cannot: it is at most as wide as the values' range).
//! - **Flags**: Benjamini–Hochberg over every tested key; flagged keys have q ≤ the declared
//!   false-discovery rate (and a change of at least the minimum effect).
//! - **Intervals at the level the flags imply** (Benjamini & Yekutieli's false-coverage-rate
//!   adjustment): with R keys flagged by BH among m tested, every key's interval has two-sided level
//!   1 − max(R, 1)·fdr/m. BH flags exactly the keys with p ≤ R·fdr/m, so a flagged key's interval
//!   excludes 0 and an unflagged key's does not. The percent interval is Fieller's interval of the ratio
//!   of means with the same t critical value and standard errors: it excludes 0 % exactly when the ns
//!   interval excludes 0 ns, and is absent when the baseline mean is not distinguishable from 0.
//! - A family of one ([`Family::Each`], the totals): each row is its own test at level 1 − fdr, no BH.
//! - **The timer's floor**: GPU durations are whole ticks of the capture's timer (q ns, 32 on an H100;
//!   [`super::timer`]), so a key's per-capture value carries a rounding error of variance n·q²/6 (n
//!   instances). Captures that agree to the tick (a key run once, 3136 and 3168 ns in two pairs) have a
//!   sample spread of 0, which is no evidence of a zero-width effect. The variance the test uses is at
//!   least the mean of that rounding variance over a side's captures (Welch, per side) or, paired, over
//!   the pairs of both captures' rounding variances (a difference adds them).

use super::codes;
use crate::error::{Error, Result};
use crate::stats::fdr::benjamini_hochberg;
use crate::stats::student::TTest;
use rayon::prelude::*;
use serde::Deserialize;

/// Per-key values: `baseline[j * k_baseline + i]` is key j in baseline capture i (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyMatrix {
    pub keys: Vec<String>,
    pub baseline: Vec<f64>,
    pub k_baseline: usize,
    pub candidate: Vec<f64>,
    pub k_candidate: usize,
    /// The variance (ns²) of each value's rounding error on its capture's timer grid, laid out as
    /// `baseline` ([`super::timer::rounding_variance`]); empty: no floor.
    pub baseline_rounding: Vec<f64>,
    pub candidate_rounding: Vec<f64>,
}

/// Which rows form one family of tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Every key is one hypothesis of one family: BH flags, false-coverage-rate adjusted intervals.
    #[default]
    Keys,
    /// Each row stands alone (the totals): level 1 − fdr, no q-value, flagged when its interval
    /// excludes 0 and it reaches the minimum effect.
    Each,
}

/// How to compare.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffOptions {
    pub paired: bool,
    /// The declared false-discovery rate (BH level; the intervals' false-coverage rate).
    pub fdr: f64,
    /// |change %| below this is never flagged.
    pub min_effect_pct: f64,
    #[serde(default)]
    pub family: Family,
}

/// The comparison of one key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyDiff {
    pub baseline_mean: f64,
    pub candidate_mean: f64,
    pub change: f64,
    pub change_pct: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Two-sided confidence level of this row's intervals.
    pub ci_level: Option<f64>,
    pub p_value: Option<f64>,
    pub q_value: Option<f64>,
    pub flagged: bool,
}

fn invalid(message: String) -> Error {
    Error::input(codes::PROFILE_DIFF_INVALID, message)
}

impl DiffOptions {
    fn validate(&self) -> Result<()> {
        if !(self.fdr > 0.0 && self.fdr < 1.0) {
            return Err(invalid(format!("fdr {} is not in (0, 1)", self.fdr)));
        }
        if !(self.min_effect_pct >= 0.0 && self.min_effect_pct.is_finite()) {
            return Err(invalid(format!(
                "min_effect_pct {} is not ≥ 0",
                self.min_effect_pct
            )));
        }
        Ok(())
    }
}

impl KeyMatrix {
    fn validate(&self, paired: bool) -> Result<()> {
        let n = self.keys.len();
        if self.k_baseline == 0 || self.k_candidate == 0 {
            return Err(invalid("each side needs at least one capture".to_string()));
        }
        for (side, values, k) in [
            ("baseline", &self.baseline, self.k_baseline),
            ("candidate", &self.candidate, self.k_candidate),
        ] {
            if values.len() != n * k {
                return Err(invalid(format!(
                    "{side} holds {} values for {n} keys × {k} captures",
                    values.len()
                )));
            }
            if let Some(bad) = values.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                return Err(invalid(format!(
                    "{side} holds {bad}: values are finite and ≥ 0"
                )));
            }
        }
        for (side, rounding, values) in [
            ("baseline", &self.baseline_rounding, &self.baseline),
            ("candidate", &self.candidate_rounding, &self.candidate),
        ] {
            if !rounding.is_empty() && rounding.len() != values.len() {
                return Err(invalid(format!(
                    "{side} rounding holds {} variances for {} values",
                    rounding.len(),
                    values.len()
                )));
            }
            if let Some(bad) = rounding.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                return Err(invalid(format!(
                    "{side} rounding holds {bad}: variances are finite and ≥ 0"
                )));
            }
        }
        if paired && self.k_baseline != self.k_candidate {
            return Err(Error::input(
                codes::PROFILE_PAIRS_UNEQUAL,
                "paired captures need as many candidate captures as baseline captures",
            )
            .with_expected(format!("{} candidate captures", self.k_baseline))
            .with_observed(format!("{} candidate captures", self.k_candidate)));
        }
        Ok(())
    }
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

/// Means, change and (with k ≥ 2 a side) the test of one key, with `floor_b`, `floor_c` the mean
/// rounding variance of a value on each side; intervals come later, at the family's level.
fn one_key(
    b: &[f64],
    c: &[f64],
    (floor_b, floor_c): (f64, f64),
    paired: bool,
) -> (KeyDiff, Option<TTest>) {
    let (mb, mc) = (mean(b), mean(c));
    let out = KeyDiff {
        baseline_mean: mb,
        candidate_mean: mc,
        change: mc - mb,
        change_pct: (mb > 0.0).then(|| 100.0 * (mc / mb - 1.0)),
        ..KeyDiff::default()
    };
    let test = if paired {
        TTest::paired_floored(b, c, floor_b, floor_c)
    } else {
        TTest::welch_floored(b, c, floor_b, floor_c)
    };
    (out, test)
}

/// Sets the intervals of one row at two-sided level 1 − `alpha`.
fn with_interval(out: &mut KeyDiff, test: &TTest, alpha: f64) {
    let (low, high) = test.interval(alpha);
    out.ci_low = Some(low);
    out.ci_high = Some(high);
    out.ci_level = Some(1.0 - alpha);
    if out.baseline_mean > 0.0 {
        if let Some((low, high)) = test.ratio_interval(alpha) {
            out.ci_low_pct = Some(100.0 * (low - 1.0));
            out.ci_high_pct = Some(100.0 * (high - 1.0));
        }
    }
}

/// Compares every key (keys in parallel; the numbers do not depend on the thread count).
pub fn diff(matrix: &KeyMatrix, options: &DiffOptions) -> Result<Vec<KeyDiff>> {
    options.validate()?;
    matrix.validate(options.paired)?;
    let (kb, kc) = (matrix.k_baseline, matrix.k_candidate);
    let floors = |rounding: &[f64], k: usize| -> Vec<f64> {
        if rounding.is_empty() {
            vec![0.0; matrix.keys.len()]
        } else {
            rounding.chunks(k).map(mean).collect()
        }
    };
    let (floor_b, floor_c) = (
        floors(&matrix.baseline_rounding, kb),
        floors(&matrix.candidate_rounding, kc),
    );
    let rows: Vec<(KeyDiff, Option<TTest>)> = matrix
        .baseline
        .par_chunks(kb)
        .zip(matrix.candidate.par_chunks(kc))
        .zip(floor_b.par_iter().zip(floor_c.par_iter()))
        .map(|((b, c), (fb, fc))| one_key(b, c, (*fb, *fc), options.paired))
        .collect();
    let large_enough = |d: &KeyDiff| {
        d.change_pct
            .is_none_or(|pct| pct.abs() >= options.min_effect_pct)
    };
    let mut out = Vec::with_capacity(rows.len());
    match options.family {
        Family::Each => {
            for (mut d, test) in rows {
                if let Some(test) = test {
                    d.p_value = Some(test.p_value());
                    with_interval(&mut d, &test, options.fdr);
                    let excludes =
                        d.ci_low.is_some_and(|l| l > 0.0) || d.ci_high.is_some_and(|h| h < 0.0);
                    d.flagged = excludes && large_enough(&d);
                }
                out.push(d);
            }
        }
        Family::Keys => {
            let p: Vec<Option<f64>> = rows
                .iter()
                .map(|(_, t)| t.as_ref().map(TTest::p_value))
                .collect();
            let q = benjamini_hochberg(&p);
            let tested = p.iter().flatten().count();
            let discoveries = q.iter().flatten().filter(|q| **q <= options.fdr).count();
            let alpha = discoveries.max(1) as f64 * options.fdr / tested.max(1) as f64;
            for ((mut d, test), (p, q)) in rows.into_iter().zip(p.into_iter().zip(q)) {
                d.p_value = p;
                d.q_value = q;
                if let Some(test) = test {
                    with_interval(&mut d, &test, alpha);
                }
                d.flagged = q.is_some_and(|q| q <= options.fdr) && large_enough(&d);
                out.push(d);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
