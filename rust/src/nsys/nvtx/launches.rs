//! Launch calls placed among the NVTX ranges of their thread: one sweep per thread over the calls in
//! start order, reporting for each call the same-thread ranges that contain it (the launch-attribution
//! rule of `nsys stats nvtx_kern_sum`), and each range once no later call can fall in it.

use crate::error::Result;
use crate::nsys::hash::IdMap;
use crate::nsys::ops::{self, Call, OpKind};
use crate::nsys::ranges::NvtxData;
use crate::nsys::schema::Schema;
use crate::nsys::select::Selection;
use crate::nsys::slim::{self, Slims};
use crate::nsys::strings::Strings;
use rayon::prelude::*;

/// Same-thread ranges (`endGlobalTid` NULL) per thread, sorted by start: indices into `ranges`.
pub(super) fn ranges_by_thread(data: &NvtxData, pushpop_only: bool) -> IdMap<i64, Vec<usize>> {
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
pub(super) fn containing(
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
pub(super) struct Query {
    tid: i64,
    start: i64,
    end: i64,
    at: u32,
}

/// For each query, the ranges of its thread that contain it, found by one sweep per thread (the
/// queries are sorted by thread and start in place): `found(at, ranges)`, skipping queries no range
/// contains.
pub(super) fn sweep_queries<F>(
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
pub(super) enum Swept<'a> {
    Contained(usize, &'a [usize]),
    Closed(usize),
}

/// The selected operations of `kinds` and, for those whose launch call is in the export, the call
/// as a query (32 bytes each: no whole call or operation record per operation).
pub(super) fn launched_queries(
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
