//! Per-operator table: CPU time (total and self) and the GPU time of the work each op launched.
//!
//! "Launched directly" means through a runtime call whose innermost enclosing `cpu_op` is this op;
//! the `_total` columns add the work launched by ops nested inside it. An op nested in an op of the
//! same name counts in both rows' instances and CPU totals (as `torch.profiler`'s totals do), but a
//! GPU event counts once per row: `aten::sum` inside `aten::sum` does not double its GPU time.

use super::columns::{count, int, text};
use super::fields;
use super::records::{CpuKind, NONE};
use super::TraceSet;
use crate::error::Result;
use crate::table::Table;
use std::collections::HashMap;

#[derive(Default, Clone, Copy)]
struct Row {
    count: usize,
    total_cpu: i64,
    self_cpu: i64,
    runtime_calls: usize,
    gpu_events: usize,
    gpu_time: i64,
    gpu_events_total: usize,
    gpu_time_total: i64,
}

/// `rank, name, count, total_cpu_ns, self_cpu_ns, runtime_calls, gpu_events, gpu_time_ns,
/// gpu_events_total, gpu_time_total_ns`: one row per `cpu_op` name and rank, largest CPU total first.
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut cols: (Vec<i64>, Vec<String>, Vec<Row>) = (Vec::new(), Vec::new(), Vec::new());
    for trace in &set.traces {
        let (cpu, links) = (&trace.events.cpu, &trace.links);
        let mut per_op = vec![Row::default(); cpu.len()];
        let mut nested: HashMap<u32, (usize, i64)> = HashMap::new();
        let mut seen: Vec<u32> = Vec::new();
        for &op in &links.runtime_op {
            if let Some(row) = per_op.get_mut(op as usize) {
                row.runtime_calls += 1;
            }
        }
        for (g, gpu) in trace.events.gpu.iter().enumerate() {
            let dur = gpu.end - gpu.start;
            let op = links.gpu_op(g);
            if let Some(row) = per_op.get_mut(op as usize) {
                row.gpu_events += 1;
                row.gpu_time += dur;
            }
            // Each distinct op name on the chain from the launching op outwards counts it once.
            seen.clear();
            let mut c = op;
            while let Some(event) = cpu.get(c as usize) {
                if event.kind == CpuKind::Op && !seen.contains(&event.name) {
                    seen.push(event.name);
                    let row = nested.entry(event.name).or_default();
                    row.0 += 1;
                    row.1 += dur;
                }
                c = links.cpu_parent.get(c as usize).copied().unwrap_or(NONE);
            }
        }
        let mut by_name: HashMap<u32, Row> = HashMap::new();
        for (i, event) in cpu
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == CpuKind::Op)
        {
            let own = per_op.get(i).copied().unwrap_or_default();
            let row = by_name.entry(event.name).or_default();
            row.count += 1;
            row.total_cpu += event.end - event.start;
            row.self_cpu += links.cpu_self_ns.get(i).copied().unwrap_or(0);
            row.runtime_calls += own.runtime_calls;
            row.gpu_events += own.gpu_events;
            row.gpu_time += own.gpu_time;
        }
        for (name, (events, time)) in nested {
            let row = by_name.entry(name).or_default();
            row.gpu_events_total += events;
            row.gpu_time_total += time;
        }
        let mut rows: Vec<(u32, Row)> = by_name.into_iter().collect();
        rows.sort_by(|a, b| {
            b.1.total_cpu
                .cmp(&a.1.total_cpu)
                .then_with(|| trace.name(a.0).cmp(trace.name(b.0)))
        });
        for (id, row) in rows {
            cols.0.push(trace.rank);
            cols.1.push(trace.name(id).to_owned());
            cols.2.push(row);
        }
    }
    let rows = &cols.2;
    let pick = |f: fn(&Row) -> i64| int(rows.iter().map(f).collect());
    Table::declared(
        fields::OPS,
        vec![
            ("rank", int(cols.0.clone())),
            ("name", text(&cols.1)),
            ("count", pick(|r| count(r.count))),
            ("total_cpu_ns", pick(|r| r.total_cpu)),
            ("self_cpu_ns", pick(|r| r.self_cpu)),
            ("runtime_calls", pick(|r| count(r.runtime_calls))),
            ("gpu_events", pick(|r| count(r.gpu_events))),
            ("gpu_time_ns", pick(|r| r.gpu_time)),
            ("gpu_events_total", pick(|r| count(r.gpu_events_total))),
            ("gpu_time_total_ns", pick(|r| r.gpu_time_total)),
        ],
    )
}
