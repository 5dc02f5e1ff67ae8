//! The summary of one latency (or duration) list that launch and CUDA-graph facts share.

use serde::Serialize;

/// Distribution of one latency or duration over a trace's events (nearest-rank quantiles).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Distribution {
    pub count: usize,
    pub min_ns: i64,
    pub p50_ns: i64,
    pub p90_ns: i64,
    pub p99_ns: i64,
    pub max_ns: i64,
    pub mean_ns: f64,
}

/// Nearest-rank quantile of sorted values: the value at index ⌈p·n⌉ − 1.
fn quantile(sorted: &[i64], p: f64) -> i64 {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.saturating_sub(1)).copied().unwrap_or(0)
}

pub fn distribution(mut values: Vec<i64>) -> Option<Distribution> {
    values.sort_unstable();
    let n = values.len();
    #[allow(clippy::cast_precision_loss)]
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
    Some(Distribution {
        count: n,
        min_ns: *values.first()?,
        p50_ns: quantile(&values, 0.5),
        p90_ns: quantile(&values, 0.9),
        p99_ns: quantile(&values, 0.99),
        max_ns: *values.last()?,
        mean_ns: mean,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles_by_hand() {
        let d = distribution(vec![5, 1, 4, 2, 3, 10, 9, 8, 7, 6]).unwrap();
        assert_eq!(
            (d.min_ns, d.p50_ns, d.p90_ns, d.p99_ns, d.max_ns),
            (1, 5, 9, 10, 10)
        );
        assert_eq!(d.mean_ns, 5.5);
        assert_eq!(distribution(vec![]), None);
    }
}
