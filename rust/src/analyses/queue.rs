//! Launch queues: how many operations each stream had launched but not finished, over time, and
//! who waited for whom.
//!
//! An operation is outstanding from the start of the call that launched it (its own start when no
//! call is in the capture) to its end on the GPU. Over a stream's window (first operation start →
//! last operation end), every nanosecond is one of: `busy` (an operation runs), `launch_bound_idle`
//! (nothing runs and nothing is outstanding: the GPU waits for the host to launch), or
//! `queued_idle` (nothing runs but something is launched: the launch is in flight, or the work waits
//! on another stream or event). `host_sync` is the time a synchronizing call waited on the stream
//! (calls attributed to the operation they waited for, as the critical path does). A device's row
//! merges its streams (outstanding = launched on any stream; busy = any stream runs), and its
//! `host_sync` is the union of the synchronizing calls of the processes using it.

use super::activity::{Activity, CallKind};
use super::critical::Graph;
use crate::intervals::{self, Span};
use rayon::slice::ParallelSliceMut;
use std::collections::BTreeMap;

/// Queue facts of one stream (`stream` None: the whole device).
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    pub device: i64,
    pub stream: Option<i64>,
    pub operations: usize,
    pub window: Span,
    pub busy: i64,
    pub launch_bound_idle: i64,
    pub queued_idle: i64,
    pub host_sync: i64,
    pub max_depth: i64,
    /// Time-weighted mean of outstanding operations over the window.
    pub mean_depth: f64,
    /// Operations counted from their own start (no launch call in the capture).
    pub without_call: usize,
}

/// One stretch of constant depth (the queue over time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    pub device: i64,
    pub stream: Option<i64>,
    pub start: i64,
    pub end: i64,
    pub depth: i64,
    pub running: i64,
}

struct Lane {
    device: i64,
    stream: Option<i64>,
    /// Indices into [`Activity::ops`].
    ops: Vec<u32>,
    operations: usize,
    without_call: usize,
    window: Option<Span>,
    sync: Vec<Span>,
}

impl Lane {
    fn new(device: i64, stream: Option<i64>) -> Self {
        Self {
            device,
            stream,
            ops: Vec::new(),
            operations: 0,
            without_call: 0,
            window: None,
            sync: Vec::new(),
        }
    }

    /// (time, Δ outstanding, Δ running) of its operations, in time order (at one instant, ends
    /// before starts before launches).
    fn events(&self, a: &Activity) -> Edges {
        let ops = || self.ops.iter().filter_map(|&i| a.ops.get(i as usize));
        // Three sorted times (8 bytes an operation each) merged as the sweep reads them, rather than
        // one vector of the three kinds of event sorted whole (16 bytes each, and the stable sort's
        // buffer): on a large export this was the command's peak.
        let sorted = |mut times: Vec<i64>| {
            times.par_sort_unstable();
            times
        };
        Edges {
            times: [
                sorted(ops().map(|op| op.end).collect()),
                sorted(ops().map(|op| op.start).collect()),
                sorted(ops().map(|op| a.launched_at(op).min(op.start)).collect()),
            ],
            next: [0; 3],
        }
    }
}

/// A lane's events in time order: its ends, starts and launches (each sorted) merged.
struct Edges {
    times: [Vec<i64>; 3],
    next: [usize; 3],
}

/// (Δ outstanding, Δ running) of an end, a start and a launch: at one instant the ends come first,
/// then the starts, then the launches (the order of these tuples).
const DELTAS: [(i8, i8); 3] = [(-1, -1), (0, 1), (1, 0)];

impl Iterator for Edges {
    type Item = (i64, i8, i8);

    fn next(&mut self) -> Option<(i64, i8, i8)> {
        let (kind, t) = (0..3)
            .filter_map(|k| {
                let at = *self.next.get(k)?;
                Some((k, *self.times.get(k)?.get(at)?))
            })
            .min_by_key(|&(k, t)| (t, k))?;
        if let Some(at) = self.next.get_mut(kind) {
            *at += 1;
        }
        let (d_depth, d_running) = DELTAS.get(kind).copied()?;
        Some((t, d_depth, d_running))
    }
}

/// Queue facts per stream and per device (device rows after their streams), and, with
/// `series`, the depth over time of each.
pub fn queues(a: &Activity, series: bool) -> (Vec<Queue>, Vec<Level>) {
    let mut lanes: BTreeMap<(i64, Option<i64>), Lane> = BTreeMap::new();
    for (i, op) in a.ops.iter().enumerate() {
        let lane = a.lane(op);
        for key in [(lane.device, Some(lane.stream)), (lane.device, None)] {
            let l = lanes.entry(key).or_insert_with(|| Lane::new(key.0, key.1));
            l.ops.push(super::activity::index(i));
            l.operations += 1;
            l.without_call += usize::from(a.call(op.call).is_none());
            let w = l.window.get_or_insert(Span::new(op.start, op.end));
            *w = Span::new(w.start.min(op.start), w.end.max(op.end));
        }
    }
    // Synchronizing calls: per stream, by the operation each waited for; per device, every one of
    // the processes that used the device.
    let g = Graph::new(a);
    let mut processes_of: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    for lane in &a.lanes {
        processes_of
            .entry(lane.device)
            .or_default()
            .push(lane.process);
    }
    for (k, call) in a.calls.iter().enumerate() {
        if call.kind != CallKind::Sync {
            continue;
        }
        let span = Span::new(call.start, call.end);
        let process = a.process_of_thread(call.thread);
        if let Some(op) = g
            .waited_for(super::activity::index(k), call.end)
            .and_then(|i| a.ops.get(i as usize))
        {
            let lane = a.lane(op);
            if let Some(l) = lanes.get_mut(&(lane.device, Some(lane.stream))) {
                l.sync.push(span);
            }
        }
        for (device, processes) in &processes_of {
            if processes.contains(&process) {
                if let Some(l) = lanes.get_mut(&(*device, None)) {
                    l.sync.push(span);
                }
            }
        }
    }
    drop(g);
    let mut out = Vec::with_capacity(lanes.len());
    let mut levels = Vec::new();
    // Streams of a device first, then the device (BTreeMap orders None first: reorder). One lane's
    // events at a time (three per operation).
    let mut keys: Vec<(i64, Option<i64>)> = lanes.keys().copied().collect();
    keys.sort_by_key(|(d, s)| (*d, s.is_none(), *s));
    for key in keys {
        let Some(mut lane) = lanes.remove(&key) else {
            continue;
        };
        let Some(window) = lane.window else { continue };
        let events = lane.events(a);
        lane.ops = Vec::new();
        let facts = sweep(&lane, events, window, series.then_some(&mut levels));
        let sync =
            intervals::covered_within(&intervals::union(std::mem::take(&mut lane.sync)), window);
        out.push(Queue {
            host_sync: sync,
            ..facts
        });
    }
    (out, levels)
}

/// Integrates one lane's events over its window.
fn sweep(
    lane: &Lane,
    events: impl IntoIterator<Item = (i64, i8, i8)>,
    window: Span,
    mut levels: Option<&mut Vec<Level>>,
) -> Queue {
    let (mut depth, mut running, mut max_depth) = (0i64, 0i64, 0i64);
    let (mut busy, mut bound, mut queued, mut area) = (0i64, 0i64, 0i64, 0i128);
    let mut at = i64::MIN;
    let mut emit =
        |from: i64, to: i64, depth: i64, running: i64, levels: &mut Option<&mut Vec<Level>>| {
            let (s, e) = (from.max(window.start), to.min(window.end));
            if e <= s {
                return;
            }
            let len = e - s;
            if running > 0 {
                busy += len;
            } else if depth > 0 {
                queued += len;
            } else {
                bound += len;
            }
            area += i128::from(depth) * i128::from(len);
            if let Some(levels) = levels.as_deref_mut() {
                match levels.last_mut() {
                    Some(last)
                        if last.device == lane.device
                            && last.stream == lane.stream
                            && last.end == s
                            && last.depth == depth
                            && last.running.min(1) == running.min(1) =>
                    {
                        last.end = e;
                    }
                    _ => levels.push(Level {
                        device: lane.device,
                        stream: lane.stream,
                        start: s,
                        end: e,
                        depth,
                        running: running.min(1),
                    }),
                }
            }
        };
    for (t, d_depth, d_running) in events {
        if t > at && at != i64::MIN {
            emit(at, t, depth, running, &mut levels);
        }
        at = t;
        depth += i64::from(d_depth);
        running += i64::from(d_running);
        if t < window.end {
            max_depth = max_depth.max(depth);
        }
    }
    let len = window.len();
    #[allow(clippy::cast_precision_loss)]
    let mean_depth = if len > 0 {
        area as f64 / len as f64
    } else {
        0.0
    };
    Queue {
        device: lane.device,
        stream: lane.stream,
        operations: lane.operations,
        window,
        busy,
        launch_bound_idle: bound,
        queued_idle: queued,
        host_sync: 0,
        max_depth,
        mean_depth,
        without_call: lane.without_call,
    }
}
