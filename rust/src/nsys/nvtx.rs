//! NVTX sums and attribution: `nvtx_sum`, `nvtx_kern_sum`, and attribution of GPU work to the push/pop
//! range stack of the thread that launched it, over the ranges `ranges.rs` loads.

use super::describe::Durations;
use super::hash::{IdMap, IdSet};
use super::ops::{self, Call, Op, OpKind};
use super::out::{pct, total_i64, Columns};
use super::ranges::{load, NvtxData, Range};
use super::schema::Schema;
use super::select::Selection;
use super::slim::{self, Slims};
use super::strings::Strings;
use crate::error::Result;
use crate::table::Table;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// `nvtx_sum`: range durations grouped by (tag, style), sorted by total time.
pub fn nvtx_sum(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let data = load(schema, strings)?;
    let mut groups: BTreeMap<(u32, &'static str), Durations> = BTreeMap::new();
    for r in &data.ranges {
        let end = data.close_for_sum(r.end());
        if sel.keep_cpu(r.start, end, r.tid) {
            groups
                .entry((r.tag, r.style()))
                .or_default()
                .push(end - r.start);
        }
    }
    let mut rows: Vec<(String, &'static str, super::describe::Summary)> = groups
        .into_iter()
        .filter_map(|((tag, style), d)| {
            let tag = data.tags.get(usize::try_from(tag).ok()?)?.clone();
            Some((tag, style, d.describe()?))
        })
        .collect();
    rows.sort_by(|a, b| {
        b.2.total
            .cmp(&a.2.total)
            .then_with(|| a.0.cmp(&b.0))
            .then_with(|| a.1.cmp(b.1))
    });
    let grand: i128 = rows.iter().map(|r| r.2.total).sum();
    Columns::default()
        .float(
            "time_pct",
            rows.iter().map(|r| pct(r.2.total, grand)).collect(),
        )
        .int(
            "total_time_ns",
            rows.iter()
                .map(|r| total_i64(r.2.total, "total_time_ns"))
                .collect::<Result<_>>()?,
        )
        .int(
            "instances",
            rows.iter().map(|r| count_i64(r.2.count)).collect(),
        )
        .float("avg_ns", rows.iter().map(|r| r.2.mean).collect())
        .float("med_ns", rows.iter().map(|r| r.2.median).collect())
        .int("min_ns", rows.iter().map(|r| r.2.min).collect())
        .int("max_ns", rows.iter().map(|r| r.2.max).collect())
        .float("stddev_ns", rows.iter().map(|r| r.2.stddev).collect())
        .text("style", rows.iter().map(|r| r.1.to_string()).collect())
        .text("range", rows.iter().map(|r| r.0.clone()).collect())
        .build()
}

pub fn count_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Same-thread ranges (`endGlobalTid` NULL) per thread, sorted by start: indices into `ranges`.
fn ranges_by_thread(data: &NvtxData, pushpop_only: bool) -> IdMap<i64, Vec<usize>> {
    let mut by: IdMap<i64, Vec<usize>> = IdMap::default();
    for (i, r) in data.ranges.iter().enumerate() {
        if r.same_thread() && (!pushpop_only || r.is_pushpop()) {
            by.entry(r.tid).or_default().push(i);
        }
    }
    for v in by.values_mut() {
        v.sort_unstable_by_key(|&i| data.ranges.get(i).map(|r| (r.start, r.rowid)));
    }
    by
}

/// For every call (by index into `calls`), the ranges on its thread that contain it
/// (`range.start <= call.start && call.end <= range.end`), found by one sweep per thread.
fn containing(
    data: &NvtxData,
    by_thread: &IdMap<i64, Vec<usize>>,
    calls: &[Option<Call>],
) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); calls.len()];
    each_containing(data, by_thread, calls, |q, ranges| {
        if let Some(slot) = out.get_mut(q) {
            slot.extend_from_slice(ranges);
        }
    });
    out
}

/// [`containing`], handing each call's ranges to `found(call index, ranges)` as the sweep finds them
/// (calls with no containing range are skipped) instead of holding a list per call.
fn each_containing<F>(
    data: &NvtxData,
    by_thread: &IdMap<i64, Vec<usize>>,
    calls: &[Option<Call>],
    mut found: F,
) where
    F: FnMut(usize, &[usize]),
{
    let mut queries: Vec<Query> = calls
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let c = c.as_ref()?;
            Some(Query {
                tid: c.global_tid,
                start: c.start,
                end: c.end,
                at: u32::try_from(i).ok()?,
            })
        })
        .collect();
    sweep_queries(data, by_thread, &mut queries, |event| {
        if let Swept::Contained(q, ranges) = event {
            found(q, ranges);
        }
    });
}

/// A call to place among the ranges of its thread, and what it launched (`at`, an index).
#[derive(Debug, Clone, Copy)]
struct Query {
    tid: i64,
    start: i64,
    end: i64,
    at: u32,
}

/// For each query, the ranges of its thread that contain it, found by one sweep per thread (the
/// queries are sorted by thread and start in place): `found(at, ranges)`, skipping queries no range
/// contains.
fn sweep_queries<F>(
    data: &NvtxData,
    by_thread: &IdMap<i64, Vec<usize>>,
    queries: &mut [Query],
    mut on: F,
) where
    F: FnMut(Swept<'_>),
{
    queries.par_sort_unstable_by_key(|q| (q.tid, q.start));
    let mut hits: Vec<usize> = Vec::new();
    for thread in queries.chunk_by(|a, b| a.tid == b.tid) {
        let Some(ranges) = thread.first().and_then(|q| by_thread.get(&q.tid)) else {
            continue;
        };
        let mut next = 0usize;
        let mut active: Vec<usize> = Vec::new();
        for call in thread {
            while let Some(&ri) = ranges.get(next) {
                match data.ranges.get(ri) {
                    Some(r) if r.start <= call.start => {
                        active.push(ri);
                        next += 1;
                    }
                    _ => break,
                }
            }
            active.retain(|&ri| {
                let open = data
                    .ranges
                    .get(ri)
                    .is_some_and(|r| data.close_for_kernels(r.end()) >= call.start);
                if !open {
                    on(Swept::Closed(ri));
                }
                open
            });
            hits.clear();
            hits.extend(active.iter().copied().filter(|&ri| {
                data.ranges
                    .get(ri)
                    .is_some_and(|r| data.close_for_kernels(r.end()) >= call.end)
            }));
            if !hits.is_empty() {
                on(Swept::Contained(call.at as usize, &hits));
            }
        }
        for ri in active.drain(..) {
            on(Swept::Closed(ri));
        }
    }
}

/// What [`sweep_queries`] reports: a query and the ranges that contain it; a range that no later
/// query of its thread can fall in.
enum Swept<'a> {
    Contained(usize, &'a [usize]),
    Closed(usize),
}

/// The selected operations of `kinds` and, for those whose launch call is in the export, the call
/// as a query (32 bytes each: no whole call or operation record per operation).
fn launched_queries(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    kinds: &[OpKind],
) -> Result<(Slims, Vec<Query>)> {
    let slims = slim::load(schema, strings, sel, kinds)?;
    let parts = ops::join_each(
        schema,
        strings,
        slims.ops.len(),
        |i| {
            slims
                .ops
                .get(i)
                .map_or((0, 0), |op| (slims.lane(op).global_pid, op.correlation))
        },
        Vec::new,
        |acc: &mut Vec<Query>, i, call| {
            acc.push(Query {
                tid: call.global_tid,
                start: call.start,
                end: call.end,
                at: u32::try_from(i).unwrap_or(u32::MAX),
            });
            Ok(())
        },
    )?;
    let mut queries = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for part in parts {
        queries.extend(part);
    }
    Ok((slims, queries))
}

/// Kernels with their launching call, for the NVTX joins.
struct Launched {
    ops: Vec<Op>,
    calls: Vec<Option<Call>>,
}

fn launched(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    kinds: &[OpKind],
) -> Result<Launched> {
    let ops = ops::load(schema, strings, sel, kinds)?;
    let calls = ops::join_calls(
        schema,
        strings,
        ops.iter().map(|k| (k.global_pid, k.correlation)),
    )?;
    Ok(Launched { ops, calls })
}

/// `nvtx_kern_sum`: kernels grouped by every same-thread range containing their launch call.
pub fn nvtx_kern_sum(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let data = load(schema, strings)?;
    // Without NVTX data nsys skips the report; kernels are not listed under an empty range.
    let l = if data.present {
        launched(schema, strings, sel, &[OpKind::Kernel])?
    } else {
        Launched {
            ops: Vec::new(),
            calls: Vec::new(),
        }
    };
    let by_thread = ranges_by_thread(&data, false);
    let hits = containing(&data, &by_thread, &l.calls);
    // Group key: (range tag or None, style, pid, tid, kernel name).
    type Key = (
        Option<u32>,
        Option<&'static str>,
        Option<i64>,
        Option<i64>,
        i64,
    );
    struct Group {
        ranges: IdSet<i64>,
        kernels: usize,
        durations: Durations,
    }
    let mut groups: BTreeMap<Key, Group> = BTreeMap::new();
    for ((k, call), ranges) in l.ops.iter().zip(&l.calls).zip(&hits) {
        let (pid, tid) = match call {
            Some(c) => (
                Some((c.global_tid >> 24) & 0xFF_FFFF),
                Some(c.global_tid & 0xFF_FFFF),
            ),
            None => (None, None),
        };
        let mut seen: Vec<Key> = Vec::new();
        let pairs: Vec<(Option<&Range>, i64)> = if ranges.is_empty() {
            vec![(None, -1)]
        } else {
            ranges
                .iter()
                .filter_map(|&ri| data.ranges.get(ri).map(|r| (Some(r), r.rowid)))
                .collect()
        };
        for (range, rowid) in pairs {
            let key: Key = (
                range.map(|r| r.tag),
                range.map(Range::style),
                pid,
                tid,
                k.name,
            );
            let g = groups.entry(key).or_insert_with(|| Group {
                ranges: IdSet::default(),
                kernels: 0,
                durations: Durations::default(),
            });
            if range.is_some() {
                g.ranges.insert(rowid);
            }
            if !seen.contains(&key) {
                g.kernels += 1;
                seen.push(key);
            }
            g.durations.push(k.duration());
        }
    }
    let mut rows = Vec::new();
    for ((tag, style, pid, tid, kname), g) in groups {
        let Some(s) = g.durations.describe() else {
            continue;
        };
        let tag = tag.and_then(|t| data.tags.get(usize::try_from(t).ok()?).cloned());
        let kname = strings
            .value(u32::try_from(kname).unwrap_or(u32::MAX))
            .to_string();
        rows.push((tag, style, pid, tid, g.ranges.len(), g.kernels, s, kname));
    }
    // nsys: ORDER BY range, pid, tid, total DESC (NULL ranges first); then the kernel name.
    rows.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| a.3.cmp(&b.3))
            .then_with(|| b.6.total.cmp(&a.6.total))
            .then_with(|| a.7.cmp(&b.7))
    });
    Columns::default()
        .opt_text("range", rows.iter().map(|r| r.0.clone()).collect())
        .opt_text(
            "style",
            rows.iter().map(|r| r.1.map(str::to_string)).collect(),
        )
        .opt_int("pid", rows.iter().map(|r| r.2).collect())
        .opt_int("tid", rows.iter().map(|r| r.3).collect())
        .int(
            "nvtx_instances",
            rows.iter()
                .map(|r| i64::try_from(r.4).unwrap_or(i64::MAX))
                .collect(),
        )
        .int(
            "kernel_instances",
            rows.iter()
                .map(|r| i64::try_from(r.5).unwrap_or(i64::MAX))
                .collect(),
        )
        .int(
            "total_time_ns",
            rows.iter()
                .map(|r| total_i64(r.6.total, "total_time_ns"))
                .collect::<Result<_>>()?,
        )
        .float("avg_ns", rows.iter().map(|r| r.6.mean).collect())
        .float("med_ns", rows.iter().map(|r| r.6.median).collect())
        .int("min_ns", rows.iter().map(|r| r.6.min).collect())
        .int("max_ns", rows.iter().map(|r| r.6.max).collect())
        .float("stddev_ns", rows.iter().map(|r| r.6.stddev).collect())
        .text("kernel_name", rows.iter().map(|r| r.7.clone()).collect())
        .build()
}

/// Per push/pop range instance: the GPU work launched inside it.
#[derive(Debug, Clone, Default)]
struct Instance {
    depth: usize,
    kernels: usize,
    kernel_inclusive: i128,
    kernel_exclusive: i128,
    ops: usize,
    gpu_start: Option<i64>,
    gpu_end: Option<i64>,
}

/// Attribution of GPU work to push/pop ranges, per range instance (`per_instance`) or per range tag.
///
/// A GPU operation belongs to every push/pop range open on its launching thread around its API call
/// (inclusive) and, exclusively, to the innermost one. Kernel time is summed; the GPU projection of a
/// range instance runs from the first start to the last end of the operations (kernels, memcpys,
/// memsets) launched inside it.
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
    // Per range: every fact (one row per instance), or only what the per-tag rows sum (24 bytes).
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
    // Per tag (index): operations, kernels and kernel time inclusive, each operation counted once
    // per tag even when ranges of that tag nest.
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
        let innermost = ranges
            .iter()
            .copied()
            .max_by_key(|&ri| data.ranges.get(ri).map(|r| (r.start, r.rowid)));
        for &ri in ranges {
            if !per_instance {
                open.entry(ri).or_default().add(
                    op.start,
                    op.end,
                    op.kind == OpKind::Kernel && Some(ri) == innermost,
                );
                continue;
            }
            let Some(slot) = inst.get_mut(ri) else {
                continue;
            };
            slot.ops += 1;
            slot.gpu_start = Some(slot.gpu_start.map_or(op.start, |s| s.min(op.start)));
            slot.gpu_end = Some(slot.gpu_end.map_or(op.end, |e| e.max(op.end)));
            if op.kind == OpKind::Kernel {
                slot.kernels += 1;
                slot.kernel_inclusive += i128::from(op.end - op.start);
                if Some(ri) == innermost {
                    slot.kernel_exclusive += i128::from(op.end - op.start);
                }
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
            if op.kind == OpKind::Kernel {
                w.kernels += 1;
                w.inclusive += i128::from(op.end - op.start);
            }
        }
    });
    if per_instance {
        return instance_table(&data, &inst, &keep);
    }
    tag_table(&data, &closed, &keep, &tag_work)
}

/// What the per-tag rows need of range instances: exclusive kernel time and GPU projection (of one
/// instance while it is open in the sweep, then summed per tag).
#[derive(Debug, Clone, Copy)]
struct TagInstance {
    exclusive: i128,
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
            exclusive: 0,
            gpu_start: i64::MAX,
            gpu_end: i64::MIN,
            projected: 0,
        }
    }
}

impl TagInstance {
    fn add(&mut self, start: i64, end: i64, exclusive: bool) {
        self.gpu_start = self.gpu_start.min(start);
        self.gpu_end = self.gpu_end.max(end);
        if exclusive {
            self.exclusive += i128::from(end - start);
        }
    }

    /// Sums a closed instance into a tag's totals.
    fn merge(&mut self, closed: &Self) {
        self.exclusive += closed.exclusive;
        if closed.gpu_start <= closed.gpu_end {
            self.projected += i128::from(closed.gpu_end - closed.gpu_start);
        }
    }
}

/// GPU work launched inside the ranges of one tag, each operation once.
#[derive(Default)]
struct TagWork {
    ops: usize,
    kernels: usize,
    inclusive: i128,
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
    Columns::default()
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
        )
        .int(
            "kernels",
            rows.iter().map(|(_, i)| usize_i64(i.kernels)).collect(),
        )
        .int(
            "kernel_inclusive_ns",
            rows.iter()
                .map(|(_, i)| total_i64(i.kernel_inclusive, "kernel_inclusive_ns"))
                .collect::<Result<_>>()?,
        )
        .int(
            "kernel_exclusive_ns",
            rows.iter()
                .map(|(_, i)| total_i64(i.kernel_exclusive, "kernel_exclusive_ns"))
                .collect::<Result<_>>()?,
        )
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
    kernels: usize,
    inclusive: i128,
    exclusive: i128,
    ops: usize,
    projected: i128,
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
            row.exclusive += c.exclusive;
            row.projected += c.projected;
        }
    }
    let mut by_tag: BTreeMap<String, TagRow> = BTreeMap::new();
    for (t, row) in by_index {
        let name = data.tags.get(t as usize).cloned().unwrap_or_default();
        let into = by_tag.entry(name).or_default();
        into.instances += row.instances;
        into.cpu += row.cpu;
        into.exclusive += row.exclusive;
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
        row.kernels += w.kernels;
        row.inclusive += w.inclusive;
    }
    let mut rows: Vec<(String, TagRow)> = by_tag.into_iter().collect();
    rows.sort_by(|a, b| {
        b.1.inclusive
            .cmp(&a.1.inclusive)
            .then_with(|| a.0.cmp(&b.0))
    });
    Columns::default()
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
        )
        .int(
            "kernels",
            rows.iter().map(|r| usize_i64(r.1.kernels)).collect(),
        )
        .int(
            "kernel_inclusive_ns",
            rows.iter()
                .map(|r| total_i64(r.1.inclusive, "kernel_inclusive_ns"))
                .collect::<Result<_>>()?,
        )
        .int(
            "kernel_exclusive_ns",
            rows.iter()
                .map(|r| total_i64(r.1.exclusive, "kernel_exclusive_ns"))
                .collect::<Result<_>>()?,
        )
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
