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

use super::events::Events;
use super::records::{CpuKind, FastHasher, FastMap, NONE};
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
    // Host nesting (then each call's op) on one side of the pool; the correlation map, GPU events
    // to their calls and the flow check on the other. They meet for one count: GPU events whose
    // call has an op.
    let (mut links, gpu) = rayon::join(
        || {
            let mut links = Links {
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
        || {
            let (by_correlation, duplicates) = correlations(ev);
            let mut gpu = Links {
                gpu_runtime: vec![NONE; ev.gpu.len()],
                ..Links::default()
            };
            gpu.stats.duplicate_correlations = duplicates;
            gpu_to_runtime(ev, &mut gpu, &by_correlation);
            let (points, matching) = if duplicates == 0 {
                check_flows_by_correlation(ev, &gpu, &by_correlation)
            } else {
                check_flows(ev)
            };
            gpu.stats.flow_points = points;
            gpu.stats.flow_points_matching = matching;
            gpu
        },
    );
    // Each side counted its own fields: the host side's kept, the rest the GPU side's.
    links.stats = LinkStats {
        runtime_calls: links.stats.runtime_calls,
        runtime_op_by_containment: links.stats.runtime_op_by_containment,
        runtime_op_by_external_id: links.stats.runtime_op_by_external_id,
        runtime_without_op: links.stats.runtime_without_op,
        external_id_agree: links.stats.external_id_agree,
        external_id_disagree: links.stats.external_id_disagree,
        improper_nesting: links.stats.improper_nesting,
        ..gpu.stats
    };
    links.gpu_runtime = gpu.gpu_runtime;
    links.runtime_gpu_start = gpu.runtime_gpu_start;
    links.runtime_gpu = gpu.runtime_gpu;
    let reaches_op = |&r: &u32| {
        r != NONE
            && links
                .runtime_op
                .get(r as usize)
                .is_some_and(|&op| op != NONE)
    };
    links.stats.gpu_linked_to_op =
        links.gpu_runtime.iter().filter(|r| reaches_op(r)).count() as u64;
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
    let threads = ev.threads.len();
    let cpu = ByThread::new(ev.cpu.iter().map(|c| c.thread), threads);
    let runtime = ByThread::new(ev.runtime.iter().map(|r| r.thread), threads);
    let mut walk = Walk::default();
    for bucket in 0..=threads {
        let (cpu, runtime) = (cpu.of(bucket), runtime.of(bucket));
        let mut runs = sorted_runs(cpu, false, |i| cpu_host(ev, i));
        runs.extend(sorted_runs(runtime, true, |i| runtime_host(ev, i)));
        if runs.len() <= MAX_RUNS {
            merge(ev, runs, |h| walk.push(h, links));
        } else {
            // Many runs (not Kineto's way of writing): sort the thread's ranges.
            let mut hosts: Vec<Host> = cpu.iter().filter_map(|&i| cpu_host(ev, i)).collect();
            hosts.extend(runtime.iter().filter_map(|&i| runtime_host(ev, i)));
            hosts.sort_by_key(order_key);
            for h in hosts {
                walk.push(h, links);
            }
        }
    }
}

/// Sorted runs merged at most this many at a time; a thread with more is sorted instead.
const MAX_RUNS: usize = 16;

/// Where a host range goes in the nesting order: thread, start, longest first, kind, index (unique:
/// `order` tells CPU ranges from runtime calls, and the index each one from the others).
fn order_key(h: &Host) -> (u32, i64, Reverse<i64>, u8, u32) {
    (h.thread, h.start, Reverse(h.end), h.order, h.index)
}

fn cpu_host(ev: &Events, i: u32) -> Option<Host> {
    ev.cpu.get(i as usize).map(|c| Host {
        thread: c.thread,
        start: c.start,
        end: c.end,
        order: match c.kind {
            CpuKind::Annotation => 0,
            CpuKind::Op => 1,
            CpuKind::Python => 2,
        },
        runtime: false,
        index: i,
    })
}

fn runtime_host(ev: &Events, i: u32) -> Option<Host> {
    ev.runtime.get(i as usize).map(|r| Host {
        thread: r.thread,
        start: r.start,
        end: r.end,
        order: if r.driver { 4 } else { 3 },
        runtime: true,
        index: i,
    })
}

/// Event indices grouped by thread, each thread's in file order (a counting sort): bucket `t` holds
/// thread `t`'s, the last bucket any id past the thread count.
struct ByThread {
    starts: Vec<usize>,
    items: Vec<u32>,
}

impl ByThread {
    fn new(threads_of: impl Iterator<Item = u32> + Clone, threads: usize) -> ByThread {
        let bucket = |t: u32| (t as usize).min(threads);
        let mut starts = vec![0_usize; threads + 2];
        for t in threads_of.clone() {
            if let Some(n) = starts.get_mut(bucket(t) + 1) {
                *n += 1;
            }
        }
        for i in 1..starts.len() {
            let before = starts.get(i - 1).copied().unwrap_or(0);
            if let Some(n) = starts.get_mut(i) {
                *n += before;
            }
        }
        let mut items = vec![NONE; starts.last().copied().unwrap_or(0)];
        let mut next = starts.clone();
        for (i, t) in threads_of.enumerate() {
            if let Some(at) = next.get_mut(bucket(t)) {
                if let Some(slot) = items.get_mut(*at) {
                    *slot = idx(i);
                }
                *at += 1;
            }
        }
        ByThread { starts, items }
    }

    fn of(&self, bucket: usize) -> &[u32] {
        let start = self.starts.get(bucket).copied().unwrap_or(0);
        let end = self.starts.get(bucket + 1).copied().unwrap_or(start);
        self.items.get(start..end).unwrap_or_default()
    }
}

/// One sorted run of a thread's ranges: indices, and whether they are runtime calls.
type Run<'a> = (&'a [u32], bool);

/// `indices` (a thread's ranges in file order) cut into runs sorted in the nesting order: Kineto
/// writes each category in start order, so a thread's ranges are a few runs, merged in linear
/// time without a copy of the ranges (a sort of all of them was most of the link, and its memory).
fn sorted_runs(indices: &[u32], runtime: bool, host: impl Fn(u32) -> Option<Host>) -> Vec<Run<'_>> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut last = None;
    for (k, &i) in indices.iter().enumerate() {
        let key = host(i).as_ref().map(order_key);
        if k > 0 && key < last {
            runs.push((indices.get(start..k).unwrap_or_default(), runtime));
            start = k;
        }
        last = key;
    }
    if start < indices.len() {
        runs.push((indices.get(start..).unwrap_or_default(), runtime));
    }
    runs
}

/// The ranges of `runs`, merged in the nesting order, to `each`.
fn merge(ev: &Events, mut runs: Vec<Run<'_>>, mut each: impl FnMut(Host)) {
    let host = |&(run, runtime): &Run<'_>| {
        let &i = run.first()?;
        if runtime {
            runtime_host(ev, i)
        } else {
            cpu_host(ev, i)
        }
    };
    let mut heads: Vec<Option<Host>> = runs.iter().map(host).collect();
    loop {
        let mut best: Option<(usize, Host)> = None;
        for (k, head) in heads.iter().enumerate() {
            if let Some(h) = head {
                if best.is_none_or(|(_, b)| order_key(h) < order_key(&b)) {
                    best = Some((k, *h));
                }
            }
        }
        let Some((k, h)) = best else {
            return;
        };
        if let (Some(run), Some(head)) = (runs.get_mut(k), heads.get_mut(k)) {
            run.0 = run.0.get(1..).unwrap_or_default();
            *head = host(run);
        }
        each(h);
    }
}

/// The nesting sweep: each range's parent is the innermost range still open on its thread.
#[derive(Default)]
struct Walk {
    /// The open ranges, each with where the union of its direct children so far ends: children that
    /// overlap (improper nesting) are taken from its self time once, so it is never negative.
    stack: Vec<(Host, i64)>,
    thread: u32,
}

impl Walk {
    fn push(&mut self, h: Host, links: &mut Links) {
        if h.thread != self.thread {
            self.stack.clear();
            self.thread = h.thread;
        }
        while let Some((top, _)) = self.stack.last() {
            if top.end >= h.end {
                break;
            }
            if top.end > h.start {
                links.stats.improper_nesting += 1;
            }
            self.stack.pop();
        }
        if let Some((parent, covered)) = self.stack.last_mut() {
            let parent = *parent;
            let from = h.start.max(*covered);
            if !parent.runtime && h.end > from {
                if let Some(s) = links.cpu_self_ns.get_mut(parent.index as usize) {
                    *s -= h.end - from;
                }
            }
            *covered = (*covered).max(h.end);
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
        self.stack.push((h, h.start));
    }
}

fn ops_of_runtime(ev: &Events, links: &mut Links) {
    // Calls outside every `cpu_op` are linked by External id once all are seen: the map then holds
    // only the ids those calls name (a map of every op's id cost more than the rest of the link).
    let mut outside: Vec<usize> = Vec::new();
    for (r, call) in ev.runtime.iter().enumerate() {
        links.stats.runtime_calls += 1;
        let mut c = links.runtime_parent.get(r).copied().unwrap_or(NONE);
        while let Some(cpu) = ev.cpu.get(c as usize) {
            if cpu.kind == CpuKind::Op {
                break;
            }
            c = links.cpu_parent.get(c as usize).copied().unwrap_or(NONE);
        }
        let Some(cpu) = ev.cpu.get(c as usize) else {
            outside.push(r);
            continue;
        };
        links.stats.runtime_op_by_containment += 1;
        if call.external_id >= 0 {
            if cpu.external_id == call.external_id {
                links.stats.external_id_agree += 1;
            } else {
                links.stats.external_id_disagree += 1;
            }
        }
        if let Some(slot) = links.runtime_op.get_mut(r) {
            *slot = c;
        }
    }
    if outside.is_empty() {
        return;
    }
    let external_id = |r: usize| ev.runtime.get(r).map_or(-1, |call| call.external_id);
    // The first `cpu_op` (in file order) with each External id a call outside the ops names.
    let mut op_of: FastMap<i64, u32> = outside
        .iter()
        .map(|&r| external_id(r))
        .filter(|&id| id >= 0)
        .map(|id| (id, NONE))
        .collect();
    let mut missing = op_of.len();
    for (i, cpu) in ev.cpu.iter().enumerate() {
        if missing == 0 {
            break;
        }
        if cpu.kind != CpuKind::Op || cpu.external_id < 0 {
            continue;
        }
        if let Some(slot) = op_of.get_mut(&cpu.external_id) {
            if *slot == NONE {
                *slot = idx(i);
                missing -= 1;
            }
        }
    }
    for r in outside {
        match op_of.get(&external_id(r)) {
            Some(&op) if op != NONE => {
                links.stats.runtime_op_by_external_id += 1;
                if let Some(slot) = links.runtime_op.get_mut(r) {
                    *slot = op;
                }
            }
            _ => links.stats.runtime_without_op += 1,
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

/// [`check_flows`] through the links, when no two calls share a correlation id: a call is the one
/// its id names, and a GPU event with that id is one of the call's; calls without an id and GPU
/// events no call launched (few) go into a set. The same count without a set of every call and GPU
/// event (tens of MB at 1 GB of trace).
fn check_flows_by_correlation(
    ev: &Events,
    links: &Links,
    by_correlation: &FastMap<i64, u32>,
) -> (u64, u64) {
    if ev.flows.is_empty() {
        return (0, 0);
    }
    let unlinked_gpu = ev
        .gpu
        .iter()
        .zip(&links.gpu_runtime)
        .filter(|(_, &r)| r == NONE)
        .map(|(g, _)| (g.correlation, g.start));
    let others: HashSet<(i64, i64), BuildHasherDefault<FastHasher>> = ev
        .runtime
        .iter()
        .filter(|c| c.correlation < 0)
        .map(|c| (c.correlation, c.start))
        .chain(unlinked_gpu)
        .collect();
    let on_call = |id: i64, ts: i64| {
        let Some(&r) = by_correlation.get(&id).filter(|_| id >= 0) else {
            return false;
        };
        ev.runtime.get(r as usize).is_some_and(|c| c.start == ts)
            || links
                .gpu_of_runtime(r as usize)
                .iter()
                .any(|&g| ev.gpu.get(g as usize).is_some_and(|e| e.start == ts))
    };
    let matching = ev
        .flows
        .iter()
        .filter(|f| on_call(f.id, f.ts) || others.contains(&(f.id, f.ts)))
        .count();
    (ev.flows.len() as u64, matching as u64)
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

#[cfg(test)]
#[path = "tests_links.rs"]
mod tests;
