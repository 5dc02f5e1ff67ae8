//! Grouped duration summaries shared by the `*_sum` reports: per-worker groups keyed by a raw id,
//! merged in rowid order, summarized in parallel, and laid out as nsys lays them out.

use super::describe::{Durations, Summary};
use super::hash::IdMap;
use super::out::{pct, total_i64, Columns};
use crate::column::Column;
use crate::error::Result;
use crate::table::Table;
use rayon::prelude::*;

/// Keys below this index a flat slot table; larger or negative keys go through a hash map.
const DENSE_KEYS: i64 = 1 << 20;
const NO_SLOT: u32 = u32::MAX;

/// Values grouped by an integer key (string ids are small and dense, so the common lookup is an
/// array index).
#[derive(Default)]
pub struct Groups {
    dense: Vec<u32>,
    sparse: IdMap<i64, usize>,
    keys: Vec<i64>,
    values: Vec<Durations>,
}

impl Groups {
    #[inline]
    pub fn push(&mut self, key: i64, value: i64) {
        let slot = if (0..DENSE_KEYS).contains(&key) {
            let k = usize::try_from(key).unwrap_or(0);
            if k >= self.dense.len() {
                self.dense.resize(k + 1, NO_SLOT);
            }
            match self.dense.get(k).copied() {
                Some(s) if s != NO_SLOT => usize::try_from(s).unwrap_or(0),
                _ => {
                    let s = self.add(key);
                    if let Some(d) = self.dense.get_mut(k) {
                        *d = u32::try_from(s).unwrap_or(NO_SLOT);
                    }
                    s
                }
            }
        } else {
            match self.sparse.get(&key) {
                Some(&s) => s,
                None => {
                    let s = self.add(key);
                    self.sparse.insert(key, s);
                    s
                }
            }
        };
        if let Some(d) = self.values.get_mut(slot) {
            d.push(value);
        }
    }

    fn add(&mut self, key: i64) -> usize {
        self.keys.push(key);
        self.values.push(Durations::default());
        self.values.len() - 1
    }

    /// The groups as `(key, values)`, in first-seen order.
    pub fn into_parts(self) -> impl Iterator<Item = (i64, Durations)> {
        self.keys.into_iter().zip(self.values)
    }
}

/// Merges per-worker groups, mapping each raw key through `canon` (which may fail, e.g. for a
/// dangling string id). The result is ordered by canonical key.
pub fn merge<K: Ord + Copy>(
    parts: Vec<Groups>,
    mut canon: impl FnMut(i64) -> Result<K>,
) -> Result<Vec<(K, Durations)>> {
    let mut merged: std::collections::BTreeMap<K, Durations> = std::collections::BTreeMap::new();
    for part in parts {
        for (key, values) in part.into_parts() {
            merged.entry(canon(key)?).or_default().append(values);
        }
    }
    Ok(merged.into_iter().collect())
}

/// Values below which the groups are summarized on the calling thread (the pool's hand-off costs
/// more than it saves there, and callers reading many files at once would queue on the pool).
const PARALLEL_FROM_VALUES: usize = 1 << 16;

/// Summarizes every group (in parallel when they hold many values), dropping empty ones.
pub fn describe_all<K: Send>(groups: Vec<(K, Durations)>) -> Vec<(K, Summary)> {
    let values: usize = groups.iter().map(|(_, d)| d.len()).sum();
    let describe = |(k, d): (K, Durations)| d.describe().map(|s| (k, s));
    if values < PARALLEL_FROM_VALUES {
        groups.into_iter().filter_map(describe).collect()
    } else {
        groups.into_par_iter().filter_map(describe).collect()
    }
}

/// The common layout of `cuda_gpu_kern_sum`, `cuda_api_sum`, `cuda_gpu_mem_time_sum`:
/// `time_pct` (share of the summed totals), `total_time_ns`, a count, avg/med/min/max/stddev, a name.
pub fn time_table(
    declared: &'static [Column],
    rows: &[(String, Summary)],
    count_col: &'static str,
    name_col: &'static str,
) -> Result<Table> {
    let grand: i128 = rows.iter().map(|r| r.1.total).sum();
    Columns::of(declared)
        .float(
            "time_pct",
            rows.iter().map(|r| pct(r.1.total, grand)).collect(),
        )
        .int(
            "total_time_ns",
            rows.iter()
                .map(|r| total_i64(r.1.total, "total_time_ns"))
                .collect::<Result<_>>()?,
        )
        .int(
            count_col,
            rows.iter()
                .map(|r| i64::try_from(r.1.count).unwrap_or(i64::MAX))
                .collect(),
        )
        .float("avg_ns", rows.iter().map(|r| r.1.mean).collect())
        .float("med_ns", rows.iter().map(|r| r.1.median).collect())
        .int("min_ns", rows.iter().map(|r| r.1.min).collect())
        .int("max_ns", rows.iter().map(|r| r.1.max).collect())
        .float("stddev_ns", rows.iter().map(|r| r.1.stddev).collect())
        .text(name_col, rows.iter().map(|r| r.0.clone()).collect())
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_merge_across_workers_by_canonical_key() {
        let mut a = Groups::default();
        a.push(10, 1);
        a.push(10, 2);
        a.push(11, 5);
        let mut b = Groups::default();
        b.push(12, 3);
        // Keys 10 and 12 name the same thing.
        let merged = merge(vec![a, b], |k| Ok(if k == 12 { 10 } else { k })).unwrap_or_default();
        let summaries = describe_all(merged);
        assert_eq!(summaries.len(), 2);
        assert_eq!(summaries[0].0, 10);
        assert_eq!((summaries[0].1.count, summaries[0].1.total), (3, 6));
        assert_eq!((summaries[1].1.count, summaries[1].1.total), (1, 5));
    }
}
