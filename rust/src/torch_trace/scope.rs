//! Restricting a trace to steady-state steps or a time window, before any table is built, so every
//! fact (tables, summary, links, counts) describes the same part of the run.
//!
//! * `Window { start, end }`: ns relative to the trace's origin (the times every table prints). An event
//!   is in the window when it overlaps `[start, end)`, host and GPU events alike (like `nsys --window`);
//!   events are kept whole, not clipped.
//! * `Steps { first, last }`: the `ProfilerStep#N` ranges with `first <= N <= last` (HTA drops warm-up
//!   and the last step the same way). Host events are in scope when they start inside the steps' host
//!   extent (first step's start to last step's end); GPU events when the runtime call that launched
//!   them is (the `steps` attribution rule), or, without a call, when they start inside that extent;
//!   `gpu_user_annotation` ranges with their `record_function`.
//!
//! Times stay relative to the file's origin, so a scoped table lines up with the unscoped one. Links
//! are rebuilt on what is kept; calls whose op lies outside the scope count as unlinked.

use super::events::Events;
use super::records::{CpuKind, GpuKind, NONE};
use super::{links, Trace, TraceSet};
use crate::error::{Error, Result};
use std::collections::HashSet;

/// Error codes of scoping.
pub mod codes {
    /// `--steps` / `--window` is malformed (empty or reversed range).
    pub const SCOPE_INVALID: &str = "torch_trace_scope_invalid";
    /// A trace has no `ProfilerStep#N` range with N in the requested steps.
    pub const STEPS_MISSING: &str = "torch_trace_steps_missing";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Steps { first: i64, last: i64 },
    Window { start: i64, end: i64 },
}

/// The trace set restricted to `scope` (every trace of a folder alike).
pub fn apply(set: &TraceSet, scope: Scope) -> Result<TraceSet> {
    match scope {
        Scope::Steps { first, last } if first > last => {
            return Err(invalid(format!(
                "--steps {first}:{last}: FIRST is after LAST"
            )))
        }
        Scope::Window { start, end } if start >= end => {
            return Err(invalid(format!(
                "--window {start}:{end}: START is not before END"
            )))
        }
        _ => {}
    }
    let traces = set
        .traces
        .iter()
        .map(|t| scoped(t, scope))
        .collect::<Result<Vec<_>>>()?;
    Ok(TraceSet { traces })
}

fn invalid(message: String) -> Error {
    Error::input(codes::SCOPE_INVALID, message)
        .with_expected("--steps FIRST:LAST with FIRST <= LAST, --window START:END with START < END")
}

/// `ProfilerStep#N` → N.
fn step_number(name: &str) -> Option<i64> {
    name.strip_prefix("ProfilerStep#")?.parse().ok()
}

/// The host extent `[start, end)` (absolute ns) of steps `first..=last`.
fn steps_extent(trace: &Trace, first: i64, last: i64) -> Result<(i64, i64)> {
    let ev = &trace.events;
    let mut seen: Vec<i64> = Vec::new();
    let mut extent: Option<(i64, i64)> = None;
    for c in ev.cpu.iter().filter(|c| c.kind == CpuKind::Annotation) {
        let Some(n) = step_number(ev.strings.get(c.name)) else {
            continue;
        };
        seen.push(n);
        if (first..=last).contains(&n) {
            extent = Some(extent.map_or((c.start, c.end), |(s, e)| (s.min(c.start), e.max(c.end))));
        }
    }
    extent.ok_or_else(|| {
        seen.sort_unstable();
        seen.dedup();
        let observed = match (seen.first(), seen.last()) {
            (Some(lo), Some(hi)) => format!("steps {lo}..{hi} ({} ranges)", seen.len()),
            _ => "no ProfilerStep#N ranges".to_owned(),
        };
        Error::input(
            codes::STEPS_MISSING,
            format!(
                "{}: no ProfilerStep#N range with {first} <= N <= {last}",
                trace.path
            ),
        )
        .with_path(trace.path.clone())
        .with_expected("steps recorded by torch.profiler.schedule (ProfilerStep#N ranges)")
        .with_observed(observed)
    })
}

fn scoped(trace: &Trace, scope: Scope) -> Result<Trace> {
    let ev = &trace.events;
    let (lo, hi, by_launch) = match scope {
        Scope::Window { start, end } => (
            trace.origin().saturating_add(start),
            trace.origin().saturating_add(end),
            false,
        ),
        Scope::Steps { first, last } => {
            let (s, e) = steps_extent(trace, first, last)?;
            (s, e, true)
        }
    };
    // Steps: starts inside the host extent. Window: overlaps it (an instant at its start counts).
    let inside = |start: i64, end: i64| {
        if by_launch {
            lo <= start && start < hi
        } else {
            start < hi && (end > lo || start >= lo)
        }
    };
    let runtime_kept: Vec<bool> = ev.runtime.iter().map(|r| inside(r.start, r.end)).collect();
    let gpu_kept: Vec<bool> = ev
        .gpu
        .iter()
        .enumerate()
        .map(|(g, e)| {
            let call = trace.links.gpu_runtime.get(g).copied().unwrap_or(NONE);
            if by_launch && call != NONE {
                runtime_kept.get(call as usize).copied().unwrap_or(false)
            } else {
                inside(e.start, e.end)
            }
        })
        .collect();
    let mut out = ev.empty_like();
    out.cpu = ev
        .cpu
        .iter()
        .filter(|c| inside(c.start, c.end))
        .copied()
        .collect();
    out.runtime = ev
        .runtime
        .iter()
        .zip(&runtime_kept)
        .filter(|(_, &k)| k)
        .map(|(r, _)| *r)
        .collect();
    out.gpu = ev
        .gpu
        .iter()
        .zip(&gpu_kept)
        .filter(|(_, &k)| k)
        .map(|(g, _)| *g)
        .collect();
    let annotations: HashSet<(i64, u32)> = out
        .cpu
        .iter()
        .filter(|c| c.kind == CpuKind::Annotation)
        .map(|c| (c.external_id, c.name))
        .collect();
    out.gpu_annotations = ev
        .gpu_annotations
        .iter()
        .filter(|a| {
            if by_launch {
                annotations.contains(&(a.external_id, a.name))
            } else {
                inside(a.start, a.end)
            }
        })
        .copied()
        .collect();
    out.syncs = ev
        .syncs
        .iter()
        .filter(|s| inside(s.start, s.end))
        .copied()
        .collect();
    let correlations: HashSet<i64> = out
        .runtime
        .iter()
        .map(|r| r.correlation)
        .chain(out.gpu.iter().map(|g| g.correlation))
        .collect();
    out.flows = ev
        .flows
        .iter()
        .filter(|f| correlations.contains(&f.id))
        .copied()
        .collect();
    out.last_end = out
        .cpu
        .iter()
        .map(|c| c.end)
        .chain(out.runtime.iter().map(|r| r.end))
        .chain(out.gpu.iter().map(|g| g.end))
        .max();
    recount(ev, &mut out);
    let links = links::link(&out);
    Ok(Trace {
        path: trace.path.clone(),
        compressed: trace.compressed,
        rank: trace.rank,
        rank_source: trace.rank_source,
        header: trace.header.clone(),
        platform: trace.platform,
        format: trace.format,
        events: out,
        links,
    })
}

/// Counts less what was dropped (`events` and `complete` too); file-level counts (metadata,
/// instant events, the 2021 format's events) stay as read.
fn recount(all: &Events, out: &mut Events) {
    let cpu = |e: &Events, k: CpuKind| e.cpu.iter().filter(|c| c.kind == k).count() as u64;
    let gpu = |e: &Events, k: GpuKind| e.gpu.iter().filter(|g| g.kind == k).count() as u64;
    let calls =
        |e: &Events, driver: bool| e.runtime.iter().filter(|r| r.driver == driver).count() as u64;
    let hip = |e: &Events| {
        e.runtime
            .iter()
            .filter(|r| e.strings.get(r.name).starts_with("hip"))
            .count() as u64
    };
    let no_stream = |e: &Events| e.gpu.iter().filter(|g| g.stream == -1).count() as u64;
    let dropped = |before: u64, after: u64| before.saturating_sub(after);
    let d_cpu = [CpuKind::Op, CpuKind::Annotation, CpuKind::Python]
        .map(|k| dropped(cpu(all, k), cpu(out, k)));
    let d_gpu = [GpuKind::Kernel, GpuKind::Memcpy, GpuKind::Memset]
        .map(|k| dropped(gpu(all, k), gpu(out, k)));
    let d_calls = [false, true].map(|driver| dropped(calls(all, driver), calls(out, driver)));
    let d_annotations = dropped(
        all.gpu_annotations.len() as u64,
        out.gpu_annotations.len() as u64,
    );
    let d_syncs = dropped(all.syncs.len() as u64, out.syncs.len() as u64);
    let d_flows = dropped(all.flows.len() as u64, out.flows.len() as u64);
    let d_hip = dropped(hip(all), hip(out));
    let d_no_stream = dropped(no_stream(all), no_stream(out));
    let d_complete =
        d_cpu.iter().chain(&d_gpu).chain(&d_calls).sum::<u64>() + d_annotations + d_syncs;
    let c = &mut out.counts;
    let [op, annotation, python] = d_cpu;
    let [kernel, memcpy, memset] = d_gpu;
    let [runtime, driver] = d_calls;
    c.cpu_ops = c.cpu_ops.saturating_sub(op);
    c.annotations = c.annotations.saturating_sub(annotation);
    c.python_functions = c.python_functions.saturating_sub(python);
    c.kernels = c.kernels.saturating_sub(kernel);
    c.memcpys = c.memcpys.saturating_sub(memcpy);
    c.memsets = c.memsets.saturating_sub(memset);
    c.runtime_calls = c.runtime_calls.saturating_sub(runtime);
    c.driver_calls = c.driver_calls.saturating_sub(driver);
    c.gpu_annotations = c.gpu_annotations.saturating_sub(d_annotations);
    c.syncs = c.syncs.saturating_sub(d_syncs);
    c.flows = c.flows.saturating_sub(d_flows);
    c.hip_calls = c.hip_calls.saturating_sub(d_hip);
    c.gpu_without_stream = c.gpu_without_stream.saturating_sub(d_no_stream);
    c.complete = c.complete.saturating_sub(d_complete);
    c.events = c.events.saturating_sub(d_complete + d_flows);
}
