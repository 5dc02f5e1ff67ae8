//! Per-name aggregates: launches grouped by (kernel, grid, block), each row stating its launch count.

use super::cells::{floats, ints, strings, table};
use super::fields;
use super::launches::dims;
use super::metrics::FACTS;
use super::model::Report;
use super::resolve::{fact_matrix, resolve};
use crate::error::Result;
use crate::table::Table;
use arrow_array::ArrayRef;
use std::collections::HashMap;

/// Launch rows grouped by (kernel name, grid, block): the key of a per-name aggregate.
pub fn groups(report: &Report) -> Vec<(String, Vec<usize>)> {
    let mut order: Vec<(String, Vec<usize>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for (row, launch) in report.launches.iter().enumerate() {
        let name = launch
            .kernel_demangled
            .clone()
            .unwrap_or_else(|| launch.kernel_name.clone());
        let grid = dims(report, row, launch, true);
        let block = dims(report, row, launch, false);
        let key = format!("{name}\u{1f}{grid:?}\u{1f}{block:?}");
        match at.get(&key) {
            Some(&i) => {
                if let Some(group) = order.get_mut(i) {
                    group.1.push(row);
                }
            }
            None => {
                at.insert(key, order.len());
                order.push((name, vec![row]));
            }
        }
    }
    order
}

/// Count, sum, mean, min, max of the values present.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub count: usize,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let mut s = Stats {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        };
        for v in values {
            s.count += 1;
            s.sum += v;
            s.min = s.min.min(v);
            s.max = s.max.max(v);
        }
        s
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    fn opt(&self, v: f64) -> Option<f64> {
        (self.count > 0).then_some(v)
    }
}

/// Facts that the per-name aggregate reports as means (each with the count it averaged).
const KERNEL_MEANS: &[&str] = &[
    "sm_throughput_pct",
    "memory_throughput_pct",
    "dram_throughput_pct",
    "achieved_occupancy_pct",
    "dram_bytes",
    "registers_per_thread",
];

/// Per-name aggregates: one row per (kernel, grid, block), with the number of launches it covers.
pub fn kernels_table(report: &Report) -> Result<Table> {
    let resolved = resolve(report)?;
    let values = fact_matrix(report, &resolved)?;
    let groups = groups(report);
    let fact_at = |name: &str| FACTS.iter().position(|f| f.name == name);
    let mut cols: Vec<(String, ArrayRef)> = Vec::new();
    let first = |rows: &Vec<usize>| rows.first().and_then(|r| report.launches.get(*r));
    cols.push((
        "kernel_name".into(),
        strings(groups.iter().map(|(n, _)| Some(n.clone())).collect()),
    ));
    cols.push((
        "kernel_function".into(),
        strings(
            groups
                .iter()
                .map(|(_, rows)| first(rows).and_then(|l| l.kernel_function.clone()))
                .collect(),
        ),
    ));
    for (grid, label) in [(true, "grid"), (false, "block")] {
        let text = groups
            .iter()
            .map(|(_, rows)| {
                let row = rows.first().copied()?;
                let d = dims(report, row, report.launches.get(row)?, grid);
                Some(
                    d.iter()
                        .map(|v| v.map_or("?".to_string(), |v| v.to_string()))
                        .collect::<Vec<_>>()
                        .join("x"),
                )
            })
            .collect();
        cols.push((label.to_string(), strings(text)));
    }
    cols.push((
        "launches".into(),
        ints(groups.iter().map(|(_, r)| Some(r.len() as i64)).collect()),
    ));
    cols.push((
        "launch_ids".into(),
        strings(
            groups
                .iter()
                .map(|(_, rows)| {
                    Some(
                        rows.iter()
                            .filter_map(|r| report.launches.get(*r).map(|l| l.id.to_string()))
                            .collect::<Vec<_>>()
                            .join(","),
                    )
                })
                .collect(),
        ),
    ));
    let column_of = |fact: &str, rows: &Vec<usize>| -> Stats {
        let Some(f) = fact_at(fact) else {
            return Stats::default();
        };
        Stats::of(
            rows.iter()
                .filter_map(|r| values.get(*r).and_then(|v| v.get(f)).copied().flatten()),
        )
    };
    let durations: Vec<Stats> = groups
        .iter()
        .map(|(_, r)| column_of("duration_ns", r))
        .collect();
    cols.push((
        "duration_ns_sum".into(),
        floats(durations.iter().map(|s| s.opt(s.sum)).collect()),
    ));
    cols.push((
        "duration_ns_mean".into(),
        floats(durations.iter().map(Stats::mean).collect()),
    ));
    cols.push((
        "duration_ns_min".into(),
        floats(durations.iter().map(|s| s.opt(s.min)).collect()),
    ));
    cols.push((
        "duration_ns_max".into(),
        floats(durations.iter().map(|s| s.opt(s.max)).collect()),
    ));
    for fact in KERNEL_MEANS {
        let stats: Vec<Stats> = groups.iter().map(|(_, r)| column_of(fact, r)).collect();
        cols.push((
            format!("{fact}_mean"),
            floats(stats.iter().map(Stats::mean).collect()),
        ));
    }
    table(fields::KERNELS, cols)
}
