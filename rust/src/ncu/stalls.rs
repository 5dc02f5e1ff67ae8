//! Warp stalls: the stall reasons a report carries and one row per launch × reason.

use super::cells::{check_unit, floats, function_of, ints, number, strings, table};
use super::fields;
use super::metrics;
use super::model::Report;
use crate::error::Result;
use crate::table::Table;

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
