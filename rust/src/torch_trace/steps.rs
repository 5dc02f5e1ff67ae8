//! GPU time attributed to each `record_function` range (`user_annotation`, including the
//! `ProfilerStep#N` ranges `torch.profiler.schedule` writes).
//!
//! Attribution rule: a range owns the GPU events launched by runtime calls that *start* inside the
//! range, on any thread of the same process (so a step also owns work launched from autograd's
//! backward threads). Nested ranges each own their share; sibling ranges never overlap on a thread.
//! The matching `gpu_user_annotation` (same `External id` and name), when Kineto wrote one, gives
//! the range's extent as drawn on the GPU.

use super::columns::{count, int, opt_int, text};
use super::fields;
use super::records::{CpuKind, OwnedIdent};
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::intervals;
use crate::table::Table;
use std::collections::HashMap;

/// Calls of each process, sorted by start.
fn calls_by_process(trace: &Trace) -> HashMap<&OwnedIdent, Vec<u32>> {
    let mut out: HashMap<&OwnedIdent, Vec<u32>> = HashMap::new();
    for (r, call) in trace.events.runtime.iter().enumerate() {
        if let Some(thread) = trace.events.threads.get(call.thread as usize) {
            out.entry(&thread.pid)
                .or_default()
                .push(u32::try_from(r).unwrap_or(u32::MAX));
        }
    }
    for calls in out.values_mut() {
        calls
            .sort_unstable_by_key(|&r| trace.events.runtime.get(r as usize).map_or(0, |c| c.start));
    }
    out
}

/// GPU-side extent of each `gpu_user_annotation`, keyed by (External id, name).
fn gpu_extents(trace: &Trace) -> HashMap<(i64, u32), (i64, i64)> {
    let mut out: HashMap<(i64, u32), (i64, i64)> = HashMap::new();
    for a in &trace.events.gpu_annotations {
        out.entry((a.external_id, a.name))
            .and_modify(|(s, e)| {
                *s = (*s).min(a.start);
                *e = (*e).max(a.end);
            })
            .or_insert((a.start, a.end));
    }
    out
}

/// `rank, name, kind, pid, tid, start_ns, cpu_duration_ns, runtime_calls, gpu_events, gpu_time_ns,
/// gpu_busy_ns, gpu_start_ns, gpu_end_ns, gpu_annotation_ns`: one row per range, in start order.
/// `gpu_time_ns` sums durations; `gpu_busy_ns` is their union (overlap counted once).
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut ints: [Vec<i64>; 7] = Default::default();
    let mut opts: [Vec<Option<i64>>; 3] = Default::default();
    let (mut name, mut kind, mut pid, mut tid) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for trace in &set.traces {
        let calls = calls_by_process(trace);
        let extents = gpu_extents(trace);
        let mut ranges: Vec<usize> = trace
            .events
            .cpu
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind == CpuKind::Annotation)
            .map(|(i, _)| i)
            .collect();
        ranges.sort_by_key(|&i| {
            trace
                .events
                .cpu
                .get(i)
                .map(|c| (c.start, std::cmp::Reverse(c.end)))
        });
        for i in ranges {
            let Some(range) = trace.events.cpu.get(i) else {
                continue;
            };
            let Some(thread) = trace.events.threads.get(range.thread as usize) else {
                continue;
            };
            let runtime = &trace.events.runtime;
            let own: &[u32] = calls.get(&thread.pid).map_or(&[], Vec::as_slice);
            let first = own.partition_point(|&r| {
                runtime
                    .get(r as usize)
                    .is_some_and(|c| c.start < range.start)
            });
            let last = own
                .partition_point(|&r| runtime.get(r as usize).is_some_and(|c| c.start < range.end));
            let inside = own.get(first..last).unwrap_or_default();
            let mut spans = Vec::new();
            for &r in inside {
                for &g in trace.links.gpu_of_runtime(r as usize) {
                    if let Some(e) = trace.events.gpu.get(g as usize) {
                        spans.push((e.start, e.end));
                    }
                }
            }
            let gpu_time: i64 = spans.iter().map(|(s, e)| e - s).sum();
            let hull = spans.iter().fold(None, |acc: Option<(i64, i64)>, &(s, e)| {
                Some(acc.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
            });
            let gpu_events = spans.len();
            let busy = intervals::total(&intervals::union(
                spans
                    .iter()
                    .map(|&(s, e)| intervals::Span::new(s, e))
                    .collect(),
            ));
            let label = trace.name(range.name);
            name.push(label.to_owned());
            kind.push(if label.starts_with("ProfilerStep#") {
                "profiler_step"
            } else {
                "record_function"
            });
            pid.push(thread.pid.to_string());
            tid.push(thread.tid.to_string());
            let values = [
                trace.rank,
                range.start - trace.origin(),
                range.end - range.start,
                count(inside.len()),
                count(gpu_events),
                gpu_time,
                busy,
            ];
            for (col, v) in ints.iter_mut().zip(values) {
                col.push(v);
            }
            let annotation = extents
                .get(&(range.external_id, range.name))
                .map(|(s, e)| e - s);
            let optional = [
                hull.map(|(s, _)| s - trace.origin()),
                hull.map(|(_, e)| e - trace.origin()),
                annotation,
            ];
            for (col, v) in opts.iter_mut().zip(optional) {
                col.push(v);
            }
        }
    }
    let [rank, start, duration, calls, events, time, busy] = ints;
    let [gpu_start, gpu_end, annotation] = opts;
    Table::declared(
        fields::STEPS,
        vec![
            ("rank", int(rank)),
            ("name", text(&name)),
            ("kind", text(&kind)),
            ("pid", text(&pid)),
            ("tid", text(&tid)),
            ("start_ns", int(start)),
            ("cpu_duration_ns", int(duration)),
            ("runtime_calls", int(calls)),
            ("gpu_events", int(events)),
            ("gpu_time_ns", int(time)),
            ("gpu_busy_ns", int(busy)),
            ("gpu_start_ns", opt_int(gpu_start)),
            ("gpu_end_ns", opt_int(gpu_end)),
            ("gpu_annotation_ns", opt_int(annotation)),
        ],
    )
}
