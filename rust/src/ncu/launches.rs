//! Per-launch facts (one row per launch, never averaged), per-name aggregates that state their count,
//! warp stalls, instruction mix, rules, sections, the long metric table and what stays unmodeled.

use super::cells::{check_unit, function_of, number, table};

use super::fields;
use super::metrics::{self, Candidate, Fact, FACTS};
use super::model::{Cell, LaunchIdentity, Report};
use super::roofline;
use crate::error::Result;
use crate::table::Table;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A fact resolved to the metric columns it is read from in one report.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub fact: &'static Fact,
    pub candidate: &'static Candidate,
    pub columns: Vec<usize>,
}

/// Which metrics each fact was read from (`None`: the report carries none of its candidates).
#[derive(Debug, Clone, Serialize)]
pub struct FactSource {
    pub fact: &'static str,
    pub unit: &'static str,
    pub source: Option<String>,
}

/// Resolves every fact against the report's columns, checking units; unknown or unexpected units on
/// a metric a fact uses are errors.
pub fn resolve(report: &Report) -> Result<Vec<Option<Resolved>>> {
    FACTS
        .iter()
        .map(|fact| {
            let found = fact.candidates.iter().find_map(|c| {
                let cols: Option<Vec<usize>> = c
                    .terms
                    .iter()
                    .map(|t| report.metrics.column_index(t))
                    .collect();
                cols.map(|cols| (c, cols))
            });
            let Some((candidate, columns)) = found else {
                return Ok(None);
            };
            for &col in &columns {
                check_unit(report, col, candidate.units, fact.name)?;
            }
            Ok(Some(Resolved {
                fact,
                candidate,
                columns,
            }))
        })
        .collect()
}

fn fact_value(report: &Report, row: usize, resolved: &Resolved) -> Result<Option<f64>> {
    let mut sum = 0.0;
    for &col in &resolved.columns {
        match number(report, row, col)? {
            Some(v) => sum += v,
            None => return Ok(None),
        }
    }
    Ok(Some(sum * resolved.candidate.scale))
}

/// Where each fact comes from in this report.
pub fn fact_sources(resolved: &[Option<Resolved>]) -> Vec<FactSource> {
    FACTS
        .iter()
        .zip(resolved)
        .map(|(fact, r)| FactSource {
            fact: fact.name,
            unit: fact.unit,
            source: r.as_ref().map(|r| {
                let sum = r.candidate.terms.join(" + ");
                if r.candidate.scale == 1.0 {
                    sum
                } else {
                    format!("{} * ({sum})", r.candidate.scale)
                }
            }),
        })
        .collect()
}

fn text_metric(report: &Report, row: usize, metric: &str) -> Option<String> {
    let col = report.metrics.column_index(metric)?;
    match report.metrics.cell(row, col) {
        Cell::Text(t) => Some(t.to_string()),
        Cell::Number(v) => Some(format_number(v)),
        Cell::Missing => None,
    }
}

fn num_metric(report: &Report, row: usize, metric: &str) -> Option<f64> {
    let col = report.metrics.column_index(metric)?;
    match report.metrics.cell(row, col) {
        Cell::Number(v) => Some(v),
        _ => None,
    }
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The device name of a launch: the report's attribute metric, else the device list of the session.
pub fn device_name(report: &Report, row: usize) -> Option<String> {
    text_metric(report, row, "device__attribute_display_name").or_else(|| {
        let device = report.launches.get(row)?.device.unwrap_or(0);
        report
            .devices
            .iter()
            .find(|(id, _)| *id == device)
            .or_else(|| {
                (report.devices.len() == 1)
                    .then(|| report.devices.first())
                    .flatten()
            })
            .map(|(_, name)| name.clone())
    })
}

/// `9.0` from the CSV's CC column or the device attribute metrics.
pub fn compute_capability(report: &Report, row: usize) -> Option<String> {
    let launch = report.launches.get(row)?;
    launch.compute_capability.clone().or_else(|| {
        let major = num_metric(report, row, "device__attribute_compute_capability_major")?;
        let minor = num_metric(report, row, "device__attribute_compute_capability_minor")?;
        Some(format!("{}.{}", major as i64, minor as i64))
    })
}

/// `sm_90` from `9.0`.
pub fn arch(cc: Option<&str>) -> Option<String> {
    let (major, minor) = cc?.split_once('.')?;
    Some(format!("sm_{major}{minor}"))
}

fn dims(report: &Report, row: usize, launch: &LaunchIdentity, grid: bool) -> [Option<i64>; 3] {
    let from_identity = if grid { launch.grid } else { launch.block };
    if let Some(d) = from_identity {
        return d.map(Some);
    }
    let prefix = if grid {
        "launch__grid_dim_"
    } else {
        "launch__block_dim_"
    };
    ["x", "y", "z"]
        .map(|axis| num_metric(report, row, &format!("{prefix}{axis}")).map(|v| v as i64))
}

fn strings(values: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

fn ints(values: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(values))
}

fn floats(values: Vec<Option<f64>>) -> ArrayRef {
    Arc::new(Float64Array::from(values))
}

/// One row per launch: identity, configuration, every fact, and the tool/version/arch of the numbers.
pub fn launches_table(report: &Report) -> Result<Table> {
    let resolved = resolve(report)?;
    let n = report.launches.len();
    let mut cols: Vec<(String, ArrayRef)> = Vec::new();
    let l = &report.launches;
    cols.push((
        "launch_id".into(),
        ints(l.iter().map(|x| Some(x.id)).collect()),
    ));
    cols.push((
        "kernel_name".into(),
        strings(l.iter().map(|x| Some(x.kernel_name.clone())).collect()),
    ));
    cols.push((
        "kernel_demangled".into(),
        strings(l.iter().map(|x| x.kernel_demangled.clone()).collect()),
    ));
    cols.push((
        "kernel_function".into(),
        strings(l.iter().map(|x| x.kernel_function.clone()).collect()),
    ));
    cols.push((
        "kernel_mangled".into(),
        strings(l.iter().map(|x| x.kernel_mangled.clone()).collect()),
    ));
    cols.push((
        "process_id".into(),
        ints(l.iter().map(|x| x.process_id).collect()),
    ));
    cols.push((
        "process_name".into(),
        strings(l.iter().map(|x| x.process_name.clone()).collect()),
    ));
    let context: Vec<Option<i64>> = (0..n)
        .map(|r| {
            l.get(r)
                .and_then(|x| x.context)
                .or_else(|| num_metric(report, r, "launch__context_id").map(|v| v as i64))
        })
        .collect();
    let stream: Vec<Option<i64>> = (0..n)
        .map(|r| {
            l.get(r)
                .and_then(|x| x.stream)
                .or_else(|| num_metric(report, r, "launch__stream_id").map(|v| v as i64))
        })
        .collect();
    let device: Vec<Option<i64>> = (0..n)
        .map(|r| {
            l.get(r)
                .and_then(|x| x.device)
                .or_else(|| num_metric(report, r, "launch__device_id").map(|v| v as i64))
        })
        .collect();
    cols.push(("context_id".into(), ints(context)));
    cols.push(("stream_id".into(), ints(stream)));
    cols.push(("device_id".into(), ints(device)));
    cols.push((
        "device_name".into(),
        strings((0..n).map(|r| device_name(report, r)).collect()),
    ));
    let cc: Vec<Option<String>> = (0..n).map(|r| compute_capability(report, r)).collect();
    cols.push((
        "arch".into(),
        strings(cc.iter().map(|c| arch(c.as_deref())).collect()),
    ));
    cols.push(("compute_capability".into(), strings(cc)));
    for (grid, label) in [(true, "grid"), (false, "block")] {
        let all: Vec<[Option<i64>; 3]> = l
            .iter()
            .enumerate()
            .map(|(r, x)| dims(report, r, x, grid))
            .collect();
        for (axis, name) in ["x", "y", "z"].iter().enumerate() {
            let values = all.iter().map(|d| d.get(axis).copied().flatten()).collect();
            cols.push((format!("{label}_{name}"), ints(values)));
        }
    }
    for (fact, r) in FACTS.iter().zip(&resolved) {
        let values = match r {
            Some(r) => (0..n)
                .map(|row| fact_value(report, row, r))
                .collect::<Result<Vec<_>>>()?,
            None => vec![None; n],
        };
        cols.push((fact.name.to_string(), floats(values)));
    }
    let version = report.tool.version.clone();
    cols.push(("tool".into(), strings(vec![Some("ncu".to_string()); n])));
    cols.push(("tool_version".into(), strings(vec![version; n])));
    cols.push((
        "source_format".into(),
        strings(vec![Some(report.format.as_str().to_string()); n]),
    ));
    table(&fields::launches(), cols)
}

/// Launch rows grouped by (kernel name, grid, block): the key of a per-name aggregate.
pub fn groups(report: &Report) -> Vec<(String, Vec<usize>)> {
    let mut order: Vec<(String, Vec<usize>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for (row, launch) in report.launches.iter().enumerate() {
        let name = launch
            .kernel_demangled
            .clone()
            .unwrap_or_else(|| launch.kernel_name.clone());
        let grid = dims(report, row, launch, true);
        let block = dims(report, row, launch, false);
        let key = format!("{name}\u{1f}{grid:?}\u{1f}{block:?}");
        match at.get(&key) {
            Some(&i) => {
                if let Some(group) = order.get_mut(i) {
                    group.1.push(row);
                }
            }
            None => {
                at.insert(key, order.len());
                order.push((name, vec![row]));
            }
        }
    }
    order
}

/// Count, sum, mean, min, max of the values present.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub count: usize,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let mut s = Stats {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        };
        for v in values {
            s.count += 1;
            s.sum += v;
            s.min = s.min.min(v);
            s.max = s.max.max(v);
        }
        s
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    fn opt(&self, v: f64) -> Option<f64> {
        (self.count > 0).then_some(v)
    }
}

/// Facts that the per-name aggregate reports as means (each with the count it averaged).
const KERNEL_MEANS: &[&str] = &[
    "sm_throughput_pct",
    "memory_throughput_pct",
    "dram_throughput_pct",
    "achieved_occupancy_pct",
    "dram_bytes",
    "registers_per_thread",
];

/// Per-name aggregates: one row per (kernel, grid, block), with the number of launches it covers.
pub fn kernels_table(report: &Report) -> Result<Table> {
    let resolved = resolve(report)?;
    let values = fact_matrix(report, &resolved)?;
    let groups = groups(report);
    let fact_at = |name: &str| FACTS.iter().position(|f| f.name == name);
    let mut cols: Vec<(String, ArrayRef)> = Vec::new();
    let first = |rows: &Vec<usize>| rows.first().and_then(|r| report.launches.get(*r));
    cols.push((
        "kernel_name".into(),
        strings(groups.iter().map(|(n, _)| Some(n.clone())).collect()),
    ));
    cols.push((
        "kernel_function".into(),
        strings(
            groups
                .iter()
                .map(|(_, rows)| first(rows).and_then(|l| l.kernel_function.clone()))
                .collect(),
        ),
    ));
    for (grid, label) in [(true, "grid"), (false, "block")] {
        let text = groups
            .iter()
            .map(|(_, rows)| {
                let row = rows.first().copied()?;
                let d = dims(report, row, report.launches.get(row)?, grid);
                Some(
                    d.iter()
                        .map(|v| v.map_or("?".to_string(), |v| v.to_string()))
                        .collect::<Vec<_>>()
                        .join("x"),
                )
            })
            .collect();
        cols.push((label.to_string(), strings(text)));
    }
    cols.push((
        "launches".into(),
        ints(groups.iter().map(|(_, r)| Some(r.len() as i64)).collect()),
    ));
    cols.push((
        "launch_ids".into(),
        strings(
            groups
                .iter()
                .map(|(_, rows)| {
                    Some(
                        rows.iter()
                            .filter_map(|r| report.launches.get(*r).map(|l| l.id.to_string()))
                            .collect::<Vec<_>>()
                            .join(","),
                    )
                })
                .collect(),
        ),
    ));
    let column_of = |fact: &str, rows: &Vec<usize>| -> Stats {
        let Some(f) = fact_at(fact) else {
            return Stats::default();
        };
        Stats::of(
            rows.iter()
                .filter_map(|r| values.get(*r).and_then(|v| v.get(f)).copied().flatten()),
        )
    };
    let durations: Vec<Stats> = groups
        .iter()
        .map(|(_, r)| column_of("duration_ns", r))
        .collect();
    cols.push((
        "duration_ns_sum".into(),
        floats(durations.iter().map(|s| s.opt(s.sum)).collect()),
    ));
    cols.push((
        "duration_ns_mean".into(),
        floats(durations.iter().map(Stats::mean).collect()),
    ));
    cols.push((
        "duration_ns_min".into(),
        floats(durations.iter().map(|s| s.opt(s.min)).collect()),
    ));
    cols.push((
        "duration_ns_max".into(),
        floats(durations.iter().map(|s| s.opt(s.max)).collect()),
    ));
    for fact in KERNEL_MEANS {
        let stats: Vec<Stats> = groups.iter().map(|(_, r)| column_of(fact, r)).collect();
        cols.push((
            format!("{fact}_mean"),
            floats(stats.iter().map(Stats::mean).collect()),
        ));
    }
    table(fields::KERNELS, cols)
}

/// Every fact of every launch: `values[row][fact]`.
pub fn fact_matrix(
    report: &Report,
    resolved: &[Option<Resolved>],
) -> Result<Vec<Vec<Option<f64>>>> {
    (0..report.launches.len())
        .map(|row| {
            resolved
                .iter()
                .map(|r| match r {
                    Some(r) => fact_value(report, row, r),
                    None => Ok(None),
                })
                .collect()
        })
        .collect()
}

/// A stall reason and the metric names of its two families (either may be absent).
#[derive(Debug, Clone)]
pub struct StallReason {
    pub reason: String,
    pub cycles: String,
    pub samples: String,
    pub samples_not_issued: String,
}

/// Stall reasons present in the report: the union of the cycles-per-issue and sampling families
/// (in column order), with the spellings that differ between the families reconciled.
pub fn stall_reasons(report: &Report) -> Vec<StallReason> {
    let (prefix, suffix) = metrics::STALL_CYCLES;
    let sampled = |name: &str| -> Option<String> {
        let reason = name.strip_prefix(metrics::STALL_SAMPLES)?;
        if reason.ends_with(metrics::STALL_SAMPLES_NOT_ISSUED) {
            return None;
        }
        Some(
            metrics::STALL_REASON_SPELLINGS
                .iter()
                .find(|(_, s)| *s == reason)
                .map_or(reason, |(c, _)| *c)
                .to_string(),
        )
    };
    let mut out: Vec<StallReason> = Vec::new();
    for column in &report.metrics.columns {
        let reason = column
            .name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(suffix))
            .map(str::to_string)
            .or_else(|| sampled(&column.name));
        let Some(reason) = reason else { continue };
        if out.iter().any(|r| r.reason == reason) {
            continue;
        }
        let sample_name = metrics::STALL_REASON_SPELLINGS
            .iter()
            .find(|(c, _)| *c == reason)
            .map_or(reason.as_str(), |(_, s)| *s)
            .to_string();
        out.push(StallReason {
            cycles: format!("{prefix}{reason}{suffix}"),
            samples: format!("{}{sample_name}", metrics::STALL_SAMPLES),
            samples_not_issued: format!(
                "{}{sample_name}{}",
                metrics::STALL_SAMPLES,
                metrics::STALL_SAMPLES_NOT_ISSUED
            ),
            reason,
        });
    }
    out
}

/// One row per launch × stall reason: cycles per issued instruction and sampled warps.
pub fn warp_stalls_table(report: &Report) -> Result<Table> {
    let reasons = stall_reasons(report);
    let mut ids = Vec::new();
    let mut names = Vec::new();
    let mut reason_col = Vec::new();
    let mut cycles = Vec::new();
    let mut samples = Vec::new();
    let mut not_issued = Vec::new();
    let mut sample_share = Vec::new();
    let lookup = |metric: &str, accepted: &[&str]| -> Result<Option<usize>> {
        match report.metrics.column_index(metric) {
            Some(col) => check_unit(report, col, accepted, "warp stalls").map(|()| Some(col)),
            None => Ok(None),
        }
    };
    let mut cols_for = Vec::new();
    for r in &reasons {
        let c = lookup(&r.cycles, &["inst", "cycle"])?;
        let s = lookup(&r.samples, metrics::STALL_SAMPLE_UNITS)?;
        let ni = lookup(&r.samples_not_issued, metrics::STALL_SAMPLE_UNITS)?;
        cols_for.push((r.reason.as_str(), c, s, ni));
    }
    let total = lookup(metrics::STALL_SAMPLE_TOTAL, &[""])?;
    for (row, launch) in report.launches.iter().enumerate() {
        let get = |col: Option<usize>| -> Result<Option<f64>> {
            match col {
                Some(col) => number(report, row, col),
                None => Ok(None),
            }
        };
        let total_samples = get(total)?;
        for &(reason, c, s, ni) in &cols_for {
            let sampled = get(s)?;
            ids.push(Some(launch.id));
            names.push(function_of(launch));
            reason_col.push(Some(reason.to_string()));
            cycles.push(get(c)?);
            samples.push(sampled);
            not_issued.push(get(ni)?);
            sample_share.push(match (sampled, total_samples) {
                (Some(s), Some(t)) if t > 0.0 => Some(100.0 * s / t),
                _ => None,
            });
        }
    }
    table(
        fields::WARP_STALLS,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            ("reason".into(), strings(reason_col)),
            ("stall_cycles_per_issued_inst".into(), floats(cycles)),
            ("samples".into(), floats(samples)),
            ("samples_not_issued".into(), floats(not_issued)),
            ("samples_pct".into(), floats(sample_share)),
        ],
    )
}

fn kernel_of(report: &Report, row: usize) -> (Option<i64>, Option<String>) {
    report
        .launches
        .get(row)
        .map_or((None, None), |l| (Some(l.id), function_of(l)))
}

/// One row per launch × opcode (where the report collected `sass__inst_executed_per_opcode`).
pub fn instruction_mix_table(report: &Report) -> Result<Table> {
    let (ids, names): (Vec<_>, Vec<_>) = report
        .instruction_mix
        .iter()
        .map(|o| kernel_of(report, o.launch))
        .unzip();
    table(
        fields::INSTRUCTION_MIX,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            (
                "opcode".into(),
                strings(
                    report
                        .instruction_mix
                        .iter()
                        .map(|o| Some(o.opcode.clone()))
                        .collect(),
                ),
            ),
            (
                "executed_inst".into(),
                floats(
                    report
                        .instruction_mix
                        .iter()
                        .map(|o| Some(o.executed))
                        .collect(),
                ),
            ),
        ],
    )
}

/// ncu's rule results, verbatim.
pub fn rules_table(report: &Report) -> Result<Table> {
    let r = &report.rules;
    let (ids, names): (Vec<_>, Vec<_>) = r.iter().map(|x| kernel_of(report, x.launch)).unzip();
    table(
        fields::RULES,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            (
                "section".into(),
                strings(r.iter().map(|x| Some(x.section.clone())).collect()),
            ),
            (
                "rule".into(),
                strings(r.iter().map(|x| Some(x.rule.clone())).collect()),
            ),
            (
                "rule_type".into(),
                strings(r.iter().map(|x| Some(x.rule_type.clone())).collect()),
            ),
            (
                "title".into(),
                strings(r.iter().map(|x| x.title.clone()).collect()),
            ),
            (
                "message".into(),
                strings(r.iter().map(|x| Some(x.message.clone())).collect()),
            ),
            (
                "speedup_type".into(),
                strings(r.iter().map(|x| x.speedup_type.clone()).collect()),
            ),
            (
                "estimated_speedup_pct".into(),
                floats(r.iter().map(|x| x.estimated_speedup_pct).collect()),
            ),
        ],
    )
}

/// The sections ncu collected for each launch.
pub fn sections_table(report: &Report) -> Result<Table> {
    let s = &report.sections;
    let (ids, names): (Vec<_>, Vec<_>) = s.iter().map(|x| kernel_of(report, x.launch)).unzip();
    table(
        fields::SECTIONS,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            (
                "section_id".into(),
                strings(s.iter().map(|x| x.identifier.clone()).collect()),
            ),
            (
                "section".into(),
                strings(s.iter().map(|x| Some(x.name.clone())).collect()),
            ),
            (
                "metrics".into(),
                ints(s.iter().map(|x| Some(x.metrics as i64)).collect()),
            ),
        ],
    )
}

/// Whether any table may read a metric of this name: every alias candidate, the launch attributes,
/// the warp-stall families and the roofline's counters. A raw page parses these columns while it
/// reads the rows; the others are parsed on first use.
pub fn reads_metric(name: &str) -> bool {
    let (prefix, suffix) = metrics::STALL_CYCLES;
    metrics::fact_metric_names().any(|m| m == name)
        || (name.starts_with("launch__") && !name.contains('.'))
        || (name.starts_with(prefix) && name.ends_with(suffix))
        || name.starts_with(metrics::STALL_SAMPLES)
        || name == metrics::STALL_SAMPLE_TOTAL
        || roofline::reads(name)
}

/// Metric names the facts, stalls and roofline read.
pub fn used_metrics(report: &Report) -> Result<HashSet<String>> {
    let mut used: HashSet<String> = HashSet::new();
    for r in resolve(report)?.into_iter().flatten() {
        used.extend(r.candidate.terms.iter().map(|t| t.to_string()));
    }
    used.extend(metrics::TEXT_FACTS.iter().map(|(_, m)| m.to_string()));
    for axis in ["x", "y", "z"] {
        used.insert(format!("launch__grid_dim_{axis}"));
        used.insert(format!("launch__block_dim_{axis}"));
    }
    for m in [
        "launch__context_id",
        "launch__stream_id",
        "launch__device_id",
    ] {
        used.insert(m.to_string());
    }
    for reason in stall_reasons(report) {
        used.extend([reason.cycles, reason.samples, reason.samples_not_issued]);
    }
    used.insert(metrics::STALL_SAMPLE_TOTAL.to_string());
    used.insert(metrics::OPCODE_MIX.to_string());
    used.extend(roofline::metric_names(report));
    Ok(used)
}

/// Everything seen but not turned into a fact: each unused metric by name (with how many launches
/// carry it), unknown units on unused metrics, and what the reader itself set aside.
pub fn unmodeled(report: &Report) -> Result<Vec<super::model::Unmodeled>> {
    let used = used_metrics(report)?;
    let mut out = report.unmodeled.clone();
    for (col, column) in report.metrics.columns.iter().enumerate() {
        if used.contains(&column.name) {
            continue;
        }
        let count = report.metrics.present_count(col) as u64;
        out.push(super::model::Unmodeled {
            kind: if column.unit_known {
                "metric".to_string()
            } else {
                "metric_unknown_unit".to_string()
            },
            name: if column.unit_known {
                column.name.clone()
            } else {
                format!("{} [{}]", column.name, column.reported_unit)
            },
            count: Some(count),
        });
    }
    Ok(out)
}

/// The long table: one row per launch × metric, values in base units.
pub fn metrics_table(report: &Report) -> Result<Table> {
    let used = used_metrics(report)?;
    let store = &report.metrics;
    let mut ids = Vec::new();
    let mut names = Vec::new();
    let mut metric = Vec::new();
    let mut section = Vec::new();
    let mut label = Vec::new();
    let mut unit = Vec::new();
    let mut value = Vec::new();
    let mut text = Vec::new();
    let mut known = Vec::new();
    let mut used_col = Vec::new();
    for (row, launch) in report.launches.iter().enumerate() {
        for (col, column) in store.columns.iter().enumerate() {
            let cell = store.cell(row, col);
            if matches!(cell, Cell::Missing) && report.format != super::model::SourceFormat::RawCsv
            {
                continue; // long sources list only what each launch carried
            }
            ids.push(Some(launch.id));
            names.push(function_of(launch));
            metric.push(Some(column.name.clone()));
            section.push(column.section.clone());
            label.push(column.label.clone());
            unit.push(Some(column.unit.clone()));
            known.push(Some(column.unit_known));
            used_col.push(Some(used.contains(&column.name)));
            match cell {
                Cell::Number(v) => {
                    value.push(Some(v));
                    text.push(None);
                }
                Cell::Text(t) => {
                    value.push(None);
                    text.push(Some(t.to_string()));
                }
                Cell::Missing => {
                    value.push(None);
                    text.push(None);
                }
            }
        }
    }
    table(
        fields::METRICS,
        vec![
            ("launch_id".into(), ints(ids)),
            ("kernel_function".into(), strings(names)),
            ("metric".into(), strings(metric)),
            ("section".into(), strings(section)),
            ("label".into(), strings(label)),
            ("unit".into(), strings(unit)),
            ("value".into(), floats(value)),
            ("text".into(), strings(text)),
            (
                "unit_known".into(),
                Arc::new(BooleanArray::from(known)) as ArrayRef,
            ),
            (
                "used_by_facts".into(),
                Arc::new(BooleanArray::from(used_col)) as ArrayRef,
            ),
        ],
    )
}
