//! Quantiles (Hyndman–Fan type 7, NumPy's default "linear") and the within-call summaries that turn
//! one call's samples into the one number a pair holds.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The type-7 quantile of an ascending slice at `q` in [0, 1]: linear interpolation at position
/// (n − 1)·q. `None` for an empty slice.
pub fn type7(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * q.clamp(0.0, 1.0);
    let lo = (h.floor() as usize).min(last);
    let hi = (lo + 1).min(last);
    let a = *sorted.get(lo)?;
    let b = *sorted.get(hi)?;
    Some(a + (h - lo as f64) * (b - a))
}

/// How one call's samples become the pair's value for that subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WithinCall {
    #[default]
    Median,
    Mean,
    Min,
    Max,
    P50,
    P90,
    P95,
    P99,
}

impl WithinCall {
    pub fn name(self) -> &'static str {
        match self {
            Self::Median => "median",
            Self::Mean => "mean",
            Self::Min => "min",
            Self::Max => "max",
            Self::P50 => "p50",
            Self::P90 => "p90",
            Self::P95 => "p95",
            Self::P99 => "p99",
        }
    }

    /// The fewest samples a call needs for this summary: a quantile q needs ⌈10/(1 − q)⌉, so that
    /// about ten samples lie beyond it (p90 100, p95 200, p99 1000).
    pub fn minimum_samples(self) -> usize {
        match self {
            Self::P90 => 100,
            Self::P95 => 200,
            Self::P99 => 1000,
            _ => 1,
        }
    }

    /// The summary of one call's samples (at least one, all finite).
    pub fn summarize(self, samples: &[f64]) -> Option<f64> {
        if samples.is_empty() {
            return None;
        }
        if self == Self::Mean {
            return Some(samples.iter().sum::<f64>() / samples.len() as f64);
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let q = match self {
            Self::Min => 0.0,
            Self::Max => 1.0,
            Self::Median | Self::P50 => 0.5,
            Self::P90 => 0.9,
            Self::P95 => 0.95,
            Self::P99 => 0.99,
            Self::Mean => 0.5,
        };
        type7(&sorted, q)
    }
}

/// The calls of one subject: call `i` holds `samples[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Calls {
    offsets: Vec<usize>,
    samples: Vec<f64>,
}

impl Calls {
    /// One value per call.
    pub fn from_values(values: Vec<f64>) -> Self {
        Self {
            offsets: (0..=values.len()).collect(),
            samples: values,
        }
    }

    /// Calls from flat samples and `n + 1` ascending offsets starting at 0 and ending at the sample count.
    pub fn from_offsets(samples: Vec<f64>, offsets: Vec<usize>) -> Result<Self> {
        let starts_at_zero = offsets.first() == Some(&0);
        let ends_at_len = offsets.last() == Some(&samples.len());
        let ascending = offsets.windows(2).all(|w| matches!(w, [a, b] if a < b));
        if !(starts_at_zero && ends_at_len && ascending) {
            return Err(Error::input(
                super::codes::STATISTICS_INVALID,
                "call offsets must start at 0, rise strictly (no empty call) and end at the sample count",
            )
            .with_expected(format!("0 < ... < {}", samples.len()))
            .with_observed(format!("{} offsets", offsets.len())));
        }
        Ok(Self { offsets, samples })
    }

    /// Calls from a list of per-call sample lists.
    pub fn from_nested(calls: Vec<Vec<f64>>) -> Result<Self> {
        let mut offsets = Vec::with_capacity(calls.len() + 1);
        offsets.push(0);
        let mut samples = Vec::new();
        for call in calls {
            samples.extend(call);
            offsets.push(samples.len());
        }
        Self::from_offsets(samples, offsets)
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The samples of call `i`.
    pub fn call(&self, i: usize) -> &[f64] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.samples.get(a..b).unwrap_or_default(),
            _ => &[],
        }
    }

    /// The fewest samples any call holds (0 without calls).
    pub fn min_samples(&self) -> usize {
        self.offsets
            .windows(2)
            .map(|w| match w {
                [a, b] => b - a,
                _ => 0,
            })
            .min()
            .unwrap_or(0)
    }

    /// All samples, flat.
    pub fn samples(&self) -> &[f64] {
        &self.samples
    }

    /// Per-call sample counts.
    pub fn counts(&self) -> Vec<usize> {
        (0..self.len()).map(|i| self.call(i).len()).collect()
    }

    /// Keeps the calls whose index `keep` says.
    pub fn select(&self, keep: &[usize]) -> Self {
        let mut out = Self {
            offsets: vec![0],
            samples: Vec::new(),
        };
        for &i in keep {
            out.samples.extend_from_slice(self.call(i));
            out.offsets.push(out.samples.len());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type7_matches_numpy_linear() {
        assert_eq!(type7(&[1.0, 2.0, 3.0, 4.0], 0.25), Some(1.75));
        assert_eq!(type7(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert_eq!(type7(&[1.0, 2.0, 3.0, 4.0], 1.0), Some(4.0));
        assert_eq!(type7(&[5.0], 0.9), Some(5.0));
        assert_eq!(type7(&[], 0.5), None);
    }

    #[test]
    fn summaries() {
        let s = [3.0, 1.0, 2.0, 10.0];
        assert_eq!(WithinCall::Median.summarize(&s), Some(2.5));
        assert_eq!(WithinCall::Mean.summarize(&s), Some(4.0));
        assert_eq!(WithinCall::Min.summarize(&s), Some(1.0));
        assert_eq!(WithinCall::Max.summarize(&s), Some(10.0));
        let many: Vec<f64> = (1..=201).map(f64::from).collect();
        assert_eq!(WithinCall::P95.summarize(&many), Some(191.0));
        assert_eq!(WithinCall::P99.minimum_samples(), 1000);
    }

    #[test]
    fn calls_from_offsets_validate() {
        let calls = Calls::from_offsets(vec![1.0, 2.0, 3.0], vec![0, 2, 3]).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls.call(0), &[1.0, 2.0]);
        assert_eq!(calls.call(1), &[3.0]);
        assert_eq!(calls.min_samples(), 1);
        assert!(Calls::from_offsets(vec![1.0], vec![0, 0, 1]).is_err());
        assert!(Calls::from_offsets(vec![1.0], vec![0, 2]).is_err());
        assert!(Calls::from_nested(vec![vec![1.0], vec![]]).is_err());
    }
}
