//! Memory transfers and sets: bytes, time and bandwidth of every memcpy/memset, and totals per name.
//!
//! Bandwidth is computed here as bytes ÷ duration (bytes per ns = GB/s), not copied from Kineto's
//! `memory bandwidth (GB/s)` argument; it is null when the duration is 0 or the bytes are unknown.
//! The name carries the copy kind and memory types (`Memcpy DtoH (Device -> Pageable)`).

use super::columns::{int, opt_float, opt_int, text};
use super::fields;
use super::records::GpuKind;
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::table::Table;
use serde::Serialize;
use std::collections::BTreeMap;

fn bandwidth_gbps(bytes: i64, duration_ns: i64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    (bytes >= 0 && duration_ns > 0).then(|| bytes as f64 / duration_ns as f64)
}

/// Totals of one kind of transfer (`kind`, `name`) in one trace.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TransferTotal {
    pub kind: String,
    pub name: String,
    pub count: usize,
    /// Null when any event of the group does not state its bytes.
    pub bytes: Option<i64>,
    pub duration_ns: i64,
    /// `bytes / duration_ns` over the group.
    pub bandwidth_gbps: Option<f64>,
}

pub fn totals(trace: &Trace) -> Vec<TransferTotal> {
    let mut groups: BTreeMap<(&str, &str), (usize, Option<i64>, i64)> = BTreeMap::new();
    for e in trace
        .events
        .gpu
        .iter()
        .filter(|e| e.kind != GpuKind::Kernel)
    {
        let slot = groups
            .entry((e.kind.as_str(), trace.name(e.name)))
            .or_insert((0, Some(0), 0));
        slot.0 += 1;
        slot.1 = slot.1.and_then(|b| (e.bytes >= 0).then_some(b + e.bytes));
        slot.2 += e.end - e.start;
    }
    groups
        .into_iter()
        .map(|((kind, name), (n, bytes, duration))| TransferTotal {
            kind: kind.to_owned(),
            name: name.to_owned(),
            count: n,
            bytes,
            duration_ns: duration,
            bandwidth_gbps: bytes.and_then(|b| bandwidth_gbps(b, duration)),
        })
        .collect()
}

/// `rank, kind, name, device, stream, start_ns, duration_ns, bytes, bandwidth_gbps`: one row per
/// memcpy/memset, in start order.
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut ints: [Vec<i64>; 5] = Default::default();
    let (mut kind, mut name, mut bytes, mut bandwidth) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for trace in &set.traces {
        let mut rows: Vec<_> = trace
            .events
            .gpu
            .iter()
            .filter(|e| e.kind != GpuKind::Kernel)
            .collect();
        rows.sort_by_key(|e| (e.start, e.end));
        for e in rows {
            for (col, v) in ints.iter_mut().zip([
                trace.rank,
                e.device,
                e.stream,
                e.start - trace.origin(),
                e.end - e.start,
            ]) {
                col.push(v);
            }
            kind.push(e.kind.as_str());
            name.push(trace.name(e.name).to_owned());
            bytes.push((e.bytes >= 0).then_some(e.bytes));
            bandwidth.push(bandwidth_gbps(e.bytes, e.end - e.start));
        }
    }
    let [rank, device, stream, start, duration] = ints;
    Table::declared(
        fields::TRANSFERS,
        vec![
            ("rank", int(rank)),
            ("kind", text(&kind)),
            ("name", text(&name)),
            ("device", int(device)),
            ("stream", int(stream)),
            ("start_ns", int(start)),
            ("duration_ns", int(duration)),
            ("bytes", opt_int(bytes)),
            ("bandwidth_gbps", opt_float(bandwidth)),
        ],
    )
}
