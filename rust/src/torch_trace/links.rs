//! Links between events: CPU op → runtime call → GPU activity.
//!
//! * GPU event → runtime call: equal CUPTI `correlation` ids (the `ac2g` flow id is the same number;
//!   flows are checked against it, not used instead of it).
//! * Runtime call → CPU op: the innermost `cpu_op` enclosing the call on the same thread (time
//!   containment); when none encloses it, a `cpu_op` with the call's `External id`. Agreement between
//!   the two is counted.
//! * Host nesting: on each thread, ranges sorted by (start, longest first) form a stack; each range's
//!   parent is the innermost range containing it. Self time = duration − direct children's durations.
//!
//! Nothing is dropped: unlinked events keep `NONE` and are counted in [`LinkStats`].

use super::events::{CpuKind, Events, FastHasher, FastMap, NONE};
use rayon::iter::ParallelIterator;
use rayon::slice::ParallelSliceMut;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;

#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct LinkStats {
    pub gpu_events: u64,
    /// GPU events whose correlation id matches a runtime/driver call.
    pub gpu_linked_to_runtime: u64,
    /// GPU events with no matching call (counted, not dropped).
    pub gpu_unlinked: u64,
    /// GPU events linked through their call to an enclosing or External-id `cpu_op`.
    pub gpu_linked_to_op: u64,
    pub runtime_calls: u64,
    /// Calls that launched at least one GPU event.
    pub runtime_launching_gpu: u64,
    /// Calls inside a `cpu_op` on the same thread.
    pub runtime_op_by_containment: u64,
    /// Calls outside every `cpu_op`, linked by `External id` instead.
    pub runtime_op_by_external_id: u64,
    pub runtime_without_op: u64,
    /// Calls whose `External id` equals (or differs from) that of their enclosing `cpu_op`.
    pub external_id_agree: u64,
    pub external_id_disagree: u64,
    /// Runtime calls sharing a correlation id with an earlier call (the first one is linked).
    pub duplicate_correlations: u64,
    /// `ac2g` flow end points, and how many sit exactly on a call/GPU event with their id.
    pub flow_points: u64,
    pub flow_points_matching: u64,
    /// Host ranges that partially overlap an enclosing range on their thread (not nested).
    pub improper_nesting: u64,
}

#[derive(Debug, Default)]
pub struct Links {
    /// Per GPU event: index of its runtime call, or `NONE`.
    pub gpu_runtime: Vec<u32>,
    /// Per runtime call: the enclosing host range (CPU event index), or `NONE`.
    pub runtime_parent: Vec<u32>,
    /// Per runtime call: the `cpu_op` it belongs to, or `NONE`.
    pub runtime_op: Vec<u32>,
    /// Per CPU event: the enclosing CPU event on its thread, or `NONE`.
    pub cpu_parent: Vec<u32>,
    /// Per CPU event: duration minus the durations of its direct children (CPU ranges and calls).
    pub cpu_self_ns: Vec<i64>,
    /// Per runtime call: its GPU events, as `runtime_gpu[runtime_gpu_start[r]..runtime_gpu_start[r+1]]`.
    pub runtime_gpu_start: Vec<u32>,
    pub runtime_gpu: Vec<u32>,
    pub stats: LinkStats,
}

impl Links {
    /// The GPU events launched by runtime call `r`.
    pub fn gpu_of_runtime(&self, r: usize) -> &[u32] {
        let start = self.runtime_gpu_start.get(r).copied().unwrap_or(0) as usize;
        let end = self.runtime_gpu_start.get(r + 1).copied().unwrap_or(0) as usize;
        self.runtime_gpu.get(start..end).unwrap_or_default()
    }

    /// The `cpu_op` behind GPU event `g`, or `NONE`.
    pub fn gpu_op(&self, g: usize) -> u32 {
        match self.gpu_runtime.get(g) {
            Some(&r) if r != NONE => self.runtime_op.get(r as usize).copied().unwrap_or(NONE),
            _ => NONE,
        }
    }
}

fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

/// Computes every link of one trace.
pub fn link(ev: &Events) -> Links {
    // Host nesting, the correlation map and the flow check need nothing of each other: on the pool
    // side by side; GPU events are linked once the first two are done.
    let ((mut links, correlations), (flow_points, flow_points_matching)) = rayon::join(
        || {
            rayon::join(
                || {
                    let mut links = Links {
                        gpu_runtime: vec![NONE; ev.gpu.len()],
                        runtime_parent: vec![NONE; ev.runtime.len()],
                        runtime_op: vec![NONE; ev.runtime.len()],
                        cpu_parent: vec![NONE; ev.cpu.len()],
                        cpu_self_ns: ev.cpu.iter().map(|c| c.end - c.start).collect(),
                        ..Links::default()
                    };
                    nest(ev, &mut links);
                    ops_of_runtime(ev, &mut links);
                    links
                },
                || correlations(ev),
            )
        },
        || check_flows(ev),
    );
    let (by_correlation, duplicates) = correlations;
    links.stats.duplicate_correlations = duplicates;
    links.stats.flow_points = flow_points;
    links.stats.flow_points_matching = flow_points_matching;
    gpu_to_runtime(ev, &mut links, &by_correlation);
    links
}

/// A host range in the nesting sweep: CPU events first, runtime calls after (`runtime` = index).
#[derive(Clone, Copy)]
struct Host {
    thread: u32,
    start: i64,
    end: i64,
    /// Tie order for equal spans: annotation, op, python function, runtime, driver.
    order: u8,
    runtime: bool,
    index: u32,
}

fn nest(ev: &Events, links: &mut Links) {
    let cpu = ev.cpu.iter().enumerate().map(|(i, c)| Host {
        thread: c.thread,
        start: c.start,
        end: c.end,
        order: match c.kind {
            CpuKind::Annotation => 0,
            CpuKind::Op => 1,
            CpuKind::Python => 2,
        },
        runtime: false,
        index: idx(i),
    });
    let runtime = ev.runtime.iter().enumerate().map(|(i, r)| Host {
        thread: r.thread,
        start: r.start,
        end: r.end,
        order: if r.driver { 4 } else { 3 },
        runtime: true,
        index: idx(i),
    });
    let hosts = by_thread(cpu.chain(runtime), ev.threads.len());
    let mut stack: Vec<Host> = Vec::new();
    let mut thread = NONE;
    for h in hosts {
        if h.thread != thread {
            stack.clear();
            thread = h.thread;
        }
        while let Some(top) = stack.last() {
            if top.end >= h.end {
                break;
            }
            if top.end > h.start {
                links.stats.improper_nesting += 1;
            }
            stack.pop();
        }
        if let Some(parent) = stack.last() {
            if !parent.runtime {
                if let Some(s) = links.cpu_self_ns.get_mut(parent.index as usize) {
                    *s -= h.end - h.start;
                }
            }
            // The enclosing CPU range: the parent itself, or (for a driver call inside a runtime
            // call) the runtime call's own enclosing range.
            let cpu_parent = if parent.runtime {
                links
                    .runtime_parent
                    .get(parent.index as usize)
                    .copied()
                    .unwrap_or(NONE)
            } else {
                parent.index
            };
            let slot = if h.runtime {
                links.runtime_parent.get_mut(h.index as usize)
            } else {
                links.cpu_parent.get_mut(h.index as usize)
            };
            if let Some(slot) = slot {
                *slot = cpu_parent;
            }
        }
        stack.push(h);
    }
}

/// The host ranges sorted by (thread, start, longest first, kind, index). Grouped by thread first
/// (a counting sort that keeps file order), then each thread's ranges sorted on their own: Kineto
/// writes each category in start order, so a thread's ranges are a few sorted runs, which the
/// stable sort merges in linear time (a general sort of all ranges was most of the link).
fn by_thread(hosts: impl Iterator<Item = Host> + Clone, threads: usize) -> Vec<Host> {
    // Bucket of a thread id (ids are below `threads`; anything else shares the last bucket).
    let bucket = |t: u32| (t as usize).min(threads);
    let mut starts = vec![0_usize; threads + 2];
    for h in hosts.clone() {
        if let Some(n) = starts.get_mut(bucket(h.thread) + 1) {
            *n += 1;
        }
    }
    for i in 1..starts.len() {
        let before = starts.get(i - 1).copied().unwrap_or(0);
        if let Some(n) = starts.get_mut(i) {
            *n += before;
        }
    }
    let total = starts.last().copied().unwrap_or(0);
    let mut out = vec![
        Host {
            thread: NONE,
            start: 0,
            end: 0,
            order: 0,
            runtime: false,
            index: NONE,
        };
        total
    ];
    for h in hosts {
        if let Some(next) = starts.get_mut(bucket(h.thread)) {
            if let Some(slot) = out.get_mut(*next) {
                *slot = h;
            }
            *next += 1;
        }
    }
    out.par_chunk_by_mut(|a, b| a.thread == b.thread)
        .for_each(|thread| {
            thread.sort_by_key(|h| (h.thread, h.start, Reverse(h.end), h.order, h.index))
        });
    out
}

fn ops_of_runtime(ev: &Events, links: &mut Links) {
    let mut by_external_id: Option<FastMap<i64, u32>> = None;
    for (r, call) in ev.runtime.iter().enumerate() {
        links.stats.runtime_calls += 1;
        let mut c = links.runtime_parent.get(r).copied().unwrap_or(NONE);
        while let Some(cpu) = ev.cpu.get(c as usize) {
            if cpu.kind == CpuKind::Op {
                break;
            }
            c = links.cpu_parent.get(c as usize).copied().unwrap_or(NONE);
        }
        let op = if let Some(cpu) = ev.cpu.get(c as usize) {
            links.stats.runtime_op_by_containment += 1;
            if call.external_id >= 0 {
                if cpu.external_id == call.external_id {
                    links.stats.external_id_agree += 1;
                } else {
                    links.stats.external_id_disagree += 1;
                }
            }
            c
        } else {
            let map = by_external_id.get_or_insert_with(|| {
                let mut map = FastMap::default();
                for (i, cpu) in ev.cpu.iter().enumerate() {
                    if cpu.kind == CpuKind::Op && cpu.external_id >= 0 {
                        map.entry(cpu.external_id).or_insert(idx(i));
                    }
                }
                map
            });
            match map.get(&call.external_id) {
                Some(&op) if call.external_id >= 0 => {
                    links.stats.runtime_op_by_external_id += 1;
                    op
                }
                _ => {
                    links.stats.runtime_without_op += 1;
                    NONE
                }
            }
        };
        if let Some(slot) = links.runtime_op.get_mut(r) {
            *slot = op;
        }
    }
}

/// Runtime calls by correlation id (the first call with an id keeps it), and how many calls
/// repeated an id.
fn correlations(ev: &Events) -> (FastMap<i64, u32>, u64) {
    let mut by_correlation: FastMap<i64, u32> = FastMap::default();
    by_correlation.reserve(ev.runtime.len());
    let mut duplicates = 0;
    for (r, call) in ev.runtime.iter().enumerate() {
        if call.correlation < 0 {
            continue;
        }
        match by_correlation.entry(call.correlation) {
            Entry::Occupied(_) => duplicates += 1,
            Entry::Vacant(slot) => {
                slot.insert(idx(r));
            }
        }
    }
    (by_correlation, duplicates)
}

fn gpu_to_runtime(ev: &Events, links: &mut Links, by_correlation: &FastMap<i64, u32>) {
    let mut per_runtime = vec![0_u32; ev.runtime.len() + 1];
    for (g, gpu) in ev.gpu.iter().enumerate() {
        links.stats.gpu_events += 1;
        match by_correlation.get(&gpu.correlation) {
            Some(&r) if gpu.correlation >= 0 => {
                links.stats.gpu_linked_to_runtime += 1;
                if let Some(slot) = links.gpu_runtime.get_mut(g) {
                    *slot = r;
                }
                if let Some(count) = per_runtime.get_mut(r as usize + 1) {
                    *count += 1;
                }
                if links
                    .runtime_op
                    .get(r as usize)
                    .is_some_and(|&op| op != NONE)
                {
                    links.stats.gpu_linked_to_op += 1;
                }
            }
            _ => links.stats.gpu_unlinked += 1,
        }
    }
    for r in 0..ev.runtime.len() {
        let before = per_runtime.get(r).copied().unwrap_or(0);
        if let Some(slot) = per_runtime.get_mut(r + 1) {
            if *slot > 0 {
                links.stats.runtime_launching_gpu += 1;
            }
            *slot += before;
        }
    }
    let mut fill = per_runtime.clone();
    links.runtime_gpu = vec![NONE; ev.gpu.len()];
    for (g, &r) in links.gpu_runtime.iter().enumerate() {
        if r == NONE {
            continue;
        }
        if let Some(next) = fill.get_mut(r as usize) {
            if let Some(slot) = links.runtime_gpu.get_mut(*next as usize) {
                *slot = idx(g);
            }
            *next += 1;
        }
    }
    links.runtime_gpu.retain(|&g| g != NONE);
    links.runtime_gpu_start = per_runtime;
}

/// Flow end points, and how many sit exactly on a call or GPU event with their id.
fn check_flows(ev: &Events) -> (u64, u64) {
    if ev.flows.is_empty() {
        return (0, 0);
    }
    let starts: HashSet<(i64, i64), BuildHasherDefault<FastHasher>> = ev
        .runtime
        .iter()
        .map(|c| (c.correlation, c.start))
        .chain(ev.gpu.iter().map(|g| (g.correlation, g.start)))
        .collect();
    let matching = ev
        .flows
        .iter()
        .filter(|flow| starts.contains(&(flow.id, flow.ts)))
        .count();
    (ev.flows.len() as u64, matching as u64)
}
