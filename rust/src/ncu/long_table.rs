//! The long metric table (one row per launch × metric), which metrics the tables read, and the rest.

use super::cells::{floats, function_of, ints, strings, table};
use super::fields;
use super::metrics;
use super::model::{Cell, Report, SourceFormat, Unmodeled};
use super::resolve::resolve;
use super::roofline;
use super::stalls::stall_reasons;
use crate::error::Result;
use crate::table::Table;
use arrow_array::{ArrayRef, BooleanArray};
use std::collections::HashSet;
use std::sync::Arc;

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
pub fn unmodeled(report: &Report) -> Result<Vec<Unmodeled>> {
    let used = used_metrics(report)?;
    let mut out = report.unmodeled.clone();
    for (col, column) in report.metrics.columns.iter().enumerate() {
        if used.contains(&column.name) {
            continue;
        }
        let count = report.metrics.present_count(col) as u64;
        out.push(Unmodeled {
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
            if matches!(cell, Cell::Missing) && report.format != SourceFormat::RawCsv {
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
