//! Estimators over pair effects, stratified by case and optionally weighted by case.
//!
//! A [`Sample`] holds the effects in plan order, the case (stratum) of each, and the case weights. With
//! case weights `w_c`, pair i of case c weighs `w_c/n_c`; without them every pair weighs 1. The weighted
//! median is the smallest sorted effect whose cumulative weight reaches half the total, averaged with the
//! next one when it hits exactly half (equal weights give the usual median); the weighted mean is
//! `Σ_c (w_c/n_c)·Σ_{i∈c} ℓ_i / Σ_c w_c` (the plain mean without weights).
//!
//! Resampled statistics are computed from multiplicities: a replicate counts how often each pair was
//! drawn, then scans the pairs in sorted order, so a median costs O(n) per replicate with no sort.
//!
//! The resampled estimates (bootstrap replicates and the jackknife) are in `resampled`.

mod resampled;

use super::codes;
use super::lanes::{LaneMedian, LaneScratch};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The statistic of the pair effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    #[default]
    Median,
    Mean,
}

impl Estimator {
    pub fn name(self) -> &'static str {
        match self {
            Self::Median => "median",
            Self::Mean => "mean",
        }
    }
}

/// Effects with their strata, ready to estimate, resample and jackknife.
#[derive(Debug, Clone)]
pub struct Sample {
    values: Vec<f64>,
    /// Members (positions) of each stratum, in plan order.
    strata: Vec<Vec<usize>>,
    stratum_of: Vec<usize>,
    /// Case weights `w_c`, when given.
    weights: Option<Vec<f64>>,
    /// Positions sorted by (value, position).
    sorted: Vec<usize>,
    sorted_values: Vec<f64>,
    rank: Vec<u32>,
    /// Per-stratum factor of the mean (`w_c/n_c`, or 1) and its denominator (`Σ w_c`, or n).
    mean_factors: Vec<f64>,
    mean_denominator: f64,
    /// What the eight-lane median needs (one stratum, no weights, 2 to 65 535 pairs).
    lanes: Option<LaneMedian>,
}

/// Per-thread working memory for resampling.
#[derive(Debug, Default)]
pub struct Scratch {
    counts: Vec<u32>,
    lanes: LaneScratch,
}

impl Sample {
    /// One stratum, no weights.
    pub fn new(values: Vec<f64>) -> Self {
        let n = values.len();
        Self::build(values, vec![0; n], 1, None)
    }

    /// Effects with the stratum of each (0-based, `n_strata` in all, every stratum non-empty) and
    /// optional case weights (finite, > 0, one per stratum).
    pub fn stratified(
        values: Vec<f64>,
        stratum_of: Vec<usize>,
        n_strata: usize,
        weights: Option<Vec<f64>>,
    ) -> Result<Self> {
        if stratum_of.len() != values.len() || stratum_of.iter().any(|&s| s >= n_strata) {
            return Err(Error::input(
                codes::STATISTICS_INVALID,
                "every pair needs a case index below the number of cases",
            ));
        }
        if let Some(w) = &weights {
            if w.len() != n_strata || w.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(Error::input(
                    codes::STATISTICS_INVALID,
                    "case weights must be finite, positive, and one per case",
                )
                .with_expected(format!("{n_strata} weights > 0"))
                .with_observed(format!("{w:?}")));
            }
        }
        let sample = Self::build(values, stratum_of, n_strata, weights);
        if sample.strata.iter().any(Vec::is_empty) && !sample.values.is_empty() {
            return Err(Error::input(
                codes::STATISTICS_INVALID,
                "every case needs at least one pair",
            ));
        }
        Ok(sample)
    }

    fn build(
        values: Vec<f64>,
        stratum_of: Vec<usize>,
        n_strata: usize,
        weights: Option<Vec<f64>>,
    ) -> Self {
        let mut strata = vec![Vec::new(); n_strata];
        for (pos, &s) in stratum_of.iter().enumerate() {
            if let Some(members) = strata.get_mut(s) {
                members.push(pos);
            }
        }
        let mut sorted: Vec<usize> = (0..values.len()).collect();
        sorted.sort_by(|&a, &b| {
            let va = values.get(a).copied().unwrap_or(0.0);
            let vb = values.get(b).copied().unwrap_or(0.0);
            va.total_cmp(&vb).then(a.cmp(&b))
        });
        let sorted_values = sorted
            .iter()
            .map(|&p| values.get(p).copied().unwrap_or(0.0))
            .collect();
        let mut rank = vec![0u32; values.len()];
        for (r, &p) in sorted.iter().enumerate() {
            if let Some(slot) = rank.get_mut(p) {
                *slot = u32::try_from(r).unwrap_or(u32::MAX);
            }
        }
        let (mean_factors, mean_denominator) = match &weights {
            None => (vec![1.0; strata.len()], values.len() as f64),
            Some(w) => (
                strata
                    .iter()
                    .zip(w)
                    .map(|(m, &wc)| wc / m.len().max(1) as f64)
                    .collect(),
                w.iter().sum(),
            ),
        };
        let lanes = if weights.is_none() && strata.len() == 1 {
            LaneMedian::new(&sorted)
        } else {
            None
        };
        Self {
            values,
            strata,
            stratum_of,
            weights,
            sorted,
            sorted_values,
            rank,
            mean_factors,
            mean_denominator,
            lanes,
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The effects in ascending order.
    pub fn sorted_values(&self) -> &[f64] {
        &self.sorted_values
    }

    pub fn scratch(&self) -> Scratch {
        Scratch {
            counts: vec![0; self.len()],
            lanes: LaneScratch::default(),
        }
    }

    /// The estimate over all pairs; `None` without pairs.
    pub fn estimate(&self, estimator: Estimator) -> Option<f64> {
        if self.is_empty() {
            return None;
        }
        Some(match estimator {
            Estimator::Mean => {
                let total: f64 = self
                    .strata
                    .iter()
                    .zip(&self.mean_factors)
                    .map(|(members, f)| f * self.sum_of(members))
                    .sum();
                total / self.mean_denominator
            }
            Estimator::Median => match &self.weights {
                None => self.unit_median_without(None),
                Some(_) => self.weighted_median(|r| {
                    let pos = self.sorted.get(r).copied().unwrap_or(0);
                    self.pair_weight(pos, None)
                }),
            },
        })
    }

    fn sum_of(&self, members: &[usize]) -> f64 {
        members
            .iter()
            .map(|&p| self.values.get(p).copied().unwrap_or(0.0))
            .sum()
    }

    /// The weight of pair `pos`, with pair `left_out` (if any) removed and its case's weights recomputed.
    fn pair_weight(&self, pos: usize, left_out: Option<usize>) -> f64 {
        let Some(w) = &self.weights else {
            return if Some(pos) == left_out { 0.0 } else { 1.0 };
        };
        if Some(pos) == left_out {
            return 0.0;
        }
        let s = self.stratum_of.get(pos).copied().unwrap_or(0);
        let mut n_c = self.strata.get(s).map_or(1, Vec::len);
        if let Some(out) = left_out {
            if self.stratum_of.get(out) == Some(&s) {
                n_c -= 1;
            }
        }
        w.get(s).copied().unwrap_or(0.0) / n_c.max(1) as f64
    }

    /// The median of all pairs but `left_out`, with unit weights: O(1) from the sorted values.
    fn unit_median_without(&self, left_out: Option<usize>) -> f64 {
        let n = self.len();
        let (m, skip) = match left_out {
            Some(pos) => (n - 1, self.rank.get(pos).map_or(n, |&r| r as usize)),
            None => (n, n),
        };
        let at = |k: usize| {
            let k = if k >= skip { k + 1 } else { k };
            self.sorted_values.get(k).copied().unwrap_or(f64::NAN)
        };
        if m == 0 {
            return f64::NAN;
        }
        if m % 2 == 1 {
            at(m / 2)
        } else {
            0.5 * (at(m / 2 - 1) + at(m / 2))
        }
    }

    /// The weighted median with weight `weight_of(rank)` for the pair at each sorted rank.
    fn weighted_median(&self, weight_of: impl Fn(usize) -> f64) -> f64 {
        let n = self.len();
        let total: f64 = (0..n).map(&weight_of).sum();
        let half = 0.5 * total;
        let mut cum = 0.0;
        let mut r = 0;
        while r < n {
            let w = weight_of(r);
            if w > 0.0 {
                cum += w;
                if cum >= half {
                    let a = self.sorted_values.get(r).copied().unwrap_or(f64::NAN);
                    if cum > half {
                        return a;
                    }
                    let next = (r + 1..n).find(|&k| weight_of(k) > 0.0);
                    return match next.and_then(|k| self.sorted_values.get(k)) {
                        Some(&b) => 0.5 * (a + b),
                        None => a,
                    };
                }
            }
            r += 1;
        }
        f64::NAN
    }
}

/// The sample standard deviation (n − 1); `None` below two values.
pub fn std_dev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    Some((ss / (n - 1.0)).sqrt())
}

/// 1.4826 × the median absolute deviation from the median (a robust SD); `None` without values.
pub fn robust_sd(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let median = Sample::new(values.to_vec()).estimate(Estimator::Median)?;
    let deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
    let mad = Sample::new(deviations).estimate(Estimator::Median)?;
    Some(1.4826 * mad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mean() {
        let s = Sample::new(vec![3.0, 1.0, 2.0, 10.0]);
        assert_eq!(s.estimate(Estimator::Median), Some(2.5));
        assert_eq!(s.estimate(Estimator::Mean), Some(4.0));
        assert_eq!(Sample::new(vec![]).estimate(Estimator::Median), None);
    }

    #[test]
    fn case_weights_change_the_pooled_estimate() {
        // Case 0: 3 pairs at 1.0, case 1: 1 pair at 5.0. Unweighted median 1.0; weights (1, 3) give case 1
        // three quarters of the weight, so the weighted median is 5.0 and the mean (1·1 + 3·5)/4 = 4.
        let values = vec![1.0, 1.0, 1.0, 5.0];
        let plain = Sample::stratified(values.clone(), vec![0, 0, 0, 1], 2, None).unwrap();
        assert_eq!(plain.estimate(Estimator::Median), Some(1.0));
        let w = Sample::stratified(values, vec![0, 0, 0, 1], 2, Some(vec![1.0, 3.0])).unwrap();
        assert_eq!(w.estimate(Estimator::Median), Some(5.0));
        assert_eq!(w.estimate(Estimator::Mean), Some(4.0));
        // Equal case weights hitting exactly half average the two middle values.
        let eq = Sample::stratified(vec![1.0, 3.0], vec![0, 1], 2, Some(vec![2.0, 2.0])).unwrap();
        assert_eq!(eq.estimate(Estimator::Median), Some(2.0));
    }

    #[test]
    fn spreads() {
        let v = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert!((std_dev(&v).unwrap() - 1902.5_f64.sqrt()).abs() < 1e-12);
        assert!((robust_sd(&v).unwrap() - 1.4826).abs() < 1e-12);
        assert_eq!(std_dev(&[1.0]), None);
    }
}
