//! The summary of a list of durations that timeline, launch and graph facts share.

use super::describe::percentile_sorted;
use super::out::total_i64;
use crate::error::Result;
use serde::Serialize;

/// Count, total, extremes, nearest-rank median and p90, and mean of integer nanoseconds.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Distribution {
    pub count: u64,
    pub total_ns: i64,
    pub min_ns: Option<i64>,
    pub median_ns: Option<i64>,
    pub p90_ns: Option<i64>,
    pub max_ns: Option<i64>,
    pub mean_ns: Option<f64>,
}

impl Distribution {
    /// Nearest-rank median and p90 of integer values.
    pub fn of(mut values: Vec<i64>) -> Result<Self> {
        values.sort_unstable();
        let total: i128 = values.iter().map(|&v| i128::from(v)).sum();
        Ok(Self {
            count: u64::try_from(values.len()).unwrap_or(u64::MAX),
            total_ns: total_i64(total, "total_ns")?,
            min_ns: values.first().copied(),
            median_ns: percentile_sorted(&values, 50.0),
            p90_ns: percentile_sorted(&values, 90.0),
            max_ns: values.last().copied(),
            mean_ns: (!values.is_empty()).then(|| total as f64 / values.len() as f64),
        })
    }
}
