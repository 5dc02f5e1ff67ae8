//! Roofline points per launch: achieved FLOP/s from the SASS thread-instruction counters (the formulas
//! of ncu's own roofline sections), DRAM bytes/s, arithmetic intensity, and the device's peaks from the
//! report (or ceilings the caller measured). A point is a statement of where a launch sits under these
//! stated assumptions, not a prediction.

use super::cells::{check_unit, function_of, number, table};
use super::codes;
use super::fields;
use super::model::Report;
use crate::error::{Error, Result};
use crate::table::Table;
use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use serde::Serialize;
use std::sync::Arc;

/// A non-tensor precision: FLOP per thread instruction of each opcode, and the peak opcode.
struct Scalar {
    name: &'static str,
    ops: &'static [(&'static str, f64)],
    peak_op: &'static str,
    peak_weight: f64,
}

/// ncu's roofline sections: fp32 = fadd + fmul + 2·ffma; fp64 likewise; fp16 counts packed
/// instructions (2·hadd + 2·hmul + 4·hfma). Peaks are 2·ffma, 2·dfma, 4·hfma per cycle.
const SCALARS: &[Scalar] = &[
    Scalar {
        name: "fp64",
        ops: &[("dadd", 1.0), ("dmul", 1.0), ("dfma", 2.0)],
        peak_op: "dfma",
        peak_weight: 2.0,
    },
    Scalar {
        name: "fp32",
        ops: &[("fadd", 1.0), ("fmul", 1.0), ("ffma", 2.0)],
        peak_op: "ffma",
        peak_weight: 2.0,
    },
    Scalar {
        name: "fp16",
        ops: &[("hadd", 2.0), ("hmul", 2.0), ("hfma", 4.0)],
        peak_op: "hfma",
        peak_weight: 4.0,
    },
];

const SMSP_CLOCK: &str = "smsp__cycles_elapsed.avg.per_second";
const SMSP_CYCLES: &str = "smsp__cycles_elapsed.avg";
const SM_CLOCK: &str = "sm__cycles_elapsed.avg.per_second";
const DRAM_RATE: &str = "dram__bytes.sum.per_second";
const DRAM_PEAK: &str = "dram__bytes.sum.peak_sustained";
const DRAM_CLOCK: &str = "dram__cycles_elapsed.avg.per_second";
const TENSOR_PREFIX: &str = "sm__ops_path_tensor_";
const TENSOR_RATE: &str = ".sum.per_second";

fn achieved_metric(op: &str) -> String {
    format!("smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
}

fn peak_metric(op: &str) -> String {
    format!("sm__sass_thread_inst_executed_op_{op}_pred_on.sum.peak_sustained")
}

/// Ceilings the caller measured; they replace the report's peaks where given.
#[derive(Debug, Clone, Default)]
pub struct Peaks {
    pub flop_per_s: Vec<(String, f64)>,
    pub dram_bytes_per_s: Option<f64>,
}

impl Peaks {
    fn validate(&self) -> Result<()> {
        let all = self
            .flop_per_s
            .iter()
            .map(|(p, v)| (p.as_str(), *v))
            .chain(self.dram_bytes_per_s.map(|v| ("dram", v)));
        for (name, v) in all {
            if !v.is_finite() || v <= 0.0 {
                return Err(Error::input(
                    codes::PEAK_INVALID,
                    format!("the peak given for {name} must be a positive number"),
                )
                .with_observed(v.to_string()));
            }
        }
        Ok(())
    }

    fn flop(&self, precision: &str) -> Option<f64> {
        self.flop_per_s
            .iter()
            .find(|(p, _)| p == precision)
            .map(|(_, v)| *v)
    }
}

/// Whether a precision can be computed from this report, and which metrics it lacks.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub precision: String,
    pub available: bool,
    pub missing_metrics: Vec<String>,
}

fn scalar_metrics(s: &Scalar) -> Vec<String> {
    let mut names: Vec<String> = s.ops.iter().map(|(op, _)| achieved_metric(op)).collect();
    names.push(peak_metric(s.peak_op));
    names.extend([SMSP_CLOCK, SMSP_CYCLES, SM_CLOCK].map(str::to_string));
    names
}

fn tensor_paths(report: &Report) -> Vec<String> {
    report
        .metrics
        .columns
        .iter()
        .filter_map(|c| {
            c.name
                .strip_prefix(TENSOR_PREFIX)
                .and_then(|p| p.strip_suffix(TENSOR_RATE))
                .map(str::to_string)
        })
        .collect()
}

fn tensor_metrics(path: &str) -> [String; 3] {
    [
        format!("{TENSOR_PREFIX}{path}.sum"),
        format!("{TENSOR_PREFIX}{path}{TENSOR_RATE}"),
        format!("{TENSOR_PREFIX}{path}.sum.peak_sustained_elapsed.per_second"),
    ]
}

/// Whether the roofline may read a metric of this name (used to parse such columns first).
pub fn reads(name: &str) -> bool {
    let scalar = SCALARS.iter().any(|s| {
        s.ops.iter().any(|(op, _)| name == achieved_metric(op)) || name == peak_metric(s.peak_op)
    });
    let tensor = name.strip_prefix(TENSOR_PREFIX).is_some_and(|rest| {
        rest.ends_with(".sum")
            || rest.ends_with(TENSOR_RATE)
            || rest.ends_with(".sum.peak_sustained_elapsed.per_second")
    });
    scalar
        || tensor
        || [
            SMSP_CLOCK,
            SMSP_CYCLES,
            SM_CLOCK,
            DRAM_RATE,
            DRAM_PEAK,
            DRAM_CLOCK,
        ]
        .contains(&name)
}

/// Every metric the roofline reads from this report.
pub fn metric_names(report: &Report) -> Vec<String> {
    let mut names: Vec<String> = SCALARS.iter().flat_map(scalar_metrics).collect();
    names.extend([DRAM_RATE, DRAM_PEAK, DRAM_CLOCK].map(str::to_string));
    for path in tensor_paths(report) {
        names.extend(tensor_metrics(&path));
    }
    names
}

/// Which precisions the report supports.
pub fn coverage(report: &Report) -> Vec<Coverage> {
    let dram = [DRAM_RATE, DRAM_PEAK, DRAM_CLOCK].map(str::to_string);
    let mut out: Vec<Coverage> = SCALARS
        .iter()
        .map(|s| {
            let missing: Vec<String> = scalar_metrics(s)
                .into_iter()
                .chain(dram.iter().cloned())
                .filter(|m| report.metrics.column_index(m).is_none())
                .collect();
            Coverage {
                precision: s.name.to_string(),
                available: missing.is_empty(),
                missing_metrics: missing,
            }
        })
        .collect();
    for path in tensor_paths(report) {
        let missing: Vec<String> = tensor_metrics(&path)
            .into_iter()
            .chain(dram.iter().cloned())
            .filter(|m| report.metrics.column_index(m).is_none())
            .collect();
        out.push(Coverage {
            precision: format!("tensor_{path}"),
            available: missing.is_empty(),
            missing_metrics: missing,
        });
    }
    out
}

/// Reads a metric for the roofline, checking its unit.
struct Reader<'a> {
    report: &'a Report,
}

impl Reader<'_> {
    fn get(&self, row: usize, metric: &str, units: &[&str]) -> Result<Option<f64>> {
        let Some(col) = self.report.metrics.column_index(metric) else {
            return Ok(None);
        };
        check_unit(self.report, col, units, "the roofline")?;
        number(self.report, row, col)
    }
}

#[derive(Default)]
struct Rows {
    ids: Vec<Option<i64>>,
    names: Vec<Option<String>>,
    precision: Vec<Option<String>>,
    flop: Vec<Option<f64>>,
    rate: Vec<Option<f64>>,
    bytes_rate: Vec<Option<f64>>,
    intensity: Vec<Option<f64>>,
    peak: Vec<Option<f64>>,
    peak_source: Vec<Option<String>>,
    peak_dram: Vec<Option<f64>>,
    peak_dram_source: Vec<Option<String>>,
    ridge: Vec<Option<f64>>,
    flop_pct: Vec<Option<f64>>,
    dram_pct: Vec<Option<f64>>,
    region: Vec<Option<String>>,
}

struct Point {
    flop: Option<f64>,
    rate: Option<f64>,
    report_peak: Option<f64>,
}

struct Memory {
    rate: Option<f64>,
    peak: Option<f64>,
    source: &'static str,
}

impl Rows {
    fn push(
        &mut self,
        id: i64,
        name: Option<String>,
        precision: &str,
        p: &Point,
        m: &Memory,
        peaks: &Peaks,
    ) {
        let (peak, source) = match peaks.flop(precision) {
            Some(v) => (Some(v), "user"),
            None => (p.report_peak, "report"),
        };
        let ai = ratio(p.rate, m.rate);
        let ridge = ratio(peak, m.peak);
        self.ids.push(Some(id));
        self.names.push(name);
        self.precision.push(Some(precision.to_string()));
        self.flop.push(p.flop);
        self.rate.push(p.rate);
        self.bytes_rate.push(m.rate);
        self.intensity.push(ai);
        self.peak.push(peak);
        self.peak_source.push(peak.map(|_| source.to_string()));
        self.peak_dram.push(m.peak);
        self.peak_dram_source
            .push(m.peak.map(|_| m.source.to_string()));
        self.ridge.push(ridge);
        self.flop_pct.push(ratio(p.rate, peak).map(|r| 100.0 * r));
        self.dram_pct.push(ratio(m.rate, m.peak).map(|r| 100.0 * r));
        self.region.push(match (ai, ridge) {
            (Some(ai), Some(ridge)) => {
                Some(if ai < ridge { "bandwidth" } else { "compute" }.to_string())
            }
            _ => None,
        });
    }

    fn into_table(self) -> Result<Table> {
        let s = |v: Vec<Option<String>>| Arc::new(StringArray::from(v)) as ArrayRef;
        let f = |v: Vec<Option<f64>>| Arc::new(Float64Array::from(v)) as ArrayRef;
        table(
            fields::ROOFLINE,
            vec![
                (
                    "launch_id".into(),
                    Arc::new(Int64Array::from(self.ids)) as ArrayRef,
                ),
                ("kernel_function".into(), s(self.names)),
                ("precision".into(), s(self.precision)),
                ("flop".into(), f(self.flop)),
                ("achieved_flop_per_s".into(), f(self.rate)),
                ("dram_bytes_per_s".into(), f(self.bytes_rate)),
                (
                    "arithmetic_intensity_flop_per_byte".into(),
                    f(self.intensity),
                ),
                ("peak_flop_per_s".into(), f(self.peak)),
                ("peak_flop_source".into(), s(self.peak_source)),
                ("peak_dram_bytes_per_s".into(), f(self.peak_dram)),
                ("peak_dram_source".into(), s(self.peak_dram_source)),
                ("ridge_flop_per_byte".into(), f(self.ridge)),
                ("flop_pct_of_peak".into(), f(self.flop_pct)),
                ("dram_pct_of_peak".into(), f(self.dram_pct)),
                ("region".into(), s(self.region)),
            ],
        )
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

fn product(values: &[Option<f64>]) -> Option<f64> {
    values.iter().try_fold(1.0, |acc, v| v.map(|v| acc * v))
}

/// One row per launch × precision available in the report (tensor paths only where they ran).
pub fn roofline_table(report: &Report, peaks: &Peaks) -> Result<Table> {
    peaks.validate()?;
    let reader = Reader { report };
    let available: Vec<String> = coverage(report)
        .into_iter()
        .filter(|c| c.available)
        .map(|c| c.precision)
        .collect();
    let paths = tensor_paths(report);
    let mut rows = Rows::default();
    for (row, launch) in report.launches.iter().enumerate() {
        let report_dram_peak = product(&[
            reader.get(row, DRAM_PEAK, &["byte/cycle"])?,
            reader.get(row, DRAM_CLOCK, &["hz"])?,
        ]);
        let memory = Memory {
            rate: reader.get(row, DRAM_RATE, &["byte/s"])?,
            peak: peaks.dram_bytes_per_s.or(report_dram_peak),
            source: if peaks.dram_bytes_per_s.is_some() {
                "user"
            } else {
                "report"
            },
        };
        for s in SCALARS {
            if !available.iter().any(|a| a == s.name) {
                continue;
            }
            let mut per_cycle = Some(0.0);
            for (op, weight) in s.ops {
                let v = reader.get(row, &achieved_metric(op), &["inst/cycle"])?;
                per_cycle = per_cycle.zip(v).map(|(acc, v)| acc + weight * v);
            }
            let clock = reader.get(row, SMSP_CLOCK, &["hz"])?;
            let cycles = reader.get(row, SMSP_CYCLES, &["cycle"])?;
            let peak_per_cycle = reader.get(row, &peak_metric(s.peak_op), &["inst/cycle"])?;
            let sm_clock = reader.get(row, SM_CLOCK, &["hz"])?;
            let point = Point {
                flop: product(&[per_cycle, cycles]),
                rate: product(&[per_cycle, clock]),
                report_peak: product(&[peak_per_cycle, Some(s.peak_weight), sm_clock]),
            };
            rows.push(
                launch.id,
                function_of(launch),
                s.name,
                &point,
                &memory,
                peaks,
            );
        }
        for path in &paths {
            let precision = format!("tensor_{path}");
            if !available.contains(&precision) {
                continue;
            }
            let [count, rate, peak] = tensor_metrics(path);
            let rate = reader.get(row, &rate, &[""])?;
            if !rate.is_some_and(|r| r > 0.0) {
                continue;
            }
            let point = Point {
                flop: reader.get(row, &count, &[""])?,
                rate,
                report_peak: reader.get(row, &peak, &[""])?,
            };
            rows.push(
                launch.id,
                function_of(launch),
                &precision,
                &point,
                &memory,
                peaks,
            );
        }
    }
    rows.into_table()
}
