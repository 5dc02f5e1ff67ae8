//! Timeline facts per device and per stream: busy time (interval union of kernels, memcpys, memsets
//! and CUDA-graph executions of a graph-level trace), idle time and gaps, kernel concurrency, compute/copy overlap, synchronization, host time
//! blocked in synchronizing calls (`sync.rs`), and launch latency / queue delay.
//!
//! Definitions: the *span* runs from the first operation's start to the last operation's end (after
//! clipping to the window, when one is given); `busy` is the union of operation intervals inside it
//! (a graph execution counts as GPU work on its device and stream, and as compute: a graph-level trace
//! does not say which of its nodes were copies);
//! `idle = span − busy`; a *gap* is a maximal idle interval between two operations. Concurrency counts
//! kernels running at the same instant (back-to-back kernels do not overlap). Host-side times exclude
//! overhead the export attributes to the profiler (`PROFILER_OVERHEAD`, and `CUPTI_ACTIVITY_KIND_OVERHEAD`
//! rows typed "(Profiler)") on the same thread; CUDA's own stalls are reported, never subtracted.

use super::busy::{clip, DeviceTimeline};
use super::coverage::{self, Coverage};
use super::db;
use super::devices::DeviceMap;
use super::fields;
use super::graphs::{self, GraphLaunch};
use super::hash::IdMap;
use super::launch::{self, Launch};
use super::memory::enum_labels;
use super::ops::{self, Op, OpKind};
use super::out::{sum_i64, Columns};
use super::schema::{
    Schema, CUPTI_OVERHEAD, ENUM_MEMCPY_OPER, ENUM_OVERHEAD_TYPE, PROFILER_OVERHEAD,
};
use super::select::Selection;
use super::strings::Strings;
use super::sync::{sync_facts, sync_rows, HostSync, SyncByType, SyncInput};
use super::{slim, sweep};
use crate::error::Result;
use crate::intervals::{self, Span};
use crate::table::Table;
use serde::Serialize;
use std::collections::BTreeMap;

/// The operations that make a device busy.
pub(super) const GPU_WORK: &[OpKind] = &[
    OpKind::Kernel,
    OpKind::Memcpy,
    OpKind::Memset,
    OpKind::Graph,
];

#[derive(Debug, Clone, Serialize)]
pub struct Overhead {
    pub recorded: bool,
    pub intervals: u64,
    pub total_ns: i64,
}

/// Every timeline fact of a selection.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub devices: Vec<DeviceTimeline>,
    pub synchronization: Vec<SyncByType>,
    pub host_sync: Vec<HostSync>,
    pub launch: Vec<Launch>,
    /// Launches of whole CUDA graphs, apart from ordinary kernel launches.
    pub graph_launch: Vec<GraphLaunch>,
    pub profiler_overhead: Overhead,
    pub cuda_overhead: Vec<CudaOverhead>,
    /// GPU activity the facts above do not include (a present table gpuopt does not model).
    pub coverage: Vec<Coverage>,
}

/// Overhead rows the export does not attribute to the profiler (CUDA's own stalls, such as
/// "Command buffer full (CUDA)"): facts about the run, never subtracted from host time.
#[derive(Debug, Clone, Serialize)]
pub struct CudaOverhead {
    /// `ENUM_CUPTI_OVERHEAD_TYPE` label, or `unattributed` when the export names no type.
    pub overhead_type: String,
    pub intervals: u64,
    pub total_ns: i64,
}

/// Profiler overhead intervals per thread (union), for excluding them from host-side times. Only
/// overhead the export attributes to the profiler counts: every `PROFILER_OVERHEAD` row, and the
/// `CUPTI_ACTIVITY_KIND_OVERHEAD` rows whose type label ends in "(Profiler)".
struct OverheadIndex {
    by_thread: IdMap<i64, Vec<Span>>,
    intervals: u64,
    recorded: bool,
    cuda: Vec<(String, Span)>,
}

/// Whether an `ENUM_CUPTI_OVERHEAD_TYPE` label names overhead of the profiler itself.
fn is_profiler_label(label: &str) -> bool {
    label.trim_end().ends_with("(Profiler)")
}

impl OverheadIndex {
    fn load(schema: &Schema) -> Result<Self> {
        let mut raw: IdMap<i64, Vec<Span>> = IdMap::default();
        let mut intervals = 0u64;
        let mut recorded = false;
        let mut cuda = Vec::new();
        let labels = enum_labels(schema, &ENUM_OVERHEAD_TYPE)?;
        for source in [&PROFILER_OVERHEAD, &CUPTI_OVERHEAD] {
            let Some(table) = schema.table(source) else {
                continue;
            };
            recorded = true;
            let name = table.actual.clone();
            let typed =
                source.name == CUPTI_OVERHEAD.name && schema.has_column(source, "overheadType");
            let kind_col = if typed { "overheadType" } else { "NULL" };
            let rows = db::query_all(
                &schema.uri,
                &schema.path,
                &format!("SELECT start, end, globalTid, {kind_col} FROM \"{name}\""),
                |row| {
                    let (s, e) = db::interval(row, 0, 1, &name)?;
                    Ok((
                        db::opt_int(row, 2, &name, "globalTid")?.unwrap_or(0),
                        Span::new(s, e),
                        db::opt_int(row, 3, &name, "overheadType")?,
                    ))
                },
            )?;
            for (tid, span, kind) in rows {
                if source.name == CUPTI_OVERHEAD.name {
                    let label = kind.map(|k| {
                        labels
                            .get(&k)
                            .cloned()
                            .unwrap_or_else(|| format!("unknown ({k})"))
                    });
                    match label {
                        Some(l) if is_profiler_label(&l) => {}
                        Some(l) => {
                            cuda.push((l, span));
                            continue;
                        }
                        None => {
                            cuda.push(("unattributed".to_string(), span));
                            continue;
                        }
                    }
                }
                intervals += 1;
                raw.entry(tid).or_default().push(span);
            }
        }
        let by_thread = raw
            .into_iter()
            .map(|(tid, spans)| (tid, intervals::union(spans)))
            .collect();
        Ok(Self {
            by_thread,
            intervals,
            recorded,
            cuda,
        })
    }

    /// CUDA's own overhead by type, clipped to the window when there is one.
    fn cuda_summary(&self, sel: &Selection) -> Vec<CudaOverhead> {
        let mut by_type: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
        for (label, span) in &self.cuda {
            let clipped = match sel.window {
                Some(w) => span.clip(w),
                None => Some(*span),
            };
            if let Some(s) = clipped {
                let e = by_type.entry(label.as_str()).or_default();
                e.0 += 1;
                e.1 += s.len();
            }
        }
        by_type
            .into_iter()
            .map(|(t, (n, total))| CudaOverhead {
                overhead_type: t.to_string(),
                intervals: n,
                total_ns: total,
            })
            .collect()
    }

    fn within(&self, tid: i64, span: Span) -> i64 {
        self.by_thread
            .get(&tid)
            .map_or(0, |m| intervals::covered_within(m, span))
    }

    fn summary(&self, sel: &Selection) -> Result<Overhead> {
        let total = self
            .by_thread
            .values()
            .flat_map(|m| m.iter())
            .filter_map(|s| match sel.window {
                Some(w) => s.clip(w),
                None => Some(*s),
            })
            .map(|s| s.len());
        Ok(Overhead {
            recorded: self.recorded,
            intervals: self.intervals,
            total_ns: sum_i64(total, "profiler_overhead.total_ns")?,
        })
    }
}

/// The operation's interval, clipped to the window when there is one.
pub(super) fn clipped(op: &Op, sel: &Selection) -> Option<Span> {
    clip(op.start, op.end, sel)
}

/// Computes every timeline fact of the selection. `device_map` gives the export's device map (asked
/// for only when the export has synchronization rows to attribute).
pub fn timeline<'d>(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    device_map: impl FnOnce() -> Result<&'d DeviceMap>,
) -> Result<Timeline> {
    Ok(timeline_and_graphs(schema, strings, sel, false, device_map)?.0)
}

/// [`timeline`] and (`with_graphs`) [`graphs::graphs`] from one read of the operations and one
/// join to their calls: the graph facts come from the executions the timeline finds anyway.
pub fn timeline_and_graphs<'d>(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    with_graphs: bool,
    device_map: impl FnOnce() -> Result<&'d DeviceMap>,
) -> Result<(Timeline, Option<graphs::Graphs>)> {
    let slims = slim::load(schema, strings, sel, GPU_WORK)?;
    let devices = sweep::lanes(&slims, sel);
    let overhead = OverheadIndex::load(schema)?;
    let sync = sync_rows(schema, sel)?;
    // One join (one pass over the runtime calls) of every operation and every synchronization to
    // its call serves ordinary launches, graph launches and host synchronization; the same pass
    // collects the calls of synchronizing APIs.
    let sync_keys: Vec<(i64, i64)> = sync.iter().map(|r| (r.1, r.2)).collect();
    let joined = launch::join(schema, strings, sel, &slims, &sync_keys, |tid, span| {
        overhead.within(tid, span)
    })?;
    drop(slims);
    let launch = joined.launch;
    let sync_calls = joined.sync_calls;
    let executions = graphs::executions(strings, &joined.graph_ops, &joined.graph_calls);
    let graph_launch = graphs::launch_facts(&executions)?;
    let graph_facts = if with_graphs {
        Some(graphs::of_executions(schema, &executions)?)
    } else {
        None
    };
    drop(executions);
    let input = SyncInput {
        rows: &sync,
        calls: &sync_calls,
        api_calls: &joined.sync_api_calls,
    };
    let (synchronization, host_sync) = sync_facts(
        schema,
        strings,
        &input,
        |tid, span| overhead.within(tid, span),
        device_map,
    )?;
    let timeline = Timeline {
        devices,
        synchronization,
        host_sync,
        launch,
        graph_launch,
        profiler_overhead: overhead.summary(sel)?,
        cuda_overhead: overhead.cuda_summary(sel),
        coverage: coverage::timeline(schema)?,
    };
    Ok((timeline, graph_facts))
}

/// One gap: its lane (device, stream or `None` for the device), extent, and the indices (in the loaded
/// operations) of the operations before and after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Gap {
    device: i64,
    stream: Option<i64>,
    start: i64,
    end: i64,
    before: usize,
    after: usize,
}

/// Which gaps a gap list keeps: every gap, or only `k` of them in a heap of at most `k`, so that
/// `--limit K` holds K gaps whatever the order asked for, never all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapKeep {
    All,
    /// The `k` longest, longest first (ties: device, stream, start first).
    Longest(usize),
    /// The first `k` in the table's own order (device, stream with the device's own gaps first, start).
    First(usize),
}

enum GapSink {
    All(Vec<Gap>),
    Longest(
        usize,
        std::collections::BinaryHeap<std::cmp::Reverse<(i64, std::cmp::Reverse<Gap>)>>,
    ),
    First(usize, std::collections::BinaryHeap<Gap>),
}

impl GapSink {
    fn new(keep: GapKeep) -> Self {
        match keep {
            GapKeep::All => GapSink::All(Vec::new()),
            GapKeep::Longest(k) => {
                GapSink::Longest(k, std::collections::BinaryHeap::with_capacity(k + 1))
            }
            GapKeep::First(k) => {
                GapSink::First(k, std::collections::BinaryHeap::with_capacity(k + 1))
            }
        }
    }

    fn push(&mut self, gap: Gap) {
        match self {
            GapSink::All(rows) => rows.push(gap),
            GapSink::Longest(k, heap) => {
                heap.push(std::cmp::Reverse((
                    gap.end - gap.start,
                    std::cmp::Reverse(gap),
                )));
                if heap.len() > *k {
                    heap.pop();
                }
            }
            GapSink::First(k, heap) => {
                heap.push(gap);
                if heap.len() > *k {
                    heap.pop(); // the last in table order
                }
            }
        }
    }

    /// All gaps (or the first K) by (device, stream, start), the lanes' order; the longest K longest
    /// first.
    fn finish(self) -> Vec<Gap> {
        match self {
            GapSink::All(mut rows) => {
                rows.sort_unstable();
                rows
            }
            GapSink::Longest(_, heap) => {
                let mut top: Vec<(i64, std::cmp::Reverse<Gap>)> =
                    heap.into_iter().map(|r| r.0).collect();
                top.sort_unstable_by(|a, b| b.cmp(a));
                top.into_iter().map(|(_, g)| g.0).collect()
            }
            GapSink::First(_, heap) => heap.into_sorted_vec(),
        }
    }
}

/// What the gap list keeps of an operation: its lane, extent, order and name (64 bytes, not an [`Op`]'s
/// 104: the gap list holds every selected operation at once).
#[derive(Debug, Clone, Copy)]
struct GapOp {
    start: i64,
    end: i64,
    device: i64,
    stream: i64,
    rowid: i64,
    name: i64,
    graph: i64,
    kind: OpKind,
}

impl GapOp {
    fn of(op: &Op) -> Self {
        Self {
            start: op.start,
            end: op.end,
            device: op.device,
            stream: op.stream,
            rowid: op.rowid,
            name: op.name,
            graph: op.graph,
            kind: op.kind,
        }
    }
}

/// The gap list: every idle interval between operations, per device (`stream_id` null) and per
/// stream, with the operations on either side; `top = Some(k)`: only the `k` longest, longest first.
///
/// One pass over the operations (sorted by start) keeps, per lane, the end of the work so far and the
/// operation that reached it; gaps hold operation indices, and names are looked up only for the rows
/// written, so memory is the operations plus the gaps kept.
pub fn gaps(schema: &Schema, strings: &Strings, sel: &Selection, keep: GapKeep) -> Result<Table> {
    let all = ops::load_as(schema, strings, sel, GPU_WORK, GapOp::of, |o| {
        (o.start, o.end, o.kind, o.rowid)
    })?;
    let opers = enum_labels(schema, &ENUM_MEMCPY_OPER)?;
    let op_name = |op: &GapOp| -> String {
        match op.kind {
            OpKind::Kernel => strings
                .value(u32::try_from(op.name).unwrap_or(u32::MAX))
                .to_string(),
            OpKind::Memcpy => format!(
                "[CUDA memcpy {}]",
                opers.get(&op.name).map_or("Unknown", String::as_str)
            ),
            OpKind::Memset => "[CUDA memset]".to_string(),
            OpKind::Graph => format!("[CUDA graph {} exec {}]", op.name, op.graph),
        }
    };
    let mut sink = GapSink::new(keep);
    // Per lane: (end of the work so far, index of the operation that reached it).
    let mut lanes: std::collections::HashMap<(i64, Option<i64>), (i64, usize)> =
        std::collections::HashMap::new();
    for (index, op) in all.iter().enumerate() {
        let Some(span) = clip(op.start, op.end, sel) else {
            continue;
        };
        for lane in [(op.device, None), (op.device, Some(op.stream))] {
            match lanes.get_mut(&lane) {
                Some(cur) => {
                    if span.start > cur.0 {
                        sink.push(Gap {
                            device: lane.0,
                            stream: lane.1,
                            start: cur.0,
                            end: span.start,
                            before: cur.1,
                            after: index,
                        });
                    }
                    if span.end > cur.0 {
                        *cur = (span.end, index);
                    }
                }
                None => {
                    lanes.insert(lane, (span.end, index));
                }
            }
        }
    }
    let rows = sink.finish();
    let name_at = |i: usize| all.get(i).map(&op_name).unwrap_or_default();
    Columns::of(fields::GAPS)
        .int("device_id", rows.iter().map(|r| r.device).collect())
        .opt_int("stream_id", rows.iter().map(|r| r.stream).collect())
        .int("start_ns", rows.iter().map(|r| r.start).collect())
        .int("end_ns", rows.iter().map(|r| r.end).collect())
        .int(
            "duration_ns",
            rows.iter().map(|r| r.end - r.start).collect(),
        )
        .text("before", rows.iter().map(|r| name_at(r.before)).collect())
        .text("after", rows.iter().map(|r| name_at(r.after)).collect())
        .build()
}
