//! Per-kernel-name statistics (GPU kernels only; memcpy/memset are in `transfers`).

use super::columns::{count, float, int, opt_float, pct, text};
use super::fields;
use super::records::GpuKind;
use super::TraceSet;
use crate::error::Result;
use crate::table::Table;
use std::collections::HashMap;

/// HTA's rule for communication kernels (NCCL/RCCL and Gloo), shared with the nsys engine.
pub use crate::comm::is_communication;

/// Statistics of a set of durations (ns).
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub count: usize,
    pub total: i64,
    pub mean: f64,
    pub median: f64,
    pub min: i64,
    pub max: i64,
    /// Sample standard deviation (n − 1); `None` below two values.
    pub stddev: Option<f64>,
}

/// Sorts `values` and describes them; `None` when empty.
#[allow(clippy::cast_precision_loss)]
pub fn stats(values: &mut [i64]) -> Option<Stats> {
    values.sort_unstable();
    let n = values.len();
    let (&min, &max) = (values.first()?, values.last()?);
    let total: i64 = values.iter().sum();
    let mean = total as f64 / n as f64;
    let median = if n % 2 == 1 {
        *values.get(n / 2)? as f64
    } else {
        (*values.get(n / 2 - 1)? as f64 + *values.get(n / 2)? as f64) / 2.0
    };
    let stddev = (n > 1).then(|| {
        let ss: f64 = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    Some(Stats {
        count: n,
        total,
        mean,
        median,
        min,
        max,
        stddev,
    })
}

/// `rank, name, kind, count, total_ns, mean_ns, median_ns, min_ns, max_ns, stddev_ns, share_pct`,
/// one row per kernel name and rank, largest total first. `share_pct` is of the rank's kernel time.
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut rank = Vec::new();
    let mut name = Vec::new();
    let mut kind = Vec::new();
    let mut n = Vec::new();
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
        let mut by_name: HashMap<u32, Vec<i64>> = HashMap::new();
        for g in trace
            .events
            .gpu
            .iter()
            .filter(|g| g.kind == GpuKind::Kernel)
        {
            by_name.entry(g.name).or_default().push(g.end - g.start);
        }
        let mut rows: Vec<(u32, Stats)> = by_name
            .into_iter()
            .filter_map(|(id, mut durations)| stats(&mut durations).map(|s| (id, s)))
            .collect();
        let all: i64 = rows.iter().map(|(_, s)| s.total).sum();
        rows.sort_by(|a, b| {
            b.1.total
                .cmp(&a.1.total)
                .then_with(|| trace.name(a.0).cmp(trace.name(b.0)))
        });
        for (id, s) in rows {
            let kernel = trace.name(id);
            rank.push(trace.rank);
            kind.push(if is_communication(kernel) {
                "communication"
            } else {
                "compute"
            });
            name.push(kernel.to_owned());
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
    Table::declared(
        fields::KERNELS,
        vec![
            ("rank", int(rank)),
            ("name", text(&name)),
            ("kind", text(&kind)),
            ("count", int(n)),
            ("total_ns", int(total)),
            ("mean_ns", float(mean)),
            ("median_ns", float(median)),
            ("min_ns", int(min)),
            ("max_ns", int(max)),
            ("stddev_ns", opt_float(stddev)),
            ("share_pct", float(share)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_by_hand() {
        let s = stats(&mut [4, 1, 3, 2]).unwrap();
        assert_eq!((s.count, s.total, s.min, s.max), (4, 10, 1, 4));
        assert_eq!((s.mean, s.median), (2.5, 2.5));
        assert!((s.stddev.unwrap() - (5.0_f64 / 3.0).sqrt()).abs() < 1e-12);
        let s = stats(&mut [7]).unwrap();
        assert_eq!((s.median, s.stddev), (7.0, None));
        assert_eq!(stats(&mut []), None);
    }
}
