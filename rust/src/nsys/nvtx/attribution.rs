//! gpuopt's NVTX table (`gpuopt nsys nvtx`): the GPU work launched inside each push/pop range, per
//! range instance or per range tag: kernels, CUDA-graph executions (of a graph-level trace, which
//! `nsys stats nvtx_kern_sum` leaves out), every operation, and the GPU projection.

use super::launches::{launched_queries, ranges_by_thread, sweep_queries, Swept};
use crate::error::Result;
use crate::nsys::fields;
use crate::nsys::hash::IdMap;
use crate::nsys::ops::OpKind;
use crate::nsys::out::{total_i64, Columns};
use crate::nsys::ranges::{load, NvtxData, Range};
use crate::nsys::schema::Schema;
use crate::nsys::select::Selection;
use crate::nsys::strings::Strings;
use crate::table::Table;
use std::collections::BTreeMap;

/// Kernels, or graph executions, launched inside a range: how many, and their summed GPU time
/// inclusive (every enclosing range) and exclusive (the innermost range only).
#[derive(Debug, Clone, Copy, Default)]
struct Timed {
    count: usize,
    inclusive: i128,
    exclusive: i128,
}

impl Timed {
    fn add(&mut self, duration: i64, innermost: bool) {
        self.count += 1;
        self.inclusive += i128::from(duration);
        if innermost {
            self.exclusive += i128::from(duration);
        }
    }

    fn merge(&mut self, other: &Self) {
        self.count += other.count;
        self.inclusive += other.inclusive;
        self.exclusive += other.exclusive;
    }
}

/// The timed work of one range (instance or tag): kernels and CUDA-graph executions apart, never
/// summed into one another (a graph-level trace records an execution, not its kernels).
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    kernels: Timed,
    graphs: Timed,
}

impl Work {
    /// Where an operation of `kind` is counted: kernels and graph executions (memcpys and memsets
    /// count only in `gpu_ops` and the projection).
    fn of(&mut self, kind: OpKind) -> Option<&mut Timed> {
        match kind {
            OpKind::Kernel => Some(&mut self.kernels),
            OpKind::Graph => Some(&mut self.graphs),
            OpKind::Memcpy | OpKind::Memset => None,
        }
    }

    fn merge(&mut self, other: &Self) {
        self.kernels.merge(&other.kernels);
        self.graphs.merge(&other.graphs);
    }
}

/// Per push/pop range instance: the GPU work launched inside it.
#[derive(Debug, Clone, Default)]
struct Instance {
    depth: usize,
    work: Work,
    ops: usize,
    gpu_start: Option<i64>,
    gpu_end: Option<i64>,
}

/// Attribution of GPU work to push/pop ranges, per range instance (`per_instance`) or per range tag.
///
/// A GPU operation belongs to every push/pop range open on its launching thread around its API call
/// (inclusive) and, exclusively, to the innermost one. Kernel time and graph-execution time are
/// summed apart; the GPU projection of a range instance runs from the first start to the last end of
/// the operations (kernels, memcpys, memsets, graph executions) launched inside it.
pub fn attribution(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    per_instance: bool,
) -> Result<Table> {
    let data = load(schema, strings)?;
    let (slims, mut queries) = launched_queries(
        schema,
        strings,
        sel,
        &[
            OpKind::Kernel,
            OpKind::Memcpy,
            OpKind::Memset,
            OpKind::Graph,
        ],
    )?;
    let by_thread = ranges_by_thread(&data, true);
    // Per range: every fact (one row per instance), or only what the per-tag rows sum.
    let n = data.ranges.len();
    let mut inst: Vec<Instance> = if per_instance {
        vec![Instance::default(); n]
    } else {
        Vec::new()
    };
    // Per tag, only the ranges open in the sweep are held; a closed one is summed into its tag.
    let mut open: IdMap<usize, TagInstance> = IdMap::default();
    let mut closed: BTreeMap<u32, TagInstance> = BTreeMap::new();
    // Nesting depth of each range: how many same-thread push/pop ranges enclose it.
    for ids in by_thread.values().filter(|_| per_instance) {
        let mut stack: Vec<i64> = Vec::new();
        for &ri in ids {
            let Some(r) = data.ranges.get(ri) else {
                continue;
            };
            let end = data.close_for_kernels(r.end());
            while stack.last().is_some_and(|&e| e < end) {
                stack.pop();
            }
            if let Some(slot) = inst.get_mut(ri) {
                slot.depth = stack.len();
            }
            stack.push(end);
        }
    }
    let keep = |r: &Range| {
        r.same_thread()
            && r.is_pushpop()
            && sel.keep_cpu(r.start, data.close_for_kernels(r.end()), r.tid)
    };
    // Per tag (index): operations, and kernels and graph executions with their inclusive time, each
    // operation counted once per tag even when ranges of that tag nest.
    let mut tag_work: BTreeMap<u32, TagWork> = BTreeMap::new();
    let mut tags: Vec<u32> = Vec::new();
    // The sweep hands over each operation's ranges in turn: no list of ranges per operation is held.
    sweep_queries(&data, &by_thread, &mut queries, |event| {
        let (q, ranges) = match event {
            Swept::Contained(q, ranges) => (q, ranges),
            Swept::Closed(ri) => {
                if let (Some(i), Some(r)) = (open.remove(&ri), data.ranges.get(ri)) {
                    if keep(r) {
                        closed.entry(r.tag).or_default().merge(&i);
                    }
                }
                return;
            }
        };
        let Some(op) = slims.ops.get(q) else {
            return;
        };
        let duration = op.end - op.start;
        let innermost = ranges
            .iter()
            .copied()
            .max_by_key(|&ri| data.ranges.get(ri).map(|r| (r.start, r.rowid)));
        for &ri in ranges {
            let exclusive = Some(ri) == innermost;
            if !per_instance {
                open.entry(ri)
                    .or_default()
                    .add(op.kind, op.start, op.end, exclusive);
                continue;
            }
            let Some(slot) = inst.get_mut(ri) else {
                continue;
            };
            slot.ops += 1;
            slot.gpu_start = Some(slot.gpu_start.map_or(op.start, |s| s.min(op.start)));
            slot.gpu_end = Some(slot.gpu_end.map_or(op.end, |e| e.max(op.end)));
            if let Some(t) = slot.work.of(op.kind) {
                t.add(duration, exclusive);
            }
        }
        if per_instance {
            return;
        }
        tags.clear();
        tags.extend(
            ranges
                .iter()
                .filter_map(|&ri| data.ranges.get(ri))
                .filter(|r| keep(r))
                .map(|r| r.tag),
        );
        tags.sort_unstable();
        tags.dedup();
        for &t in &tags {
            let w = tag_work.entry(t).or_default();
            w.ops += 1;
            if let Some(timed) = w.work.of(op.kind) {
                timed.add(duration, false);
            }
        }
    });
    if per_instance {
        return instance_table(&data, &inst, &keep);
    }
    tag_table(&data, &closed, &keep, &tag_work)
}

/// What the per-tag rows need of range instances: exclusive kernel and graph-execution time and the
/// GPU projection (of one instance while it is open in the sweep, then summed per tag).
#[derive(Debug, Clone, Copy)]
struct TagInstance {
    /// Exclusive time only (counts and inclusive time come from [`TagWork`]).
    exclusive: Work,
    /// First start and last end of the work launched inside an open instance (`i64::MAX`,
    /// `i64::MIN`: none yet).
    gpu_start: i64,
    gpu_end: i64,
    /// Summed projections of closed instances.
    projected: i128,
}

impl Default for TagInstance {
    fn default() -> Self {
        Self {
            exclusive: Work::default(),
            gpu_start: i64::MAX,
            gpu_end: i64::MIN,
            projected: 0,
        }
    }
}

impl TagInstance {
    fn add(&mut self, kind: OpKind, start: i64, end: i64, exclusive: bool) {
        self.gpu_start = self.gpu_start.min(start);
        self.gpu_end = self.gpu_end.max(end);
        if exclusive {
            if let Some(t) = self.exclusive.of(kind) {
                t.exclusive += i128::from(end - start);
            }
        }
    }

    /// Sums a closed instance into a tag's totals.
    fn merge(&mut self, closed: &Self) {
        self.exclusive.merge(&closed.exclusive);
        if closed.gpu_start <= closed.gpu_end {
            self.projected += i128::from(closed.gpu_end - closed.gpu_start);
        }
    }
}

/// GPU work launched inside the ranges of one tag, each operation once (exclusive time unused).
#[derive(Default)]
struct TagWork {
    ops: usize,
    work: Work,
}

/// The six columns of a [`Work`]: kernels and graph executions, each a count and inclusive and
/// exclusive time.
fn work_columns<'a>(
    columns: Columns,
    work: impl Iterator<Item = &'a Work> + Clone,
) -> Result<Columns> {
    let sum = |t: fn(&Work) -> i128, name: &'static str| -> Result<Vec<i64>> {
        work.clone().map(|w| total_i64(t(w), name)).collect()
    };
    Ok(columns
        .int(
            "kernels",
            work.clone().map(|w| usize_i64(w.kernels.count)).collect(),
        )
        .int(
            "kernel_inclusive_ns",
            sum(|w| w.kernels.inclusive, "kernel_inclusive_ns")?,
        )
        .int(
            "kernel_exclusive_ns",
            sum(|w| w.kernels.exclusive, "kernel_exclusive_ns")?,
        )
        .int(
            "graph_executions",
            work.clone().map(|w| usize_i64(w.graphs.count)).collect(),
        )
        .int(
            "graph_inclusive_ns",
            sum(|w| w.graphs.inclusive, "graph_inclusive_ns")?,
        )
        .int(
            "graph_exclusive_ns",
            sum(|w| w.graphs.exclusive, "graph_exclusive_ns")?,
        ))
}

fn instance_table(
    data: &NvtxData,
    inst: &[Instance],
    keep: &dyn Fn(&Range) -> bool,
) -> Result<Table> {
    let mut rows: Vec<(&Range, &Instance)> = data
        .ranges
        .iter()
        .zip(inst)
        .filter(|(r, _)| keep(r))
        .collect();
    rows.sort_by_key(|(r, _)| (r.start, r.rowid));
    let columns = Columns::of(fields::NVTX_INSTANCES)
        .text(
            "range",
            rows.iter().map(|(r, _)| data.tag(r).to_string()).collect(),
        )
        .int(
            "pid",
            rows.iter()
                .map(|(r, _)| (r.tid >> 24) & 0xFF_FFFF)
                .collect(),
        )
        .int("tid", rows.iter().map(|(r, _)| r.tid & 0xFF_FFFF).collect())
        .int(
            "depth",
            rows.iter().map(|(_, i)| usize_i64(i.depth)).collect(),
        )
        .int("start_ns", rows.iter().map(|(r, _)| r.start).collect())
        .int(
            "end_ns",
            rows.iter()
                .map(|(r, _)| data.close_for_kernels(r.end()))
                .collect(),
        )
        .int(
            "cpu_ns",
            rows.iter()
                .map(|(r, _)| data.close_for_kernels(r.end()) - r.start)
                .collect(),
        );
    work_columns(columns, rows.iter().map(|(_, i)| &i.work))?
        .int(
            "gpu_ops",
            rows.iter().map(|(_, i)| usize_i64(i.ops)).collect(),
        )
        .opt_int(
            "gpu_start_ns",
            rows.iter().map(|(_, i)| i.gpu_start).collect(),
        )
        .opt_int("gpu_end_ns", rows.iter().map(|(_, i)| i.gpu_end).collect())
        .opt_int(
            "gpu_projected_ns",
            rows.iter()
                .map(|(_, i)| Some(i.gpu_end? - i.gpu_start?))
                .collect(),
        )
        .build()
}

#[derive(Default)]
struct TagRow {
    instances: usize,
    cpu: i128,
    /// Counts and inclusive time from [`TagWork`], exclusive time from the closed instances.
    work: Work,
    ops: usize,
    projected: i128,
}

impl TagRow {
    /// Kernel and graph-execution time launched inside the tag's ranges: the order of the rows.
    fn inclusive(&self) -> i128 {
        self.work.kernels.inclusive + self.work.graphs.inclusive
    }
}

fn tag_table(
    data: &NvtxData,
    closed: &BTreeMap<u32, TagInstance>,
    keep: &dyn Fn(&Range) -> bool,
    tag_work: &BTreeMap<u32, TagWork>,
) -> Result<Table> {
    // Summed per tag index first (one string per tag, not per range), then by tag text.
    let mut by_index: BTreeMap<u32, TagRow> = BTreeMap::new();
    for r in data.ranges.iter().filter(|r| keep(r)) {
        let row = by_index.entry(r.tag).or_default();
        row.instances += 1;
        row.cpu += i128::from(data.close_for_kernels(r.end()) - r.start);
    }
    for (t, c) in closed {
        if let Some(row) = by_index.get_mut(t) {
            row.work.merge(&c.exclusive);
            row.projected += c.projected;
        }
    }
    let mut by_tag: BTreeMap<String, TagRow> = BTreeMap::new();
    for (t, row) in by_index {
        let name = data.tags.get(t as usize).cloned().unwrap_or_default();
        let into = by_tag.entry(name).or_default();
        into.instances += row.instances;
        into.cpu += row.cpu;
        into.work.merge(&row.work);
        into.projected += row.projected;
    }
    // Inclusive time per tag counts an operation once even when ranges of that tag nest.
    for (&t, w) in tag_work {
        let Some(name) = data.tags.get(usize::try_from(t).unwrap_or(usize::MAX)) else {
            continue;
        };
        let Some(row) = by_tag.get_mut(name) else {
            continue;
        };
        row.ops += w.ops;
        row.work.merge(&w.work);
    }
    let mut rows: Vec<(String, TagRow)> = by_tag.into_iter().collect();
    rows.sort_by(|a, b| {
        b.1.inclusive()
            .cmp(&a.1.inclusive())
            .then_with(|| a.0.cmp(&b.0))
    });
    let columns = Columns::of(fields::NVTX_RANGES)
        .text("range", rows.iter().map(|r| r.0.clone()).collect())
        .int(
            "instances",
            rows.iter().map(|r| usize_i64(r.1.instances)).collect(),
        )
        .int(
            "cpu_total_ns",
            rows.iter()
                .map(|r| total_i64(r.1.cpu, "cpu_total_ns"))
                .collect::<Result<_>>()?,
        );
    work_columns(columns, rows.iter().map(|r| &r.1.work))?
        .int("gpu_ops", rows.iter().map(|r| usize_i64(r.1.ops)).collect())
        .int(
            "gpu_projected_ns",
            rows.iter()
                .map(|r| total_i64(r.1.projected, "gpu_projected_ns"))
                .collect::<Result<_>>()?,
        )
        .build()
}

fn usize_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
