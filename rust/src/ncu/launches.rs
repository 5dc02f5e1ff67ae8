//! Per-launch facts (one row per launch, never averaged): the launches table and a launch's device,
//! compute capability and launch dimensions.

use super::cells::{floats, ints, strings, table};
use super::fields;
use super::metrics::FACTS;
use super::model::{Cell, LaunchIdentity, Report};
use super::resolve::{fact_value, resolve};
use crate::error::Result;
use crate::table::Table;
use arrow_array::ArrayRef;

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

pub(super) fn dims(
    report: &Report,
    row: usize,
    launch: &LaunchIdentity,
    grid: bool,
) -> [Option<i64>; 3] {
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
