//! The summary of a list of durations that timeline, launch and graph facts share.

use super::describe::{Durations, Values};
use super::out::total_i64;
use crate::error::Result;
use serde::Serialize;

/// Count, total, extremes, nearest-rank median and p90, and mean of integer nanoseconds.
///
/// Nearest rank: the `p` percentile is the value at 1-based position `ceil(p/100 · n)` of the sorted
/// values, so the median of an even count is the *lower* of the two middle values (never their mean,
/// which could be a time no event took); `nsys stats` tables ([`super::describe`]) average them.
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
    /// Nearest-rank median and p90 of integer values (order statistics by selection: no sort of
    /// the millions of gaps or launches a large export has).
    pub fn of<T: Copy + Ord + Into<i64>>(mut values: Vec<T>) -> Result<Self> {
        let n = values.len();
        let total: i128 = values.iter().map(|&v| i128::from(v.into())).sum();
        let (min, max) = (
            values.iter().min().map(|&v| v.into()),
            values.iter().max().map(|&v| v.into()),
        );
        let (k50, k90) = (rank(n, 50.0), rank(n, 90.0));
        let p90 = k90.and_then(|k| {
            values.select_nth_unstable(k);
            values.get(k).map(|&v| v.into())
        });
        // Everything before the p90 position is no larger: the median is selected among those.
        let median = match (k50, k90) {
            (Some(m), Some(k)) if m < k => values.get_mut(..k).and_then(|head| {
                head.select_nth_unstable(m);
                head.get(m).map(|&v| v.into())
            }),
            (Some(_), _) => p90,
            _ => None,
        };
        Ok(Self {
            count: u64::try_from(n).unwrap_or(u64::MAX),
            total_ns: total_i64(total, "total_ns")?,
            min_ns: min,
            median_ns: median,
            p90_ns: p90,
            max_ns: max,
            mean_ns: (n > 0).then(|| total as f64 / n as f64),
        })
    }

    /// The same of a [`Durations`] store (4 bytes a value where they fit, chunks moved not copied).
    pub fn of_durations(durations: Durations) -> Result<Self> {
        match durations.into_values() {
            Values::Narrow(v) => Self::of(v),
            Values::Wide(v) => Self::of(v),
        }
    }
}

/// A [`Distribution`] of counts (kernels per graph execution): the same statistics, named without a
/// unit since the values are not nanoseconds.
#[derive(Debug, Clone, Serialize, Default)]
pub struct CountDistribution {
    pub count: u64,
    pub total: i64,
    pub min: Option<i64>,
    pub median: Option<i64>,
    pub p90: Option<i64>,
    pub max: Option<i64>,
    pub mean: Option<f64>,
}

impl CountDistribution {
    pub fn of(values: Vec<i64>) -> Result<Self> {
        let d = Distribution::of(values)?;
        Ok(Self {
            count: d.count,
            total: d.total_ns,
            min: d.min_ns,
            median: d.median_ns,
            p90: d.p90_ns,
            max: d.max_ns,
            mean: d.mean_ns,
        })
    }
}

/// The 0-based position of the nearest-rank `p` percentile among `n` sorted values (as
/// [`super::describe::percentile_sorted`] reads it).
fn rank(n: usize, p: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let r = ((p / 100.0) * n as f64).ceil().max(1.0) as usize;
    Some(r.min(n) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nsys::describe::percentile_sorted;
    use proptest::prelude::*;

    /// The median of an even count is the lower middle value (nearest rank), of an odd count the
    /// middle one; p90 of 10 values is the 9th.
    #[test]
    fn median_of_an_even_count_is_the_lower_middle_value() {
        let d = Distribution::of(vec![40i64, 10, 30, 20]).unwrap();
        assert_eq!((d.median_ns, d.p90_ns), (Some(20), Some(40)));
        let d = Distribution::of(vec![30i64, 10, 20]).unwrap();
        assert_eq!(d.median_ns, Some(20));
        let d = Distribution::of((1i64..=10).collect::<Vec<_>>()).unwrap();
        assert_eq!((d.median_ns, d.p90_ns), (Some(5), Some(9)));
        let c = CountDistribution::of(vec![52, 52, 51, 53]).unwrap();
        assert_eq!(
            (c.count, c.total, c.median, c.max),
            (4, 208, Some(52), Some(53))
        );
    }

    proptest! {
        #[test]
        fn selection_matches_the_sorted_percentiles(values in proptest::collection::vec(-50i64..50, 0..40)) {
            let d = Distribution::of(values.clone()).unwrap();
            let mut sorted = values;
            sorted.sort_unstable();
            prop_assert_eq!(d.median_ns, percentile_sorted(&sorted, 50.0));
            prop_assert_eq!(d.p90_ns, percentile_sorted(&sorted, 90.0));
            prop_assert_eq!(d.min_ns, sorted.first().copied());
            prop_assert_eq!(d.max_ns, sorted.last().copied());
        }

        #[test]
        fn a_durations_store_gives_the_same_distribution(
            values in proptest::collection::vec(prop_oneof![-50i64..50, 0i64..5_000_000_000, Just(i64::from(u32::MAX))], 0..300),
            split in 0usize..300,
        ) {
            let mut first = Durations::default();
            let mut second = Durations::default();
            for (i, &v) in values.iter().enumerate() {
                if i < split { first.push(v) } else { second.push(v) }
            }
            first.append(second);
            let from_store = Distribution::of_durations(first).unwrap();
            let direct = Distribution::of(values).unwrap();
            prop_assert_eq!(format!("{from_store:?}"), format!("{direct:?}"));
        }
    }
}
