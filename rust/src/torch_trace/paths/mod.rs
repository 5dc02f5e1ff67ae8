//! Call paths (`gpuopt torch paths`): the host stack that launched each GPU event, and per distinct
//! path its inclusive and exclusive CPU and GPU time.
//!
//! A path is the chain of host ranges (`cpu_op`s and `record_function` ranges) enclosing a runtime
//! call on its thread, outermost first (`tree`). A GPU event belongs to the path of the call that
//! launched it (equal correlation ids, as in `links`); a kernel of a CUDA graph replay belongs to
//! the path of the `cudaGraphLaunch` call that replayed it, and its row says `graph_replay`.
//!
//! Per path: `instances` = host ranges with exactly this path; CPU inclusive = their durations, CPU
//! exclusive = their self time (duration − direct children, ranges and calls, as `ops` counts it);
//! GPU exclusive = durations of GPU events launched by calls whose path is this one; GPU inclusive
//! = the same for calls whose path starts with this one (each event counts once per path on its
//! chain). GPU times are sums of durations, not unions.

pub mod fields;
pub mod tree;

use super::columns::{count, int, opt_int, text};
use super::records::{CpuKind, GpuKind, NONE};
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::table::Table;
use std::collections::HashMap;
use tree::{Launch, Tree};

#[derive(Default, Clone, Copy)]
struct Sums {
    instances: usize,
    cpu_inclusive: i64,
    cpu_exclusive: i64,
    gpu_events_inclusive: usize,
    gpu_inclusive: i64,
    gpu_events_exclusive: usize,
    gpu_exclusive: i64,
    graph_events_inclusive: usize,
    graph_inclusive: i64,
}

fn sums(trace: &Trace, tree: &Tree) -> Vec<Sums> {
    let mut out = vec![Sums::default(); tree.nodes.len()];
    for (i, event) in trace.events.cpu.iter().enumerate() {
        if tree::see_through(trace, i) {
            continue;
        }
        let node = tree.of_cpu.get(i).copied().unwrap_or(NONE);
        if let Some(s) = out.get_mut(node as usize) {
            s.instances += 1;
            s.cpu_inclusive += event.end - event.start;
            s.cpu_exclusive += trace.links.cpu_self_ns.get(i).copied().unwrap_or(0);
        }
    }
    for (g, gpu) in trace.events.gpu.iter().enumerate() {
        let (node, launch, _) = tree.of_gpu(trace, g);
        let dur = gpu.end - gpu.start;
        if let Some(s) = out.get_mut(node as usize) {
            s.gpu_events_exclusive += 1;
            s.gpu_exclusive += dur;
        }
        let mut n = node;
        let mut steps = 0;
        while let Some(parent) = tree.nodes.get(n as usize).map(|p| p.parent) {
            if let Some(s) = out.get_mut(n as usize) {
                s.gpu_events_inclusive += 1;
                s.gpu_inclusive += dur;
                if launch == Launch::Graph {
                    s.graph_events_inclusive += 1;
                    s.graph_inclusive += dur;
                }
            }
            n = parent;
            steps += 1;
            if steps > tree.nodes.len() {
                break;
            }
        }
    }
    out
}

fn kind_name(kind: CpuKind) -> &'static str {
    match kind {
        CpuKind::Op => "op",
        CpuKind::Annotation => "annotation",
        CpuKind::Python => "python",
    }
}

/// The path of `node` as text: names outermost first, joined by ` > `.
pub fn path_text(trace: &Trace, tree: &Tree, node: u32) -> String {
    tree.chain(node)
        .iter()
        .filter_map(|&n| tree.nodes.get(n as usize))
        .map(|n| trace.name(n.name))
        .collect::<Vec<_>>()
        .join(" > ")
}

/// Row number (in `preorder`) of every node.
fn numbering(order: &[u32], nodes: usize) -> Vec<i64> {
    let mut out = vec![-1; nodes];
    for (row, &node) in order.iter().enumerate() {
        if let Some(slot) = out.get_mut(node as usize) {
            *slot = count(row);
        }
    }
    out
}

#[derive(Default)]
struct PathRows {
    rank: Vec<i64>,
    id: Vec<i64>,
    parent: Vec<Option<i64>>,
    depth: Vec<i64>,
    kind: Vec<&'static str>,
    name: Vec<String>,
    path: Vec<String>,
    sums: Vec<Sums>,
}

/// `rank, path_id, parent_path_id, depth, kind, name, path, instances, cpu_inclusive_ns,
/// cpu_exclusive_ns, gpu_events_inclusive, gpu_inclusive_ns, gpu_events_exclusive,
/// gpu_exclusive_ns, graph_replay_events_inclusive, graph_replay_inclusive_ns`: one row per
/// distinct path and rank, depth first (a path's children follow it, in order of first start).
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut rows = PathRows::default();
    for trace in &set.traces {
        let tree = tree::build(trace);
        let sums = sums(trace, &tree);
        let order = tree.preorder();
        let ids = numbering(&order, tree.nodes.len());
        for &n in &order {
            let Some(node) = tree.nodes.get(n as usize) else {
                continue;
            };
            rows.rank.push(trace.rank);
            rows.id.push(ids.get(n as usize).copied().unwrap_or(-1));
            rows.parent
                .push(ids.get(node.parent as usize).copied().filter(|&p| p >= 0));
            rows.depth.push(i64::from(node.depth));
            rows.kind.push(kind_name(node.kind));
            rows.name.push(trace.name(node.name).to_owned());
            rows.path.push(path_text(trace, &tree, n));
            rows.sums
                .push(sums.get(n as usize).copied().unwrap_or_default());
        }
    }
    let s = &rows.sums;
    let pick = |f: fn(&Sums) -> i64| int(s.iter().map(f).collect());
    Table::declared(
        fields::PATHS,
        vec![
            ("rank", int(rows.rank)),
            ("path_id", int(rows.id)),
            ("parent_path_id", opt_int(rows.parent)),
            ("depth", int(rows.depth)),
            ("kind", text(&rows.kind)),
            ("name", text(&rows.name)),
            ("path", text(&rows.path)),
            ("instances", pick(|s| count(s.instances))),
            ("cpu_inclusive_ns", pick(|s| s.cpu_inclusive)),
            ("cpu_exclusive_ns", pick(|s| s.cpu_exclusive)),
            (
                "gpu_events_inclusive",
                pick(|s| count(s.gpu_events_inclusive)),
            ),
            ("gpu_inclusive_ns", pick(|s| s.gpu_inclusive)),
            (
                "gpu_events_exclusive",
                pick(|s| count(s.gpu_events_exclusive)),
            ),
            ("gpu_exclusive_ns", pick(|s| s.gpu_exclusive)),
            (
                "graph_replay_events_inclusive",
                pick(|s| count(s.graph_events_inclusive)),
            ),
            ("graph_replay_inclusive_ns", pick(|s| s.graph_inclusive)),
        ],
    )
}

/// One group of GPU events with the same path, call, launch, name and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct LaunchKey {
    path: i64,
    call: u32,
    launch: Launch,
    name: u32,
    kind: GpuKind,
}

/// `rank, path_id, path, call, launch, name, kind, events, gpu_time_ns`: the GPU events of each
/// path, grouped by the runtime call that launched them (`cudaGraphLaunch` for `graph_replay`),
/// their name and kind. GPU events with no path (`path_id` null) come last: launched by a call
/// outside every range (`launch` `direct`/`graph_replay`) or by no call in the trace (`unlinked`).
pub fn kernels_table(set: &TraceSet) -> Result<Table> {
    let mut rank = Vec::new();
    let mut path_id = Vec::new();
    let mut path = Vec::new();
    let mut call = Vec::new();
    let mut launch = Vec::new();
    let mut name = Vec::new();
    let mut kind = Vec::new();
    let mut events = Vec::new();
    let mut time = Vec::new();
    for trace in &set.traces {
        let tree = tree::build(trace);
        let ids = numbering(&tree.preorder(), tree.nodes.len());
        let mut groups: HashMap<LaunchKey, (usize, i64, u32)> = HashMap::new();
        for (g, gpu) in trace.events.gpu.iter().enumerate() {
            let (node, how, call_name) = tree.of_gpu(trace, g);
            let id = ids.get(node as usize).copied().unwrap_or(i64::MAX);
            let key = LaunchKey {
                path: id,
                call: call_name,
                launch: how,
                name: gpu.name,
                kind: gpu.kind,
            };
            let entry = groups.entry(key).or_insert((0, 0, node));
            entry.0 += 1;
            entry.1 += gpu.end - gpu.start;
        }
        let mut keys: Vec<(LaunchKey, (usize, i64, u32))> = groups.into_iter().collect();
        keys.sort_by(|(a, x), (b, y)| {
            (
                a.path,
                std::cmp::Reverse(x.1),
                trace.name(a.name),
                a.launch,
                a.call,
            )
                .cmp(&(
                    b.path,
                    std::cmp::Reverse(y.1),
                    trace.name(b.name),
                    b.launch,
                    b.call,
                ))
        });
        for (key, (n, ns, node)) in keys {
            rank.push(trace.rank);
            path_id.push((key.path != i64::MAX).then_some(key.path));
            path.push((node != NONE).then(|| path_text(trace, &tree, node)));
            call.push((key.call != NONE).then(|| trace.name(key.call).to_owned()));
            launch.push(key.launch.as_str());
            name.push(trace.name(key.name).to_owned());
            kind.push(key.kind.as_str());
            events.push(count(n));
            time.push(ns);
        }
    }
    Table::declared(
        fields::KERNEL_PATHS,
        vec![
            ("rank", int(rank)),
            ("path_id", opt_int(path_id)),
            ("path", super::columns::opt_text(path)),
            ("call", super::columns::opt_text(call)),
            ("launch", text(&launch)),
            ("name", text(&name)),
            ("kind", text(&kind)),
            ("events", int(events)),
            ("gpu_time_ns", int(time)),
        ],
    )
}

#[cfg(test)]
mod tests;
