//! The critical path of each step: the chain of dependencies that ends when the step's last event
//! ends, walked backwards from that event by always taking the dependency that released it last.
//!
//! Dependencies (edges):
//! * `host_order`: a call follows the previous call of its thread (the host time between them is
//!   CPU work: Python, the framework, calls that neither launch nor wait);
//! * `launch`: a GPU operation follows the call that launched it (the time from the call's end to
//!   the operation's start, when positive, is idle: the operation was queued or in flight);
//! * `stream_order`: an operation follows the previous operation of its stream (idle between them:
//!   the stream waited for something else);
//! * `sync_wait`: a synchronizing call's end follows the end of the GPU operation it waited for (the
//!   operation of its process that ended last while the call ran; the rest of the call after it is
//!   sync time).
//!
//! An operation's predecessor is whichever of its stream predecessor's end and its launch (the
//! call's end, or the operation's start when it began before its call returned) came later. The walk
//! stops at the step's start; every nanosecond from there to the step's end is attributed once, to
//! `cpu`, `launch`, `gpu_compute`, `gpu_memory`, `sync` or `idle`.

use super::activity::{Activity, CallKind, GpuOp, NONE};
use super::iterations::Row;
use std::collections::VecDeque;

/// What a stretch of the path was spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Cpu,
    Launch,
    GpuCompute,
    GpuMemory,
    Sync,
    Idle,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::Cpu,
        Category::Launch,
        Category::GpuCompute,
        Category::GpuMemory,
        Category::Sync,
        Category::Idle,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Cpu => "cpu",
            Category::Launch => "launch",
            Category::GpuCompute => "gpu_compute",
            Category::GpuMemory => "gpu_memory",
            Category::Sync => "sync",
            Category::Idle => "idle",
        }
    }
}

/// How a stretch follows the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The first stretch of the step.
    Start,
    HostOrder,
    Launch,
    StreamOrder,
    SyncWait,
}

impl Edge {
    pub fn as_str(self) -> &'static str {
        match self {
            Edge::Start => "start",
            Edge::HostOrder => "host_order",
            Edge::Launch => "launch",
            Edge::StreamOrder => "stream_order",
            Edge::SyncWait => "sync_wait",
        }
    }
}

/// What a stretch was: an operation, a call, or the gap before one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    Op(u32),
    Call(u32),
    /// Host time between two calls of a thread (the thread).
    HostGap(u32),
    /// GPU idle before an operation (the operation).
    GpuWait(u32),
}

/// One stretch of a critical path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub start: i64,
    pub end: i64,
    pub category: Category,
    pub node: Node,
    /// How this stretch follows the previous one on the path.
    pub edge: Edge,
}

/// The critical path of one step: what it spent per category, and the stretches kept of it.
#[derive(Debug, Clone)]
pub struct Path {
    /// Index of the step's row.
    pub row: usize,
    pub start: i64,
    pub end: i64,
    /// Time per category, in [`Category::ALL`] order.
    pub totals: [i64; 6],
    /// Stretches on operations and on calls.
    pub ops: usize,
    pub calls: usize,
    /// Stretches in all (`segments` holds the earliest of them, as many as were asked for).
    pub count: usize,
    /// The earliest stretches, in time order; all of them tile `start..end`.
    pub segments: Vec<Segment>,
}

impl Path {
    pub fn total(&self, c: Category) -> i64 {
        self.totals.get(c as usize).copied().unwrap_or(0)
    }
}

/// Which stretches a path keeps (a path can have millions: only those a table shows are kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Every stretch of every path.
    All,
    /// The first `n` stretches in table order (paths in row order, each in time order).
    Head(usize),
    /// Every stretch of the paths whose row's `index` is this, none of the others.
    Row(usize),
}

/// Stretches as the walk finds them, latest first: summed as they come, the earliest `keep` kept.
struct Recorder {
    w0: i64,
    keep: usize,
    totals: [i64; 6],
    ops: usize,
    calls: usize,
    count: usize,
    /// Latest first; when full, the latest is dropped for each earlier one.
    kept: VecDeque<Segment>,
}

impl Recorder {
    fn new(w0: i64, keep: usize) -> Self {
        Self {
            w0,
            keep,
            totals: [0; 6],
            ops: 0,
            calls: 0,
            count: 0,
            kept: VecDeque::new(),
        }
    }

    fn push(&mut self, start: i64, end: i64, category: Category, node: Node, edge: Edge) {
        let start = start.max(self.w0);
        if end <= start {
            return;
        }
        if let Some(t) = self.totals.get_mut(category as usize) {
            *t += end - start;
        }
        match node {
            Node::Op(_) => self.ops += 1,
            Node::Call(_) => self.calls += 1,
            Node::HostGap(_) | Node::GpuWait(_) => {}
        }
        self.count += 1;
        if self.keep == 0 {
            return;
        }
        if self.kept.len() == self.keep {
            self.kept.pop_front();
        }
        self.kept.push_back(Segment {
            start,
            end,
            category,
            node,
            edge,
        });
    }

    fn finish(self, row: usize, start: i64, end: i64) -> Path {
        let mut segments: Vec<Segment> = self.kept.into_iter().rev().collect();
        // The earliest stretch (kept whenever any is) begins the path, whatever led into it.
        if let Some(first) = segments.first_mut() {
            first.edge = Edge::Start;
        }
        Path {
            row,
            start,
            end,
            totals: self.totals,
            ops: self.ops,
            calls: self.calls,
            count: self.count,
            segments,
        }
    }
}

/// What the walk looks up: each operation's stream predecessor, each process's operations by end,
/// where each thread's calls begin.
pub struct Graph<'a> {
    a: &'a Activity,
    prev_on_lane: Vec<u32>,
    /// Per process: operation indices sorted by end.
    by_end: Vec<Vec<u32>>,
}

impl<'a> Graph<'a> {
    pub fn new(a: &'a Activity) -> Self {
        let mut prev_on_lane = vec![NONE; a.ops.len()];
        let mut by_lane: Vec<Vec<u32>> = vec![Vec::new(); a.lanes.len()];
        for (i, op) in a.ops.iter().enumerate() {
            if let Some(list) = by_lane.get_mut(op.lane as usize) {
                list.push(super::activity::index(i));
            }
        }
        let start_of = |i: &u32| a.ops.get(*i as usize).map(|o| (o.start, o.end));
        for list in &mut by_lane {
            list.sort_by_key(start_of);
            for w in list.windows(2) {
                if let [p, n] = w {
                    if let Some(slot) = prev_on_lane.get_mut(*n as usize) {
                        *slot = *p;
                    }
                }
            }
        }
        let mut by_end: Vec<Vec<u32>> = vec![Vec::new(); a.processes.len()];
        for (i, op) in a.ops.iter().enumerate() {
            if let Some(list) = by_end.get_mut(a.lane(op).process as usize) {
                list.push(super::activity::index(i));
            }
        }
        for list in &mut by_end {
            list.sort_by_key(|i| a.ops.get(*i as usize).map(|o| o.end));
        }
        Self {
            a,
            prev_on_lane,
            by_end,
        }
    }

    fn op(&self, i: u32) -> Option<&GpuOp> {
        self.a.ops.get(i as usize)
    }

    /// The operation a synchronizing call waited for: the one of its process that ended last at or
    /// before `t`, after the call began.
    pub fn waited_for(&self, call: u32, t: i64) -> Option<u32> {
        let c = self.a.call(call)?;
        let list = self
            .by_end
            .get(self.a.process_of_thread(c.thread) as usize)?;
        let upto = list.partition_point(|&i| self.op(i).is_some_and(|o| o.end <= t));
        let last = *list.get(upto.checked_sub(1)?)?;
        (self.op(last)?.end > c.start).then_some(last)
    }

    /// The previous call of the same thread.
    fn prev_call(&self, call: u32) -> Option<u32> {
        let c = self.a.call(call)?;
        let p = call.checked_sub(1)?;
        (self.a.call(p)?.thread == c.thread).then_some(p)
    }
}

/// The critical path of each row, `rows[k]` running from its host start to the next row's (of the
/// same device and source), keeping the stretches `keep` asks for.
pub fn paths(a: &Activity, rows: &[&Row], keep: Keep) -> Vec<Path> {
    let g = Graph::new(a);
    let mut out = Vec::with_capacity(rows.len());
    let mut budget = match keep {
        Keep::Head(n) => n,
        Keep::All | Keep::Row(_) => usize::MAX,
    };
    for (k, row) in rows.iter().enumerate() {
        let Some(w0) = row.host_start else { continue };
        let next = rows
            .get(k + 1)
            .filter(|n| n.device == row.device)
            .and_then(|n| n.host_start)
            .unwrap_or(i64::MAX);
        let wanted = match keep {
            Keep::Row(r) if row.index != r => 0,
            _ => budget,
        };
        if let Some(path) = path_of(&g, row, w0, next, k, wanted) {
            budget -= path.segments.len().min(budget);
            out.push(path);
        }
    }
    out
}

/// The event that ends a step: the latest end among its operations and the calls of the threads
/// that launched them (or hold its range) made in `w0..w1`.
fn terminal(g: &Graph<'_>, row: &Row, w0: i64, w1: i64) -> Option<(Node, i64)> {
    let a = g.a;
    let mut best: Option<(Node, i64)> = None;
    let mut consider = |node: Node, end: i64| {
        if best.is_none_or(|(_, e)| end > e) {
            best = Some((node, end));
        }
    };
    let mut threads: Vec<u32> = row
        .ops
        .iter()
        .filter_map(|&i| a.ops.get(i as usize))
        .filter_map(|op| a.call(op.call).map(|c| c.thread))
        .chain(row.thread)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    for &i in &row.ops {
        if let Some(op) = a.ops.get(i as usize) {
            consider(Node::Op(i), op.end);
        }
    }
    for t in threads {
        let from = a.calls.partition_point(|c| (c.thread, c.start) < (t, w0));
        let to = a.calls.partition_point(|c| (c.thread, c.start) < (t, w1));
        for (k, c) in a.calls.get(from..to).unwrap_or_default().iter().enumerate() {
            consider(Node::Call(super::activity::index(from + k)), c.end);
        }
    }
    best
}

fn path_of(g: &Graph<'_>, row: &Row, w0: i64, w1: i64, index: usize, keep: usize) -> Option<Path> {
    let a = g.a;
    let (mut node, end) = terminal(g, row, w0, w1)?;
    let mut t = end;
    // Stretches are pushed latest first; the earliest one's edge becomes `Start` at the end.
    let mut segs = Recorder::new(w0, keep);
    let limit = a.ops.len() + a.calls.len() + 2;
    for _ in 0..limit {
        if t <= w0 {
            break;
        }
        match node {
            Node::Op(i) => {
                let Some(op) = g.op(i) else { break };
                let category = if op.class.is_memory() {
                    Category::GpuMemory
                } else {
                    Category::GpuCompute
                };
                let start = op.start.min(t);
                let stream = g
                    .prev_on_lane
                    .get(i as usize)
                    .copied()
                    .filter(|&p| p != NONE)
                    .and_then(|p| g.op(p).map(|o| (p, o.end.min(start))));
                let launch = a.call(op.call).map(|c| (op.call, c.end.min(start)));
                let by_stream = match (stream, launch) {
                    (Some((_, s)), Some((_, l))) => s >= l,
                    (Some(_), None) => true,
                    _ => false,
                };
                let (edge, ready, next) = match (by_stream, stream, launch) {
                    (true, Some((p, s)), _) => (Edge::StreamOrder, s, Node::Op(p)),
                    (false, _, Some((c, l))) => (Edge::Launch, l, Node::Call(c)),
                    _ => {
                        segs.push(start, t, category, node, Edge::Start);
                        segs.push(w0, start, Category::Idle, Node::GpuWait(i), Edge::Start);
                        t = w0;
                        break;
                    }
                };
                segs.push(start, t, category, node, edge);
                segs.push(ready, start, Category::Idle, Node::GpuWait(i), edge);
                node = next;
                t = ready;
            }
            Node::Call(c) => {
                let Some(call) = a.call(c) else { break };
                if call.kind == CallKind::Sync {
                    if let Some(w) = g.waited_for(c, t) {
                        let op_end = g.op(w).map_or(t, |o| o.end);
                        segs.push(op_end, t, Category::Sync, node, Edge::SyncWait);
                        node = Node::Op(w);
                        t = op_end.min(t);
                        continue;
                    }
                }
                let category = match call.kind {
                    CallKind::Launch => Category::Launch,
                    CallKind::Sync => Category::Sync,
                };
                let start = call.start.min(t);
                match g
                    .prev_call(c)
                    .and_then(|p| a.call(p).map(|pc| (p, pc.end.min(start))))
                {
                    Some((p, ready)) if ready > w0 => {
                        segs.push(start, t, category, node, Edge::HostOrder);
                        segs.push(
                            ready,
                            start,
                            Category::Cpu,
                            Node::HostGap(call.thread),
                            Edge::HostOrder,
                        );
                        node = Node::Call(p);
                        t = ready;
                    }
                    _ => {
                        segs.push(start, t, category, node, Edge::Start);
                        segs.push(
                            w0,
                            start,
                            Category::Cpu,
                            Node::HostGap(call.thread),
                            Edge::Start,
                        );
                        t = w0;
                        break;
                    }
                }
            }
            Node::HostGap(_) | Node::GpuWait(_) => break,
        }
    }
    if t > w0 {
        // The walk ran out of dependencies before the step's start (it cannot on a well-formed
        // capture): the rest is time nothing on the path explains.
        segs.push(w0, t, Category::Idle, node, Edge::Start);
    }
    Some(segs.finish(index, w0.min(end), end))
}
