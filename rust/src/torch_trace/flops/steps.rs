//! Model FLOPs and MFU per step: the counted matrix work (GEMM, convolution, attention) of the ops
//! that start inside each `ProfilerStep#N` range (any thread of its process), over the step's
//! duration times the dense peak of each op's dtype: MFU = Σ_p FLOP_p / (duration × peak_p).
//! A trace without steps is one row, `(trace)`, from its first event to its last.

use super::args::Precision;
use super::eval::Evaluated;
use super::model::Class;
use super::{is_step, peak_for};
use crate::peaks::GpuPeaks;
use crate::table::Table;
use crate::torch_trace::columns::{int, opt_float, opt_text, text};
use crate::torch_trace::records::{OwnedIdent, NONE};
use crate::torch_trace::Trace;
use std::collections::BTreeMap;

#[derive(Default)]
pub struct Rows {
    rank: Vec<i64>,
    step: Vec<String>,
    start: Vec<i64>,
    duration: Vec<i64>,
    model_flop: Vec<Option<f64>>,
    total_flop: Vec<Option<f64>>,
    tflops: Vec<Option<f64>>,
    mfu: Vec<Option<f64>>,
    basis: Vec<Option<String>>,
    modeled_gpu: Vec<i64>,
    gpu: Vec<i64>,
}

impl Rows {
    pub fn into_table(self) -> crate::error::Result<Table> {
        Table::declared(
            super::fields::STEPS,
            vec![
                ("rank", int(self.rank)),
                ("step", text(&self.step)),
                ("start_ns", int(self.start)),
                ("duration_ns", int(self.duration)),
                ("model_flop", opt_float(self.model_flop)),
                ("total_flop", opt_float(self.total_flop)),
                ("model_tflop_per_s", opt_float(self.tflops)),
                ("mfu_pct", opt_float(self.mfu)),
                ("peak_basis", opt_text(self.basis)),
                ("counted_gpu_time_ns", int(self.modeled_gpu)),
                ("gpu_time_ns", int(self.gpu)),
            ],
        )
    }
}

fn pid(trace: &Trace, thread: u32) -> Option<&OwnedIdent> {
    trace.events.threads.get(thread as usize).map(|t| &t.pid)
}

/// One step's sums.
#[derive(Default)]
struct Sums {
    model: BTreeMap<(Precision, Class), f64>,
    total: f64,
    any_flop: bool,
    counted_gpu: i64,
    gpu: i64,
}

/// What a step adds up, sorted by start so each step reads only its own slice.
struct Index<'t> {
    /// (start, CPU event) of counted ops.
    ops: Vec<(i64, usize)>,
    /// (start, call) of runtime calls.
    calls: Vec<(i64, usize)>,
    trace: &'t Trace,
}

impl<'t> Index<'t> {
    fn new(trace: &'t Trace, ev: &Evaluated) -> Self {
        let mut ops: Vec<(i64, usize)> = trace
            .events
            .cpu
            .iter()
            .enumerate()
            .filter(|(i, _)| ev.counted.get(*i) == Some(&true))
            .map(|(i, c)| (c.start, i))
            .collect();
        ops.sort_unstable();
        let mut calls: Vec<(i64, usize)> = trace
            .events
            .runtime
            .iter()
            .enumerate()
            .map(|(r, c)| (c.start, r))
            .collect();
        calls.sort_unstable();
        Index { ops, calls, trace }
    }

    fn within(list: &[(i64, usize)], range: (i64, i64)) -> &[(i64, usize)] {
        let from = list.partition_point(|&(t, _)| t < range.0);
        let to = list.partition_point(|&(t, _)| t < range.1);
        list.get(from..to).unwrap_or_default()
    }

    #[allow(clippy::cast_precision_loss)]
    fn add(&self, ev: &Evaluated, range: (i64, i64), process: Option<&OwnedIdent>, s: &mut Sums) {
        let trace = self.trace;
        for &(_, i) in Self::within(&self.ops, range) {
            let Some(c) = trace.events.cpu.get(i) else {
                continue;
            };
            if process.is_some() && pid(trace, c.thread) != process {
                continue;
            }
            let m = ev.model_of.get(i).copied().unwrap_or(NONE);
            let Some(model) = ev.models.get(m as usize) else {
                continue;
            };
            s.counted_gpu += ev.gpu_ns.get(i).copied().unwrap_or(0);
            if let Some(f) = model.flop {
                s.total += f as f64;
                s.any_flop = true;
                if let (true, Some(p)) = (model.class.is_matrix(), model.precision) {
                    *s.model.entry((p, Class::Gemm)).or_default() += f as f64;
                }
            }
        }
        for &(_, r) in Self::within(&self.calls, range) {
            let Some(call) = trace.events.runtime.get(r) else {
                continue;
            };
            if process.is_some() && pid(trace, call.thread) != process {
                continue;
            }
            for &g in trace.links.gpu_of_runtime(r) {
                if let Some(e) = trace.events.gpu.get(g as usize) {
                    s.gpu += e.end - e.start;
                }
            }
        }
    }
}

pub fn trace_rows(trace: &Trace, gpu: Option<&GpuPeaks>, ev: &Evaluated, rows: &mut Rows) {
    let origin = trace.origin();
    let mut ranges: Vec<(String, i64, i64, Option<&OwnedIdent>)> = trace
        .events
        .cpu
        .iter()
        .enumerate()
        .filter(|(i, _)| is_step(trace, *i))
        .map(|(_, c)| {
            (
                trace.name(c.name).to_owned(),
                c.start,
                c.end,
                pid(trace, c.thread),
            )
        })
        .collect();
    ranges.sort_by_key(|r| (r.1, r.2));
    if ranges.is_empty() {
        let (start, end) = (
            trace.events.first_start.unwrap_or(0),
            trace.events.last_end.unwrap_or(0),
        );
        ranges.push(("(trace)".to_owned(), start, end.saturating_add(1), None));
    }
    let index = Index::new(trace, ev);
    for (name, start, end, process) in ranges {
        let mut s = Sums::default();
        index.add(ev, (start, end), process, &mut s);
        let duration = if name == "(trace)" {
            end - 1 - start
        } else {
            end - start
        };
        #[allow(clippy::cast_precision_loss)]
        let seconds = (duration > 0).then_some(duration as f64 * 1e-9);
        let model: f64 = s.model.values().sum();
        let mut basis = Vec::new();
        let mut fraction = Some(0.0);
        for (&(p, class), &flop) in &s.model {
            match gpu.and_then(|g| peak_for(class, p, g)) {
                Some((peak, per_s)) => {
                    basis.push(format!("{} {}", p.as_str(), peak.as_str()));
                    fraction = fraction
                        .zip(seconds)
                        .map(|(acc, sec)| acc + flop / (sec * per_s));
                }
                None => {
                    basis.push(format!("{}: no peak", p.as_str()));
                    fraction = None;
                }
            }
        }
        rows.rank.push(trace.rank);
        rows.step.push(name);
        rows.start.push(start - origin);
        rows.duration.push(duration);
        rows.model_flop.push(s.any_flop.then_some(model));
        rows.total_flop.push(s.any_flop.then_some(s.total));
        rows.tflops
            .push(seconds.filter(|_| s.any_flop).map(|sec| model / sec / 1e12));
        rows.mfu.push(if s.model.is_empty() || gpu.is_none() {
            None
        } else {
            fraction.map(|f| 100.0 * f)
        });
        rows.basis
            .push((!basis.is_empty()).then(|| basis.join(", ")));
        rows.modeled_gpu.push(s.counted_gpu);
        rows.gpu.push(s.gpu);
    }
}
