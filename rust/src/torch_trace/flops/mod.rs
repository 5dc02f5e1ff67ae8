//! FLOPs and bytes per op from recorded shapes (`gpuopt torch flops`): achieved TFLOP/s and GB/s
//! over the GPU time each op launched, arithmetic intensity, % of the GPU's datasheet peak
//! (`crate::peaks`), and per step the model FLOPs and MFU.
//!
//! Rows group op instances by (name, shape record, counted): every instance of a row has the same
//! FLOPs and bytes. `counted` rows are the ones totals add up (`eval`).

pub mod args;
pub mod eval;
pub mod fields;
pub mod model;
pub mod steps;

use super::columns::{int, opt_float, opt_int, opt_text, text};
use super::records::{CpuKind, NONE};
use super::{Trace, TraceSet};
use crate::error::Result;
use crate::peaks::{self, GpuPeaks, Peak};
use crate::table::Table;
use args::Precision;
use arrow_array::{ArrayRef, BooleanArray};
use model::{Class, Model};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// The peak an op of this class and precision is compared with: matrix work with the dense tensor
/// peak of its dtype (fp32 matrix work with FP32, PyTorch's default `allow_tf32=False`, which a
/// trace does not record; fp64 with FP64 Tensor where the datasheet has it), other work with the
/// FP32/FP64 peak; nothing for types the datasheets give no peak for.
pub fn peak_for(class: Class, precision: Precision, gpu: &GpuPeaks) -> Option<(Peak, f64)> {
    let peak = match (class.is_matrix(), precision) {
        (true, Precision::Bf16) => Peak::Bf16Tensor,
        (true, Precision::Fp16) => Peak::Fp16Tensor,
        (true, Precision::Fp8) => Peak::Fp8Tensor,
        (true, Precision::Fp64) if gpu.fp64_tensor.is_some() => Peak::Fp64Tensor,
        (_, Precision::Fp64) => Peak::Fp64,
        (_, Precision::Fp32) => Peak::Fp32,
        _ => return None,
    };
    gpu.flop_per_s(peak).map(|v| (peak, v))
}

/// The GPU whose peaks a trace's facts use, and how it was chosen.
#[derive(Debug, Clone, Serialize)]
pub struct GpuChoice {
    pub rank: i64,
    /// The device name(s) of the trace's `deviceProperties`.
    pub device_names: Vec<String>,
    /// The table row used, or null (then every peak and % is null).
    pub key: Option<String>,
    pub label: Option<String>,
    pub source: Option<String>,
    pub date: Option<String>,
    /// `device_name` (matched exactly), `--gpu` (given), or why there is none.
    pub how: String,
}

/// Picks the peak row for a trace: `gpu` (a key) when given, else the one device name the trace
/// records, matched exactly.
pub fn choose(trace: &Trace, gpu: Option<&str>) -> Result<(Option<&'static GpuPeaks>, GpuChoice)> {
    let mut names: Vec<String> = trace
        .header
        .devices
        .iter()
        .filter_map(|d| d.name.clone())
        .collect();
    names.sort();
    names.dedup();
    let (row, how) = match gpu {
        Some(key) => (Some(peaks::by_key(key)?), "--gpu".to_string()),
        None => match names.as_slice() {
            [] => (
                None,
                "the trace records no device name (deviceProperties); give --gpu".into(),
            ),
            [one] => match peaks::by_device_name(one) {
                Some(row) => (Some(row), "device_name".into()),
                None => (None, format!("no datasheet row for {one:?}; give --gpu")),
            },
            _ => (
                None,
                "the trace records several GPU models; give --gpu".into(),
            ),
        },
    };
    Ok((
        row,
        GpuChoice {
            rank: trace.rank,
            device_names: names,
            key: row.map(|r| r.key.clone()),
            label: row.map(|r| r.label.clone()),
            source: row.map(|r| r.source.clone()),
            date: row.map(|r| r.date.clone()),
            how,
        },
    ))
}

#[derive(Default)]
struct Group {
    instances: u64,
    gpu_ns: i64,
    gpu_events: u64,
}

/// `(tflop/s, GB/s, flop/byte)` of `flop` and `bytes` moved in `ns`.
fn rates(
    flop: Option<f64>,
    bytes: Option<f64>,
    ns: i64,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    #[allow(clippy::cast_precision_loss)]
    let seconds = (ns > 0).then_some(ns as f64 * 1e-9);
    let per_s = |v: Option<f64>| v.zip(seconds).map(|(v, s)| v / s);
    let ai = flop.zip(bytes).and_then(|(f, b)| (b > 0.0).then(|| f / b));
    (
        per_s(flop).map(|v| v / 1e12),
        per_s(bytes).map(|v| v / 1e9),
        ai,
    )
}

#[allow(clippy::cast_precision_loss)]
fn as_f64(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

/// The row's note: why it is unmodeled, and whether its rate is above the GPU's datasheet peak, which
/// no op reaches: then its shapes or the GPU time given to it cannot both be right (kernels of length
/// 0, overlapping, or one kernel linked to several ops), and the row says so rather than stand as a fact.
fn noted(reason: Option<&str>, flop_pct: Option<f64>, bw_pct: Option<f64>) -> Option<String> {
    let above: Vec<&str> = [("FLOP/s", flop_pct), ("bandwidth", bw_pct)]
        .into_iter()
        .filter(|(_, pct)| pct.is_some_and(|p| p > 100.0))
        .map(|(what, _)| what)
        .collect();
    if above.is_empty() {
        return reason.map(str::to_owned);
    }
    let over = format!(
        "{} above the GPU's datasheet peak: the shapes or the GPU time given to this op are wrong",
        above.join(" and ")
    );
    Some(reason.map_or_else(|| over.clone(), |r| format!("{r}; {over}")))
}

fn shape_text(trace: &Trace, shapes: u32) -> (Option<String>, Option<String>) {
    trace.events.shapes.get(shapes).map_or((None, None), |r| {
        (
            r.dims.as_deref().map(str::to_owned),
            r.types.as_deref().map(str::to_owned),
        )
    })
}

#[derive(Default)]
struct Rows {
    rank: Vec<i64>,
    name: Vec<String>,
    class: Vec<&'static str>,
    precision: Vec<Option<String>>,
    dims: Vec<Option<String>>,
    types: Vec<Option<String>>,
    counted: Vec<bool>,
    instances: Vec<i64>,
    flop: Vec<Option<i64>>,
    bytes: Vec<Option<i64>>,
    total_flop: Vec<Option<f64>>,
    total_bytes: Vec<Option<f64>>,
    gpu_events: Vec<i64>,
    gpu_ns: Vec<i64>,
    tflops: Vec<Option<f64>>,
    gbps: Vec<Option<f64>>,
    ai: Vec<Option<f64>>,
    peak: Vec<Option<String>>,
    peak_tflops: Vec<Option<f64>>,
    flop_pct: Vec<Option<f64>>,
    peak_gbps: Vec<Option<f64>>,
    bw_pct: Vec<Option<f64>>,
    note: Vec<Option<String>>,
}

impl Rows {
    fn push(
        &mut self,
        trace: &Trace,
        key: (u32, u32, bool),
        m: &Model,
        g: &Group,
        gpu: Option<&GpuPeaks>,
    ) {
        let (name, shapes, counted) = key;
        let (dims, types) = shape_text(trace, shapes);
        #[allow(clippy::cast_precision_loss)]
        let n = g.instances as f64;
        let total_flop = as_f64(m.flop).map(|f| f * n);
        let total_bytes = as_f64(m.bytes).map(|b| b * n);
        let (tflops, gbps, ai) = rates(total_flop, total_bytes, g.gpu_ns);
        let peak = gpu
            .zip(m.precision)
            .and_then(|(gpu, p)| peak_for(m.class, p, gpu));
        let peak_tflops = peak.map(|(_, v)| v / 1e12);
        let peak_gbps = gpu.map(|g| g.memory_gb_per_s).filter(|_| m.bytes.is_some());
        let pct = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| 100.0 * a / b);
        self.rank.push(trace.rank);
        self.name.push(trace.name(name).to_owned());
        self.class.push(m.class.as_str());
        self.precision
            .push(m.precision.map(|p| p.as_str().to_owned()));
        self.dims.push(dims);
        self.types.push(types);
        self.counted.push(counted);
        self.instances
            .push(i64::try_from(g.instances).unwrap_or(i64::MAX));
        self.flop.push(m.flop.and_then(|v| i64::try_from(v).ok()));
        self.bytes.push(m.bytes.and_then(|v| i64::try_from(v).ok()));
        self.total_flop.push(total_flop);
        self.total_bytes.push(total_bytes);
        self.gpu_events
            .push(i64::try_from(g.gpu_events).unwrap_or(i64::MAX));
        self.gpu_ns.push(g.gpu_ns);
        self.tflops.push(tflops);
        self.gbps.push(gbps);
        self.ai.push(ai);
        self.peak.push(peak.map(|(p, _)| p.as_str().to_owned()));
        self.peak_tflops.push(peak_tflops);
        let (flop_pct, bw_pct) = (pct(tflops, peak_tflops), pct(gbps, peak_gbps));
        self.flop_pct.push(flop_pct);
        self.peak_gbps.push(peak_gbps);
        self.bw_pct.push(bw_pct);
        self.note.push(noted(m.reason, flop_pct, bw_pct));
    }

    fn into_table(self) -> Result<Table> {
        Table::declared(
            fields::OPS,
            vec![
                ("rank", int(self.rank)),
                ("name", text(&self.name)),
                ("class", text(&self.class)),
                ("precision", opt_text(self.precision)),
                ("input_dims", opt_text(self.dims)),
                ("input_types", opt_text(self.types)),
                (
                    "counted",
                    Arc::new(BooleanArray::from(self.counted)) as ArrayRef,
                ),
                ("instances", int(self.instances)),
                ("flop", opt_int(self.flop)),
                ("bytes", opt_int(self.bytes)),
                ("total_flop", opt_float(self.total_flop)),
                ("total_bytes", opt_float(self.total_bytes)),
                ("gpu_events", int(self.gpu_events)),
                ("gpu_time_ns", int(self.gpu_ns)),
                ("achieved_tflop_per_s", opt_float(self.tflops)),
                ("achieved_gb_per_s", opt_float(self.gbps)),
                ("arithmetic_intensity_flop_per_byte", opt_float(self.ai)),
                ("peak", opt_text(self.peak)),
                ("peak_tflop_per_s", opt_float(self.peak_tflops)),
                ("flop_pct_of_peak", opt_float(self.flop_pct)),
                ("peak_gb_per_s", opt_float(self.peak_gbps)),
                ("bandwidth_pct_of_peak", opt_float(self.bw_pct)),
                ("note", opt_text(self.note)),
            ],
        )
    }
}

/// Everything `gpuopt torch flops` reports: the per-op table, the per-step table, the GPU chosen
/// per rank and the ops without a formula (kind `op_flops`, with how many instances).
pub struct Flops {
    pub ops: Table,
    pub steps: Table,
    pub gpus: Vec<GpuChoice>,
    pub unmodeled: Vec<(String, String, u64)>,
}

/// One trace's rows.
fn trace_rows(
    trace: &Trace,
    gpu: Option<&GpuPeaks>,
    ev: &eval::Evaluated,
    rows: &mut Rows,
    unmodeled: &mut HashMap<(String, String), u64>,
) {
    let mut groups: HashMap<(u32, u32, bool), Group> = HashMap::new();
    let mut order: Vec<(u32, u32, bool)> = Vec::new();
    for (i, c) in trace.events.cpu.iter().enumerate() {
        let m = ev.model_of.get(i).copied().unwrap_or(NONE);
        if m == NONE {
            continue;
        }
        let key = (c.name, c.shapes, ev.counted.get(i) == Some(&true));
        let g = groups.entry(key).or_insert_with(|| {
            order.push(key);
            Group::default()
        });
        g.instances += 1;
        g.gpu_ns += ev.gpu_ns.get(i).copied().unwrap_or(0);
        g.gpu_events += u64::from(ev.gpu_events.get(i).copied().unwrap_or(0));
        if let Some(model) = ev.models.get(m as usize) {
            if model.class == Class::Unmodeled {
                let why = model.reason.unwrap_or("no formula");
                *unmodeled
                    .entry((trace.name(c.name).to_owned(), why.to_owned()))
                    .or_default() += 1;
            }
        }
    }
    // The model of each group: any instance's (all instances of a key share one).
    let mut model_at: HashMap<(u32, u32), u32> = HashMap::new();
    for (i, c) in trace.events.cpu.iter().enumerate() {
        if let Some(&m) = ev.model_of.get(i) {
            if m != NONE {
                model_at.entry((c.name, c.shapes)).or_insert(m);
            }
        }
    }
    order.sort_by(|a, b| {
        let ga = groups.get(a).map_or(0, |g| g.gpu_ns);
        let gb = groups.get(b).map_or(0, |g| g.gpu_ns);
        gb.cmp(&ga)
            .then_with(|| trace.name(a.0).cmp(trace.name(b.0)))
            .then_with(|| a.1.cmp(&b.1))
            .then_with(|| b.2.cmp(&a.2))
    });
    for key in order {
        let (Some(g), Some(m)) = (
            groups.get(&key),
            model_at
                .get(&(key.0, key.1))
                .and_then(|&m| ev.models.get(m as usize)),
        ) else {
            continue;
        };
        rows.push(trace, key, m, g, gpu);
    }
}

/// The tables of `gpuopt torch flops` (`gpu`: a peak-table key that replaces the trace's device).
pub fn flops(set: &TraceSet, gpu: Option<&str>) -> Result<Flops> {
    let mut rows = Rows::default();
    let mut steps = steps::Rows::default();
    let mut gpus = Vec::new();
    let mut unmodeled: HashMap<(String, String), u64> = HashMap::new();
    for trace in &set.traces {
        let (row, choice) = choose(trace, gpu)?;
        let ev = eval::evaluate(trace);
        trace_rows(trace, row, &ev, &mut rows, &mut unmodeled);
        steps::trace_rows(trace, row, &ev, &mut steps);
        gpus.push(choice);
    }
    let mut unmodeled: Vec<(String, String, u64)> = unmodeled
        .into_iter()
        .map(|((name, why), n)| (name, why, n))
        .collect();
    unmodeled.sort();
    Ok(Flops {
        ops: rows.into_table()?,
        steps: steps.into_table()?,
        gpus,
        unmodeled,
    })
}

/// Whether a CPU event is a step range (`ProfilerStep#N`).
pub(crate) fn is_step(trace: &Trace, i: usize) -> bool {
    trace.events.cpu.get(i).is_some_and(|c| {
        c.kind == CpuKind::Annotation && trace.name(c.name).starts_with("ProfilerStep#")
    })
}
