//! NVTX sums and attribution: `nvtx_sum`, `nvtx_kern_sum` (NVIDIA's reports, cell for cell), and
//! gpuopt's own attribution of GPU work to the push/pop range stack of the thread that launched it
//! ([`attribution`]), over the ranges `ranges.rs` loads.

mod attribution;
mod launches;

pub use attribution::attribution;

use super::describe::Durations;
use super::fields;
use super::hash::IdSet;
use super::ops::{self, Call, Op, OpKind};
use super::out::{pct, total_i64, Columns};
use super::ranges::{load, Range};
use super::schema::Schema;
use super::select::Selection;
use super::strings::Strings;
use crate::error::Result;
use crate::table::Table;
use launches::{containing, ranges_by_thread};
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
    Columns::of(fields::NVTX_SUM)
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
    Columns::of(fields::NVTX_KERN_SUM)
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
