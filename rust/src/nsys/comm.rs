//! Communication per device and stream: NCCL/RCCL kernels (by name, [`crate::comm::is_communication`])
//! against the device's compute kernels, by interval union (see `crate::comm` for the definitions).
//!
//! One row per device (`stream` null: every communication stream of the device together) and one row
//! per stream that ran communication (its collectives against all compute of the same device). A
//! device with no communication still gets its device row (zero communication, its compute busy time).

use super::ops::{self, OpKind};
use super::out::Columns;
use super::schema::Schema;
use super::select::Selection;
use super::strings::Strings;
use crate::comm::{is_communication, CommOverlap};
use crate::error::Result;
use crate::intervals::{self, Span};
use crate::table::Table;
use std::collections::BTreeMap;

#[derive(Default)]
struct Device {
    compute: Vec<Span>,
    comm: Vec<Span>,
    comm_by_stream: BTreeMap<i64, Vec<Span>>,
    kernels: u64,
}

/// `device, stream, kernels, comm_kernels, comm_time_ns, comm_busy_ns, compute_busy_ns, overlap_ns,
/// exposed_comm_ns, overlap_pct` (kernel intervals clipped to the window when there is one).
pub fn comm_table(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let kernels = ops::load(schema, strings, sel, &[OpKind::Kernel])?;
    let mut devices: BTreeMap<i64, Device> = BTreeMap::new();
    for k in &kernels {
        let span = Span::new(k.start, k.end);
        let Some(span) = (match sel.window {
            Some(w) => span.clip(w),
            None => Some(span),
        }) else {
            continue;
        };
        let d = devices.entry(k.device).or_default();
        d.kernels += 1;
        let name = strings.value(u32::try_from(k.name).unwrap_or(u32::MAX));
        if is_communication(name) {
            d.comm.push(span);
            d.comm_by_stream.entry(k.stream).or_default().push(span);
        } else {
            d.compute.push(span);
        }
    }
    let mut rows: Vec<(i64, Option<i64>, u64, CommOverlap)> = Vec::new();
    for (id, d) in devices {
        let compute = intervals::union(d.compute);
        rows.push((id, None, d.kernels, CommOverlap::of(&d.comm, &compute)));
        for (stream, spans) in d.comm_by_stream {
            let o = CommOverlap::of(&spans, &compute);
            rows.push((id, Some(stream), o.comm_kernels, o));
        }
    }
    fn count(v: u64) -> i64 {
        i64::try_from(v).unwrap_or(i64::MAX)
    }
    let pick = |f: fn(&CommOverlap) -> i64| rows.iter().map(|r| f(&r.3)).collect::<Vec<i64>>();
    Columns::of(crate::comm::COLUMNS)
        .int("device", rows.iter().map(|r| r.0).collect())
        .opt_int("stream", rows.iter().map(|r| r.1).collect())
        .int("kernels", rows.iter().map(|r| count(r.2)).collect())
        .int("comm_kernels", pick(|o| count(o.comm_kernels)))
        .int("comm_time_ns", pick(|o| o.comm_time_ns))
        .int("comm_busy_ns", pick(|o| o.comm_busy_ns))
        .int("compute_busy_ns", pick(|o| o.compute_busy_ns))
        .int("overlap_ns", pick(|o| o.overlap_ns))
        .int("exposed_comm_ns", pick(|o| o.exposed_comm_ns))
        .float(
            "overlap_pct",
            rows.iter().map(|r| r.3.overlap_pct()).collect(),
        )
        .build()
}
