//! Per runtime/driver call name: how often the host called it and how long it spent inside
//! (`cuda_runtime` and `cuda_driver` events; the PyTorch-trace counterpart of nsys' `cuda_api_sum`).

use super::columns::{count, float, int, opt_float, pct, text};
use super::kernels::stats;
use super::TraceSet;
use crate::error::Result;
use crate::table::Table;
use std::collections::HashMap;

/// `rank, name, category, count, total_ns, mean_ns, median_ns, min_ns, max_ns, stddev_ns, share_pct`:
/// one row per (rank, call name, category), largest total first. `share_pct` is of the rank's summed
/// call time; calls on different threads each count (a sum of host time, not wall time).
pub fn table(set: &TraceSet) -> Result<Table> {
    let (mut rank, mut name, mut category, mut n) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut total, mut mean, mut median, mut min, mut max, mut stddev, mut share) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for trace in &set.traces {
        let mut by_name: HashMap<(u32, bool), Vec<i64>> = HashMap::new();
        for call in &trace.events.runtime {
            by_name
                .entry((call.name, call.driver))
                .or_default()
                .push(call.end - call.start);
        }
        let mut rows: Vec<((u32, bool), _)> = by_name
            .into_iter()
            .filter_map(|(key, mut durations)| stats(&mut durations).map(|s| (key, s)))
            .collect();
        let all: i64 = rows.iter().map(|(_, s)| s.total).sum();
        rows.sort_by(|a, b| {
            b.1.total
                .cmp(&a.1.total)
                .then_with(|| trace.name(a.0 .0).cmp(trace.name(b.0 .0)))
                .then_with(|| a.0 .1.cmp(&b.0 .1))
        });
        for ((id, driver), s) in rows {
            rank.push(trace.rank);
            name.push(trace.name(id).to_owned());
            category.push(if driver {
                "cuda_driver"
            } else {
                "cuda_runtime"
            });
            n.push(count(s.count));
            total.push(s.total);
            mean.push(s.mean);
            median.push(s.median);
            min.push(s.min);
            max.push(s.max);
            stddev.push(s.stddev);
            share.push(pct(s.total, all));
        }
    }
    Table::from_columns(vec![
        ("rank", int(rank)),
        ("name", text(&name)),
        ("category", text(&category)),
        ("count", int(n)),
        ("total_ns", int(total)),
        ("mean_ns", float(mean)),
        ("median_ns", float(median)),
        ("min_ns", int(min)),
        ("max_ns", int(max)),
        ("stddev_ns", opt_float(stddev)),
        ("share_pct", float(share)),
    ])
}
