//! NCCL collectives: each communication kernel with its collective arguments (name, dtype, element
//! counts, group) and how much of it overlapped compute kernels on the same device.
//!
//! Arguments come from the kernel's own `args` (recent Kineto copies them there) or else from the
//! nearest enclosing host range that carries them (`record_param_comms`). Bytes = input elements ×
//! the dtype's size; null when the dtype is one gpuopt does not know (never guessed).

use super::columns::{float, int, opt_float, opt_int, opt_text, text};
use super::fields;
use super::kernels::is_communication;
use super::records::{CommArgs, GpuKind, NONE};
use super::{Trace, TraceSet};
use crate::comm::CommOverlap;
use crate::error::Result;
use crate::intervals::{self, Span};
use crate::table::Table;
use serde::Serialize;
use std::collections::BTreeMap;

/// Bytes per element of the dtype names PyTorch writes in `dtype`.
pub fn dtype_size(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "Double" | "Long" | "ComplexFloat" | "UInt64" => 8,
        "Float" | "Int" | "ComplexHalf" | "UInt32" => 4,
        "Half" | "BFloat16" | "Short" | "UInt16" => 2,
        "Char" | "Byte" | "Bool" | "Float8_e4m3fn" | "Float8_e5m2" | "Float8_e4m3fnuz"
        | "Float8_e5m2fnuz" => 1,
        "ComplexDouble" => 16,
        _ => return None,
    })
}

/// The collective arguments of GPU event `g`, and where they were found.
fn args_of(trace: &Trace, g: usize) -> Option<(CommArgs, &'static str)> {
    let e = trace.events.gpu.get(g)?;
    if let Some(args) = trace.events.comms.get(e.comm as usize) {
        return Some((*args, "kernel"));
    }
    let r = *trace.links.gpu_runtime.get(g)?;
    let mut c = trace
        .links
        .runtime_parent
        .get(r as usize)
        .copied()
        .unwrap_or(NONE);
    while let Some(cpu) = trace.events.cpu.get(c as usize) {
        if let Some(args) = trace.events.comms.get(cpu.comm as usize) {
            return Some((*args, "op"));
        }
        c = trace
            .links
            .cpu_parent
            .get(c as usize)
            .copied()
            .unwrap_or(NONE);
    }
    None
}

fn compute_unions(trace: &Trace) -> BTreeMap<i64, Vec<Span>> {
    let mut spans: BTreeMap<i64, Vec<Span>> = BTreeMap::new();
    for e in &trace.events.gpu {
        if e.kind == GpuKind::Kernel && !is_communication(trace.name(e.name)) {
            spans
                .entry(e.device)
                .or_default()
                .push(Span::new(e.start, e.end));
        }
    }
    spans
        .into_iter()
        .map(|(d, s)| (d, intervals::union(s)))
        .collect()
}

fn collective_kernels(trace: &Trace) -> Vec<usize> {
    let mut out: Vec<usize> =
        (0..trace.events.gpu.len())
            .filter(|&g| {
                trace.events.gpu.get(g).is_some_and(|e| {
                    e.kind == GpuKind::Kernel && is_communication(trace.name(e.name))
                })
            })
            .collect();
    out.sort_by_key(|&g| trace.events.gpu.get(g).map(|e| (e.start, e.end)));
    out
}

/// Collective totals of one trace.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CollectiveTotals {
    pub kernels: usize,
    pub time_ns: i64,
    /// Union of the collective kernels' spans.
    pub busy_ns: i64,
    /// Part of `busy_ns` during which a compute kernel ran on the same device.
    pub compute_overlap_ns: i64,
}

pub fn totals(trace: &Trace) -> Option<CollectiveTotals> {
    let kernels = collective_kernels(trace);
    if kernels.is_empty() {
        return None;
    }
    let compute = compute_unions(trace);
    let mut by_device: BTreeMap<i64, Vec<Span>> = BTreeMap::new();
    let mut time = 0;
    for &g in &kernels {
        if let Some(e) = trace.events.gpu.get(g) {
            time += e.end - e.start;
            by_device
                .entry(e.device)
                .or_default()
                .push(Span::new(e.start, e.end));
        }
    }
    let (mut busy, mut overlap) = (0, 0);
    for (device, spans) in by_device {
        let union = intervals::union(spans);
        busy += intervals::total(&union);
        overlap += compute
            .get(&device)
            .map_or(0, |c| intervals::intersection_len(&union, c));
    }
    Some(CollectiveTotals {
        kernels: kernels.len(),
        time_ns: time,
        busy_ns: busy,
        compute_overlap_ns: overlap,
    })
}

/// `rank, name, collective, dtype, in_nelems, out_nelems, group_size, process_group, bytes_in,
/// args_source, device, stream, start_ns, duration_ns, compute_overlap_ns, compute_overlap_pct`.
pub fn table(set: &TraceSet) -> Result<Table> {
    let mut ints: [Vec<i64>; 6] = Default::default();
    let mut opts: [Vec<Option<i64>>; 4] = Default::default();
    let mut texts: [Vec<Option<String>>; 4] = Default::default();
    let (mut name, mut overlap_pct, mut algbw) = (Vec::new(), Vec::new(), Vec::new());
    for trace in &set.traces {
        let compute = compute_unions(trace);
        for g in collective_kernels(trace) {
            let Some(e) = trace.events.gpu.get(g) else {
                continue;
            };
            let args = args_of(trace, g);
            let text_of = |id: u32| (id != NONE).then(|| trace.name(id).to_owned());
            let known = |v: i64| (v >= 0).then_some(v);
            let dtype = args.and_then(|(a, _)| text_of(a.dtype));
            let size = dtype.as_deref().and_then(dtype_size);
            let in_nelems = args.and_then(|(a, _)| known(a.in_nelems));
            let overlap = compute.get(&e.device).map_or(0, |c| {
                intervals::intersection_len(&[Span::new(e.start, e.end)], c)
            });
            name.push(trace.name(e.name).to_owned());
            for (col, v) in texts.iter_mut().zip([
                args.and_then(|(a, _)| text_of(a.collective)),
                dtype,
                args.and_then(|(a, _)| text_of(a.group_name)),
                args.map(|(_, source)| source.to_owned()),
            ]) {
                col.push(v);
            }
            for (col, v) in opts.iter_mut().zip([
                in_nelems,
                args.and_then(|(a, _)| known(a.out_nelems)),
                args.and_then(|(a, _)| known(a.group_size)),
                bytes_in_of(in_nelems, size),
            ]) {
                col.push(v);
            }
            for (col, v) in ints.iter_mut().zip([
                trace.rank,
                e.device,
                e.stream,
                e.start - trace.origin(),
                e.end - e.start,
                overlap,
            ]) {
                col.push(v);
            }
            overlap_pct.push(super::columns::pct(overlap, e.end - e.start));
            // Algorithm bandwidth (NCCL's "algbw"): input bytes / kernel time; bytes per ns = GB/s.
            algbw.push(
                bytes_in_of(in_nelems, size)
                    .filter(|_| e.end > e.start)
                    .map(|b| b as f64 / (e.end - e.start) as f64),
            );
        }
    }
    let [rank, device, stream, start, duration, overlap] = ints;
    let [in_nelems, out_nelems, group_size, bytes_in] = opts;
    let [collective, dtype, group, source] = texts;
    Table::declared(
        fields::COLLECTIVES,
        vec![
            ("rank", int(rank)),
            ("name", text(&name)),
            ("collective", opt_text(collective)),
            ("dtype", opt_text(dtype)),
            ("in_nelems", opt_int(in_nelems)),
            ("out_nelems", opt_int(out_nelems)),
            ("group_size", opt_int(group_size)),
            ("process_group", opt_text(group)),
            ("bytes_in", opt_int(bytes_in)),
            ("args_source", opt_text(source)),
            ("device", int(device)),
            ("stream", int(stream)),
            ("start_ns", int(start)),
            ("duration_ns", int(duration)),
            ("compute_overlap_ns", int(overlap)),
            ("compute_overlap_pct", float(overlap_pct)),
            ("algbw_gbps", opt_float(algbw)),
        ],
    )
}

fn bytes_in_of(in_nelems: Option<i64>, size: Option<i64>) -> Option<i64> {
    in_nelems.zip(size).and_then(|(n, s)| n.checked_mul(s))
}

/// Communication vs. compute per rank and device (`stream` null) and per communication stream:
/// `rank, device, stream, kernels, comm_kernels, comm_time_ns, comm_busy_ns, compute_busy_ns,
/// overlap_ns, exposed_comm_ns, overlap_pct` (definitions in `crate::comm`). Devices that ran no
/// kernel are absent; a device with compute but no collectives has zero communication.
pub fn comm_table(set: &TraceSet) -> Result<Table> {
    type Row = (i64, i64, Option<i64>, i64, CommOverlap);
    let mut rows: Vec<Row> = Vec::new();
    for trace in &set.traces {
        let compute = compute_unions(trace);
        let mut kernels: BTreeMap<i64, i64> = BTreeMap::new();
        let mut comm: BTreeMap<i64, BTreeMap<i64, Vec<Span>>> = BTreeMap::new();
        for e in &trace.events.gpu {
            if e.kind != GpuKind::Kernel {
                continue;
            }
            *kernels.entry(e.device).or_default() += 1;
            if is_communication(trace.name(e.name)) {
                comm.entry(e.device)
                    .or_default()
                    .entry(e.stream)
                    .or_default()
                    .push(Span::new(e.start, e.end));
            }
        }
        for (device, count) in kernels {
            let union = compute.get(&device).map_or(&[][..], Vec::as_slice);
            let streams = comm.remove(&device).unwrap_or_default();
            let all: Vec<Span> = streams.values().flatten().copied().collect();
            rows.push((
                trace.rank,
                device,
                None,
                count,
                CommOverlap::of(&all, union),
            ));
            for (stream, spans) in streams {
                let o = CommOverlap::of(&spans, union);
                let n = i64::try_from(o.comm_kernels).unwrap_or(i64::MAX);
                rows.push((trace.rank, device, Some(stream), n, o));
            }
        }
    }
    let pick = |f: fn(&CommOverlap) -> i64| rows.iter().map(|r| f(&r.4)).collect::<Vec<i64>>();
    Table::declared(
        &fields::comm(),
        vec![
            ("rank", int(rows.iter().map(|r| r.0).collect())),
            ("device", int(rows.iter().map(|r| r.1).collect())),
            ("stream", opt_int(rows.iter().map(|r| r.2).collect())),
            ("kernels", int(rows.iter().map(|r| r.3).collect())),
            (
                "comm_kernels",
                int(pick(|o| i64::try_from(o.comm_kernels).unwrap_or(i64::MAX))),
            ),
            ("comm_time_ns", int(pick(|o| o.comm_time_ns))),
            ("comm_busy_ns", int(pick(|o| o.comm_busy_ns))),
            ("compute_busy_ns", int(pick(|o| o.compute_busy_ns))),
            ("overlap_ns", int(pick(|o| o.overlap_ns))),
            ("exposed_comm_ns", int(pick(|o| o.exposed_comm_ns))),
            (
                "overlap_pct",
                float(rows.iter().map(|r| r.4.overlap_pct()).collect()),
            ),
        ],
    )
}
