//! Per runtime/driver call name: how often the host called it and how long it spent inside
//! (`cuda_runtime` and `cuda_driver` events; the PyTorch-trace counterpart of nsys' `cuda_api_sum`).

use super::columns::{count, float, int, opt_float, pct, text};
use super::fields;
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
    Table::declared(
        fields::API,
        vec![
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
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    #[test]
    fn h200_trace_calls_by_name() {
        let path = crate::testdata::fixtures().join("h200/torch/eager_trace.json");
        let set = super::super::open(&path).unwrap();
        let table = table(&set).unwrap();
        assert_eq!(table.num_rows(), 8);
        let batch = &table.batches[0];
        let col = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
        let names = col("name");
        let names = names.as_any().downcast_ref::<StringArray>().unwrap();
        let counts = col("count");
        let counts = counts.as_any().downcast_ref::<Int64Array>().unwrap();
        let totals = col("total_ns");
        let totals = totals.as_any().downcast_ref::<Int64Array>().unwrap();
        // Largest total first; sums made by hand from the trace's cuda_runtime/cuda_driver events.
        assert_eq!(names.value(0), "cudaStreamSynchronize");
        assert_eq!((counts.value(0), totals.value(0)), (3, 813_191));
        assert_eq!(counts.iter().flatten().sum::<i64>(), 119);
        assert_eq!(totals.iter().flatten().sum::<i64>(), 1_434_216);
    }
}
