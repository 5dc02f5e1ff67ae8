//! Busy/idle facts of every device and stream from one pass over the operations in start order:
//! each lane keeps the interval unions it is building (all work, kernels, copies, graphs), the kernels
//! still running (a heap of their ends, as deep as the concurrency) and its gap lengths, so the memory
//! beside the operations is the gaps, never a copy of a lane's intervals.

use super::busy::{clip, gap_stats, Busy, DeviceTimeline, KernelConcurrency, StreamTimeline};
use super::ops::OpKind;
use super::select::Selection;
use super::slim::Slims;
use crate::intervals::{Concurrency, Span};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// The union of intervals fed in start order, as [`crate::intervals::union`] would merge them.
#[derive(Default)]
struct Union {
    open: Option<Span>,
    total: i64,
}

impl Union {
    /// Adds `s` (starts never decrease); when `s` opens a new merged interval after an earlier one,
    /// the idle time between them.
    fn add(&mut self, s: Span) -> Option<i64> {
        if s.is_empty() {
            return None;
        }
        match self.open.as_mut() {
            Some(open) if s.start <= open.end => {
                open.end = open.end.max(s.end);
                None
            }
            Some(open) => {
                let gap = s.start - open.end;
                self.total += open.len();
                *open = s;
                Some(gap)
            }
            None => {
                self.open = Some(s);
                None
            }
        }
    }

    fn total(&self) -> i64 {
        self.total + self.open.map_or(0, |s| s.len())
    }
}

/// [`crate::intervals::concurrency`] of intervals fed in start order: the ends of the running ones
/// wait in a min-heap, and ends at or before a start are swept before it (ends first at equal times).
struct Running {
    ends: BinaryHeap<Reverse<i64>>,
    level: i64,
    prev: Option<i64>,
    out: Concurrency,
}

impl Running {
    fn new() -> Self {
        Self {
            ends: BinaryHeap::new(),
            level: 0,
            prev: None,
            out: Concurrency {
                max: 0,
                busy: 0,
                weighted: 0,
                time_at: Vec::new(),
            },
        }
    }

    fn add(&mut self, s: Span) {
        if s.is_empty() {
            return;
        }
        while let Some(&Reverse(end)) = self.ends.peek() {
            if end > s.start {
                break;
            }
            self.ends.pop();
            self.event(end, -1);
        }
        self.event(s.start, 1);
        self.ends.push(Reverse(s.end));
    }

    fn event(&mut self, t: i64, delta: i64) {
        if let Some(p) = self.prev {
            let width = t - p;
            if width > 0 && self.level >= 0 {
                let k = usize::try_from(self.level).unwrap_or(0);
                if self.out.time_at.len() <= k {
                    self.out.time_at.resize(k + 1, 0);
                }
                if let Some(slot) = self.out.time_at.get_mut(k) {
                    *slot += width;
                }
                if self.level > 0 {
                    self.out.busy += width;
                    self.out.weighted += width * self.level;
                }
            }
        }
        self.level += delta;
        self.out.max = self.out.max.max(u32::try_from(self.level).unwrap_or(0));
        self.prev = Some(t);
    }

    fn finish(mut self) -> Concurrency {
        while let Some(Reverse(end)) = self.ends.pop() {
            self.event(end, -1);
        }
        self.out
    }
}

/// One device's or stream's facts so far.
struct LaneState {
    counts: [u64; 4],
    first: Option<i64>,
    last: Option<i64>,
    all: Union,
    kernels: Union,
    copies: Union,
    graphs: Union,
    running: Running,
    gaps: Vec<i64>,
}

impl LaneState {
    fn new() -> Self {
        Self {
            counts: [0; 4],
            first: None,
            last: None,
            all: Union::default(),
            kernels: Union::default(),
            copies: Union::default(),
            graphs: Union::default(),
            running: Running::new(),
            gaps: Vec::new(),
        }
    }

    fn add(&mut self, span: Span, kind: OpKind) {
        self.first = Some(self.first.map_or(span.start, |f| f.min(span.start)));
        self.last = Some(self.last.map_or(span.end, |l| l.max(span.end)));
        if let Some(gap) = self.all.add(span) {
            self.gaps.push(gap);
        }
        match kind {
            OpKind::Kernel => {
                self.counts[0] += 1;
                self.kernels.add(span);
                self.running.add(span);
            }
            OpKind::Memcpy => {
                self.counts[1] += 1;
                self.copies.add(span);
            }
            OpKind::Memset => {
                self.counts[2] += 1;
                self.copies.add(span);
            }
            OpKind::Graph => {
                self.counts[3] += 1;
                self.kernels.add(span);
                self.graphs.add(span);
                self.running.add(span);
            }
        }
    }

    fn finish(self) -> Busy {
        let span_ns = match (self.first, self.last) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        };
        let busy_ns = self.all.total();
        let (k_ns, c_ns) = (self.kernels.total(), self.copies.total());
        // Every operation is compute or copy: |k ∩ c| = |k| + |c| − |k ∪ c|.
        let overlap = k_ns + c_ns - busy_ns;
        let conc = self.running.finish();
        Busy {
            kernels: self.counts[0],
            memcpys: self.counts[1],
            memsets: self.counts[2],
            graph_executions: self.counts[3],
            span_start_ns: self.first,
            span_end_ns: self.last,
            span_ns,
            busy_ns,
            idle_ns: span_ns - busy_ns,
            busy_pct: if span_ns > 0 {
                busy_ns as f64 * 100.0 / span_ns as f64
            } else {
                0.0
            },
            kernel_busy_ns: k_ns,
            graph_busy_ns: self.graphs.total(),
            copy_busy_ns: c_ns,
            compute_copy_overlap_ns: overlap,
            kernel_only_ns: k_ns - overlap,
            copy_only_ns: c_ns - overlap,
            gaps: gap_stats(self.gaps),
            concurrency: KernelConcurrency {
                max_kernels: conc.max,
                mean_kernels_when_busy: conc.mean_when_busy(),
                time_at_level_ns: conc.time_at,
            },
        }
    }
}

/// Busy/idle facts per device and per stream (devices and streams in id order; a lane with no
/// operation inside the window is left out).
pub fn lanes(slims: &Slims, sel: &Selection) -> Vec<DeviceTimeline> {
    let mut devices: BTreeMap<i64, usize> = BTreeMap::new();
    let mut streams: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    for lane in &slims.lanes {
        devices.insert(lane.device, 0);
        streams.insert((lane.device, lane.stream), 0);
    }
    for (i, slot) in devices.values_mut().enumerate() {
        *slot = i;
    }
    for (i, slot) in streams.values_mut().enumerate() {
        *slot = i;
    }
    // Each (device, stream, process) lane's places in the two state tables.
    let device_at: Vec<usize> = slims
        .lanes
        .iter()
        .map(|l| devices.get(&l.device).copied().unwrap_or(0))
        .collect();
    let stream_at: Vec<usize> = slims
        .lanes
        .iter()
        .map(|l| streams.get(&(l.device, l.stream)).copied().unwrap_or(0))
        .collect();
    let mut device_states: Vec<Option<LaneState>> = devices.keys().map(|_| None).collect();
    let mut stream_states: Vec<Option<LaneState>> = streams.keys().map(|_| None).collect();
    for op in &slims.ops {
        let Some(span) = clip(op.start, op.end, sel) else {
            continue;
        };
        let lane = op.lane as usize;
        for (at, states) in [
            (&device_at, &mut device_states),
            (&stream_at, &mut stream_states),
        ] {
            if let Some(state) = at.get(lane).and_then(|&i| states.get_mut(i)) {
                state.get_or_insert_with(LaneState::new).add(span, op.kind);
            }
        }
    }
    let mut stream_busy: BTreeMap<(i64, i64), Busy> = streams
        .keys()
        .zip(stream_states)
        .filter_map(|(&k, s)| s.map(|s| (k, s.finish())))
        .collect();
    devices
        .keys()
        .zip(device_states)
        .filter_map(|(&device, state)| {
            let busy = state?.finish();
            let keys: Vec<(i64, i64)> = stream_busy
                .range((device, i64::MIN)..=(device, i64::MAX))
                .map(|(k, _)| *k)
                .collect();
            let streams = keys
                .into_iter()
                .filter_map(|k| {
                    stream_busy.remove(&k).map(|busy| StreamTimeline {
                        stream_id: k.1,
                        busy,
                    })
                })
                .collect();
            Some(DeviceTimeline {
                device_id: device,
                busy,
                streams,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intervals;
    use proptest::prelude::*;

    /// The whole-lane computation the sweep replaced: every interval laid out, then unions,
    /// gaps, intersection and concurrency of the lists.
    fn batch(ops: &[(Span, OpKind)]) -> Busy {
        let (mut kernels, mut copies, mut graphs) = (Vec::new(), Vec::new(), Vec::new());
        let mut counts = [0u64; 4];
        for (span, kind) in ops {
            match kind {
                OpKind::Kernel => {
                    counts[0] += 1;
                    kernels.push(*span);
                }
                OpKind::Memcpy => {
                    counts[1] += 1;
                    copies.push(*span);
                }
                OpKind::Memset => {
                    counts[2] += 1;
                    copies.push(*span);
                }
                OpKind::Graph => {
                    counts[3] += 1;
                    kernels.push(*span);
                    graphs.push(*span);
                }
            }
        }
        let span_start = ops.iter().map(|(s, _)| s.start).min();
        let span_end = ops.iter().map(|(s, _)| s.end).max();
        let span_ns = match (span_start, span_end) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        };
        let conc = intervals::concurrency(&kernels);
        let k = intervals::union(kernels);
        let c = intervals::union(copies);
        let g_ns = intervals::total(&intervals::union(graphs));
        let all = intervals::union(ops.iter().map(|(s, _)| *s).collect());
        let busy_ns = intervals::total(&all);
        let k_ns = intervals::total(&k);
        let c_ns = intervals::total(&c);
        let overlap = intervals::intersection_len(&k, &c);
        let gap_lens: Vec<i64> = intervals::gaps(&all).iter().map(Span::len).collect();
        Busy {
            kernels: counts[0],
            memcpys: counts[1],
            memsets: counts[2],
            graph_executions: counts[3],
            span_start_ns: span_start,
            span_end_ns: span_end,
            span_ns,
            busy_ns,
            idle_ns: span_ns - busy_ns,
            busy_pct: if span_ns > 0 {
                busy_ns as f64 * 100.0 / span_ns as f64
            } else {
                0.0
            },
            kernel_busy_ns: k_ns,
            graph_busy_ns: g_ns,
            copy_busy_ns: c_ns,
            compute_copy_overlap_ns: overlap,
            kernel_only_ns: k_ns - overlap,
            copy_only_ns: c_ns - overlap,
            gaps: gap_stats(gap_lens),
            concurrency: KernelConcurrency {
                max_kernels: conc.max,
                mean_kernels_when_busy: conc.mean_when_busy(),
                time_at_level_ns: conc.time_at,
            },
        }
    }

    fn streamed(ops: &[(Span, OpKind)]) -> Busy {
        let mut sorted = ops.to_vec();
        sorted.sort_by_key(|(s, k)| (s.start, s.end, *k));
        let mut state = LaneState::new();
        for (span, kind) in sorted {
            state.add(span, kind);
        }
        state.finish()
    }

    fn kind(k: u8) -> OpKind {
        match k % 4 {
            0 => OpKind::Kernel,
            1 => OpKind::Memcpy,
            2 => OpKind::Memset,
            _ => OpKind::Graph,
        }
    }

    proptest! {
        #[test]
        fn sweep_matches_whole_lane_facts(
            raw in proptest::collection::vec((0i64..200, -5i64..40, 0u8..4), 0..60)
        ) {
            let ops: Vec<(Span, OpKind)> = raw
                .iter()
                .map(|&(s, len, k)| (Span::new(s, s + len), kind(k)))
                .collect();
            let a = serde_json::to_string(&batch(&ops)).unwrap_or_default();
            let b = serde_json::to_string(&streamed(&ops)).unwrap_or_default();
            prop_assert_eq!(a, b);
        }
    }
}
