//! GPU timeline facts: busy/idle per stream and device, idle gaps and their causes, and the
//! HTA-equivalent breakdowns (temporal, idle by cause, kernel type), all exact integer ns.
//!
//! Classes of GPU work (HTA's rules): communication = kernels named `nccl*` or containing `gloo:`;
//! memory = memcpy and memset events; compute = every other kernel.
//!
//! Idle causes (HTA's rules, applied to each gap between busy spans): *host wait* when the runtime call
//! of the event that ends the gap started after the gap began (the host had not yet asked); else
//! *kernel wait* when the gap is shorter than the threshold (30 µs by default, HTA's effective default);
//! else *other*. A gap whose next event has no runtime call cannot be host wait.

use super::columns::{count, float, int, pct, text};
use super::fields;
use super::kernels::is_communication;
use super::records::{GpuEvent, GpuKind, NONE};
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::intervals::{self, Span};
use crate::table::Table;
use serde::Serialize;
use std::collections::BTreeMap;

/// HTA's `consecutive_kernel_delay` default (30, applied to µs timestamps) in nanoseconds.
pub const DEFAULT_KERNEL_WAIT_NS: i64 = 30_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    HostWait,
    KernelWait,
    Other,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::HostWait => "host_wait",
            Cause::KernelWait => "kernel_wait",
            Cause::Other => "other",
        }
    }
}

/// The work class of each name id a kernel may carry (0 compute, 1 communication): the name test
/// once per name, not once per event (kernel names run to hundreds of bytes).
fn kernel_classes(trace: &Trace) -> Vec<u8> {
    trace
        .events
        .strings
        .values
        .iter()
        .map(|name| u8::from(is_communication(name)))
        .collect()
}

/// The work class of a GPU event (0 compute, 1 communication, 2 memory).
fn class(e: &GpuEvent, kernel_classes: &[u8]) -> usize {
    if e.kind == GpuKind::Kernel {
        usize::from(kernel_classes.get(e.name as usize).copied().unwrap_or(0))
    } else {
        2
    }
}

const CLASS_NAMES: [&str; 3] = ["compute", "communication", "memory"];

/// GPU events of one track (a stream, or all streams of a device), sorted by start.
struct Track {
    events: Vec<u32>,
    union: Vec<Span>,
}

impl Track {
    fn new(trace: &Trace, mut events: Vec<u32>) -> Self {
        let gpu = &trace.events.gpu;
        let span = |g: &u32| gpu.get(*g as usize).map_or((0, 0), |e| (e.start, e.end));
        events.sort_unstable_by_key(|g| (span(g), *g));
        let union = intervals::union(
            events
                .iter()
                .map(|g| {
                    let (s, e) = span(g);
                    Span::new(s, e)
                })
                .collect(),
        );
        Track { events, union }
    }

    fn window(&self) -> Option<Span> {
        Some(Span::new(self.union.first()?.start, self.union.last()?.end))
    }

    /// Each gap of the busy union with the event that ends it and its cause.
    fn gaps(&self, trace: &Trace, threshold: i64) -> Vec<(Span, u32, Cause)> {
        let gpu = &trace.events.gpu;
        intervals::gaps(&self.union)
            .into_iter()
            .map(|gap| {
                let (a, b) = (gap.start, gap.end);
                let k = self
                    .events
                    .partition_point(|&g| gpu.get(g as usize).is_some_and(|e| e.start < b));
                let next = self.events.get(k).copied().unwrap_or(NONE);
                let call_start = trace
                    .links
                    .gpu_runtime
                    .get(next as usize)
                    .and_then(|&r| trace.events.runtime.get(r as usize))
                    .map(|r| r.start);
                let cause = match call_start {
                    Some(t) if t > a => Cause::HostWait,
                    _ if b - a < threshold => Cause::KernelWait,
                    _ => Cause::Other,
                };
                (gap, next, cause)
            })
            .collect()
    }
}

fn tracks(trace: &Trace, by_stream: bool) -> BTreeMap<(i64, i64), Vec<u32>> {
    let mut out: BTreeMap<(i64, i64), Vec<u32>> = BTreeMap::new();
    for (g, e) in trace.events.gpu.iter().enumerate() {
        let key = (e.device, if by_stream { e.stream } else { -1 });
        out.entry(key)
            .or_default()
            .push(u32::try_from(g).unwrap_or(NONE));
    }
    out
}

/// Idle time of a track split by cause; the three parts sum to the track's idle time.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct IdleByCause {
    pub kernel_wait_threshold_ns: i64,
    pub host_wait_ns: i64,
    pub kernel_wait_ns: i64,
    pub other_ns: i64,
}

fn idle_by_cause(gaps: &[(Span, u32, Cause)], threshold: i64) -> IdleByCause {
    let mut out = IdleByCause {
        kernel_wait_threshold_ns: threshold,
        ..IdleByCause::default()
    };
    for (gap, _, cause) in gaps {
        let (a, b) = (gap.start, gap.end);
        match cause {
            Cause::HostWait => out.host_wait_ns += b - a,
            Cause::KernelWait => out.kernel_wait_ns += b - a,
            Cause::Other => out.other_ns += b - a,
        }
    }
    out
}

/// HTA's temporal breakdown: the window from the first GPU event's start to the last one's end,
/// split into compute, communication not hidden by compute, memory not hidden by either, and idle.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Temporal {
    pub window_ns: i64,
    pub compute_ns: i64,
    pub communication_ns: i64,
    pub memory_ns: i64,
    pub idle_ns: i64,
}

/// Time during which exactly the named classes were running (HTA's kernel-type overlap states).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelTypeTime {
    /// `compute`, `communication`, `memory`, or a `+`-joined combination running at once.
    pub kind: String,
    pub time_ns: i64,
    /// Share of the device's busy time.
    pub busy_pct: f64,
}

/// Facts of one device's GPU timeline.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeviceTimeline {
    pub device: i64,
    pub streams: usize,
    /// Relative to the trace origin.
    pub first_start_ns: i64,
    pub last_end_ns: i64,
    pub busy_ns: i64,
    pub temporal: Temporal,
    pub idle_by_cause: IdleByCause,
    pub kernel_types: Vec<KernelTypeTime>,
}

/// The per-device facts of one trace (empty when it has no GPU activity).
pub fn devices(trace: &Trace, threshold: i64) -> Vec<DeviceTimeline> {
    let streams: std::collections::BTreeSet<(i64, i64)> = trace
        .events
        .gpu
        .iter()
        .map(|e| (e.device, e.stream))
        .collect();
    let classes = kernel_classes(trace);
    tracks(trace, false)
        .into_iter()
        .filter_map(|((device, _), events)| {
            let track = Track::new(trace, events);
            let Span { start, end } = track.window()?;
            let busy = intervals::total(&track.union);
            let mut spans: [Vec<Span>; 3] = Default::default();
            for e in track
                .events
                .iter()
                .filter_map(|&g| trace.events.gpu.get(g as usize))
            {
                if let Some(class) = spans.get_mut(class(e, &classes)) {
                    class.push(Span::new(e.start, e.end));
                }
            }
            let unions = spans.map(intervals::union);
            let [compute, comm, memory] = &unions;
            let comm_only = intervals::subtract(comm, compute);
            let compute_or_comm = intervals::union([compute.clone(), comm.clone()].concat());
            let memory_only = intervals::subtract(memory, &compute_or_comm);
            let gaps = track.gaps(trace, threshold);
            Some(DeviceTimeline {
                device,
                streams: streams.iter().filter(|(d, _)| *d == device).count(),
                first_start_ns: start - trace.origin(),
                last_end_ns: end - trace.origin(),
                busy_ns: busy,
                temporal: Temporal {
                    window_ns: end - start,
                    compute_ns: intervals::total(compute),
                    communication_ns: intervals::total(&comm_only),
                    memory_ns: intervals::total(&memory_only),
                    idle_ns: end - start - busy,
                },
                idle_by_cause: idle_by_cause(&gaps, threshold),
                kernel_types: kernel_types(&unions, busy),
            })
        })
        .collect()
}

/// Sweeps the three class unions and sums the time spent in each combination of running classes.
fn kernel_types(unions: &[Vec<Span>; 3], busy: i64) -> Vec<KernelTypeTime> {
    // The edges (time, +1 start / -1 end, class) in order: each union's own are already in order
    // (its spans are disjoint), so the three are merged rather than collected and sorted.
    let edge = |c: usize, k: usize| {
        let s = unions.get(c)?.get(k / 2)?;
        Some(if k.is_multiple_of(2) {
            (s.start, 1_i8, c)
        } else {
            (s.end, -1_i8, c)
        })
    };
    let mut next = [0_usize; 3];
    let mut running = [0_i32; 3];
    let mut time_by_mask = [0_i64; 8];
    let mut last = None;
    while let Some((t, delta, c)) = (0..3)
        .filter_map(|c| edge(c, next.get(c).copied().unwrap_or(usize::MAX)))
        .min()
    {
        if let Some(k) = next.get_mut(c) {
            *k += 1;
        }
        if let Some(prev) = last {
            let mask =
                running
                    .iter()
                    .enumerate()
                    .fold(0_usize, |m, (i, &n)| if n > 0 { m | (1 << i) } else { m });
            if let Some(slot) = time_by_mask.get_mut(mask) {
                *slot += t - prev;
            }
        }
        if let Some(n) = running.get_mut(c) {
            *n += i32::from(delta);
        }
        last = Some(t);
    }
    (1..8_usize)
        .filter_map(|mask| {
            let time = time_by_mask.get(mask).copied().unwrap_or(0);
            (time > 0).then(|| KernelTypeTime {
                kind: CLASS_NAMES
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, n)| *n)
                    .collect::<Vec<_>>()
                    .join("+"),
                time_ns: time,
                busy_pct: pct(time, busy),
            })
        })
        .collect()
}

/// `rank, device, stream, kernels, memcpys, memsets, first_start_ns, last_end_ns, window_ns, busy_ns,
/// idle_ns, busy_pct, gaps, largest_gap_ns, host_wait_ns, kernel_wait_ns, other_idle_ns`: one row per
/// stream. `idle_ns` = `window_ns` − `busy_ns` = the three idle causes summed.
pub fn streams_table(set: &TraceSet, threshold: i64) -> Result<Table> {
    let mut c: [Vec<i64>; 16] = Default::default();
    let mut busy_pct = Vec::new();
    for trace in &set.traces {
        for ((device, stream), events) in tracks(trace, true) {
            let track = Track::new(trace, events);
            let Some(Span { start, end }) = track.window() else {
                continue;
            };
            let kinds = |k: GpuKind| {
                count(
                    track
                        .events
                        .iter()
                        .filter(|&&g| {
                            trace
                                .events
                                .gpu
                                .get(g as usize)
                                .is_some_and(|e| e.kind == k)
                        })
                        .count(),
                )
            };
            let gaps = track.gaps(trace, threshold);
            let idle = idle_by_cause(&gaps, threshold);
            let busy = intervals::total(&track.union);
            let values = [
                trace.rank,
                device,
                stream,
                kinds(GpuKind::Kernel),
                kinds(GpuKind::Memcpy),
                kinds(GpuKind::Memset),
                start - trace.origin(),
                end - trace.origin(),
                end - start,
                busy,
                end - start - busy,
                count(gaps.len()),
                gaps.iter().map(|(gap, _, _)| gap.len()).max().unwrap_or(0),
                idle.host_wait_ns,
                idle.kernel_wait_ns,
                idle.other_ns,
            ];
            for (col, v) in c.iter_mut().zip(values) {
                col.push(v);
            }
            busy_pct.push(pct(busy, end - start));
        }
    }
    let [rank, device, stream, kernels, memcpys, memsets, first, last, window, busy, idle, gaps, largest, host, kernel, other] =
        c;
    Table::declared(
        fields::STREAMS,
        vec![
            ("rank", int(rank)),
            ("device", int(device)),
            ("stream", int(stream)),
            ("kernels", int(kernels)),
            ("memcpys", int(memcpys)),
            ("memsets", int(memsets)),
            ("first_start_ns", int(first)),
            ("last_end_ns", int(last)),
            ("window_ns", int(window)),
            ("busy_ns", int(busy)),
            ("idle_ns", int(idle)),
            ("busy_pct", float(busy_pct)),
            ("gaps", int(gaps)),
            ("largest_gap_ns", int(largest)),
            ("host_wait_ns", int(host)),
            ("kernel_wait_ns", int(kernel)),
            ("other_idle_ns", int(other)),
        ],
    )
}

/// `rank, device, stream, start_ns, end_ns, duration_ns, cause, next_kind, next_name`: every idle gap
/// between busy spans of every stream, with the event that ends it.
/// Every idle gap of every stream of a trace: `((device, stream), gap, next GPU event, cause)`, in
/// (device, stream, start) order.
pub fn stream_gaps(trace: &Trace, threshold: i64) -> Vec<((i64, i64), Span, u32, Cause)> {
    let mut out = Vec::new();
    for (key, events) in tracks(trace, true) {
        let track = Track::new(trace, events);
        out.extend(
            track
                .gaps(trace, threshold)
                .into_iter()
                .map(|(gap, next, why)| (key, gap, next, why)),
        );
    }
    out
}

pub fn gaps_table(set: &TraceSet, threshold: i64) -> Result<Table> {
    let mut c: [Vec<i64>; 6] = Default::default();
    let (mut cause, mut next_kind, mut next_name) = (Vec::new(), Vec::new(), Vec::new());
    for trace in &set.traces {
        for ((device, stream), Span { start: a, end: b }, next, why) in
            stream_gaps(trace, threshold)
        {
            for (col, v) in c.iter_mut().zip([
                trace.rank,
                device,
                stream,
                a - trace.origin(),
                b - trace.origin(),
                b - a,
            ]) {
                col.push(v);
            }
            cause.push(why.as_str());
            let next = trace.events.gpu.get(next as usize);
            next_kind.push(next.map_or("", |e| e.kind.as_str()));
            next_name.push(next.map_or("", |e| trace.name(e.name)).to_owned());
        }
    }
    let [rank, device, stream, start, end, duration] = c;
    Table::declared(
        fields::GAPS,
        vec![
            ("rank", int(rank)),
            ("device", int(device)),
            ("stream", int(stream)),
            ("start_ns", int(start)),
            ("end_ns", int(end)),
            ("duration_ns", int(duration)),
            ("cause", text(&cause)),
            ("next_kind", text(&next_kind)),
            ("next_name", text(&next_name)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The breakdown as it was computed before: every edge collected and sorted.
    fn sorted_edges(unions: &[Vec<Span>; 3]) -> [i64; 8] {
        let mut edges: Vec<(i64, i8, usize)> = Vec::new();
        for (c, union) in unions.iter().enumerate() {
            for s in union {
                edges.push((s.start, 1, c));
                edges.push((s.end, -1, c));
            }
        }
        edges.sort_unstable();
        let (mut running, mut time, mut last) = ([0_i32; 3], [0_i64; 8], None);
        for (t, delta, c) in edges {
            if let Some(prev) = last {
                let mask = (0..3)
                    .filter(|&i| running[i] > 0)
                    .fold(0, |m, i| m | (1 << i));
                time[mask] += t - prev;
            }
            running[c] += i32::from(delta);
            last = Some(t);
        }
        time
    }

    proptest! {
        #[test]
        fn merged_edges_give_the_sorted_edges_breakdown(
            spans in prop::collection::vec(prop::collection::vec((0_i64..60, 0_i64..9), 0..12), 3),
        ) {
            let union_of = |s: &Vec<(i64, i64)>| {
                intervals::union(s.iter().map(|&(a, d)| Span::new(a, a + d)).collect())
            };
            let unions = [union_of(&spans[0]), union_of(&spans[1]), union_of(&spans[2])];
            let busy = 1000;
            let want = sorted_edges(&unions);
            let got = kernel_types(&unions, busy);
            let expected: Vec<(String, i64)> = (1..8_usize)
                .filter(|&m| want[m] > 0)
                .map(|m| {
                    let kind = (0..3)
                        .filter(|i| m & (1 << i) != 0)
                        .map(|i| CLASS_NAMES[i])
                        .collect::<Vec<_>>()
                        .join("+");
                    (kind, want[m])
                })
                .collect();
            let got: Vec<(String, i64)> = got.into_iter().map(|k| (k.kind, k.time_ns)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
