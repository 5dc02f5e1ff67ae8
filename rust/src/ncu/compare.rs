//! Per-kernel deltas of the same metrics between two reports. Kernels are matched by name; within a
//! report the launches of one kernel are summarised by their mean, and every row states how many
//! values each side averaged. Kernels present on one side only appear with the other side empty.

use super::cells::table;
use super::codes;
use super::fields;
use super::kernels::Stats;
use super::metrics::FACTS;
use super::model::{Cell, Report};
use super::resolve::{fact_matrix, resolve};
use crate::error::{Error, Result};
use crate::table::Table;
use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use std::collections::HashMap;
use std::sync::Arc;

/// `name → values per launch` of every compared metric, and the kernel order of first appearance.
struct Side {
    order: Vec<String>,
    launches: HashMap<String, usize>,
    values: HashMap<(String, String), Vec<f64>>,
}

fn kernel_key(report: &Report, row: usize) -> String {
    report.launches.get(row).map_or_else(String::new, |l| {
        l.kernel_demangled
            .clone()
            .unwrap_or_else(|| l.kernel_name.clone())
    })
}

fn side(report: &Report, extra: &[String]) -> Result<Side> {
    let resolved = resolve(report)?;
    let facts = fact_matrix(report, &resolved)?;
    let mut s = Side {
        order: Vec::new(),
        launches: HashMap::new(),
        values: HashMap::new(),
    };
    for row in 0..report.launches.len() {
        let key = kernel_key(report, row);
        let count = s.launches.entry(key.clone()).or_insert(0);
        if *count == 0 {
            s.order.push(key.clone());
        }
        *count += 1;
        let row_facts = facts.get(row).cloned().unwrap_or_default();
        for (fact, value) in FACTS.iter().zip(row_facts) {
            if let Some(v) = value {
                s.values
                    .entry((key.clone(), fact.name.to_string()))
                    .or_default()
                    .push(v);
            }
        }
        for metric in extra {
            let Some(col) = report.metrics.column_index(metric) else {
                continue;
            };
            if let Cell::Number(v) = report.metrics.cell(row, col) {
                s.values
                    .entry((key.clone(), metric.clone()))
                    .or_default()
                    .push(v);
            }
        }
    }
    Ok(s)
}

fn unit_of(a: &Report, b: &Report, metric: &str) -> Result<Option<String>> {
    if let Some(f) = FACTS.iter().find(|f| f.name == metric) {
        return Ok(Some(f.unit.to_string()));
    }
    let unit = |r: &Report| {
        r.metrics
            .column_index(metric)
            .and_then(|c| r.metrics.column(c))
            .map(|c| (c.unit.clone(), c.unit_known))
    };
    match (unit(a), unit(b)) {
        (Some((ua, ka)), Some((ub, kb))) if ua != ub || ka != kb => Err(Error::input(
            codes::UNIT_INCONSISTENT,
            format!("metric {metric} is in {ua:?} in A and {ub:?} in B"),
        )),
        (None, None) => Err(Error::input(
            codes::COLUMN_MISSING,
            format!("neither report carries metric {metric}"),
        )),
        (Some((u, _)), _) | (_, Some((u, _))) => Ok(Some(u)),
    }
}

/// One row per kernel × metric: A and B means (with counts), delta and relative delta.
pub fn compare_table(a: &Report, b: &Report, extra_metrics: &[String]) -> Result<Table> {
    let sa = side(a, extra_metrics)?;
    let sb = side(b, extra_metrics)?;
    let mut kernels = sa.order.clone();
    kernels.extend(
        sb.order
            .iter()
            .filter(|k| !sa.launches.contains_key(*k))
            .cloned(),
    );
    let mut metrics: Vec<(String, Option<String>)> = FACTS
        .iter()
        .map(|f| (f.name.to_string(), Some(f.unit.to_string())))
        .collect();
    for m in extra_metrics {
        metrics.push((m.clone(), unit_of(a, b, m)?));
    }
    let mut cols = Columns::default();
    for kernel in &kernels {
        let la = sa.launches.get(kernel).copied().unwrap_or(0);
        let lb = sb.launches.get(kernel).copied().unwrap_or(0);
        for (metric, unit) in &metrics {
            let key = (kernel.clone(), metric.clone());
            let va = Stats::of(sa.values.get(&key).into_iter().flatten().copied());
            let vb = Stats::of(sb.values.get(&key).into_iter().flatten().copied());
            if va.count == 0 && vb.count == 0 {
                continue;
            }
            let (ma, mb) = (va.mean(), vb.mean());
            let delta = ma.zip(mb).map(|(x, y)| y - x);
            let pct = ma
                .zip(delta)
                .and_then(|(x, d)| (x != 0.0).then(|| 100.0 * d / x));
            cols.kernel.push(Some(kernel.clone()));
            cols.metric.push(Some(metric.clone()));
            cols.unit.push(unit.clone());
            cols.a_launches.push(Some(la as i64));
            cols.b_launches.push(Some(lb as i64));
            cols.a_n.push(Some(va.count as i64));
            cols.b_n.push(Some(vb.count as i64));
            cols.a_mean.push(ma);
            cols.b_mean.push(mb);
            cols.delta.push(delta);
            cols.delta_pct.push(pct);
        }
    }
    cols.into_table()
}

#[derive(Default)]
struct Columns {
    kernel: Vec<Option<String>>,
    metric: Vec<Option<String>>,
    unit: Vec<Option<String>>,
    a_launches: Vec<Option<i64>>,
    b_launches: Vec<Option<i64>>,
    a_n: Vec<Option<i64>>,
    b_n: Vec<Option<i64>>,
    a_mean: Vec<Option<f64>>,
    b_mean: Vec<Option<f64>>,
    delta: Vec<Option<f64>>,
    delta_pct: Vec<Option<f64>>,
}

impl Columns {
    fn into_table(self) -> Result<Table> {
        let s = |v: Vec<Option<String>>| Arc::new(StringArray::from(v)) as ArrayRef;
        let i = |v: Vec<Option<i64>>| Arc::new(Int64Array::from(v)) as ArrayRef;
        let f = |v: Vec<Option<f64>>| Arc::new(Float64Array::from(v)) as ArrayRef;
        table(
            fields::COMPARE,
            vec![
                ("kernel_name".into(), s(self.kernel)),
                ("metric".into(), s(self.metric)),
                ("unit".into(), s(self.unit)),
                ("a_launches".into(), i(self.a_launches)),
                ("b_launches".into(), i(self.b_launches)),
                ("a_values".into(), i(self.a_n)),
                ("b_values".into(), i(self.b_n)),
                ("a_mean".into(), f(self.a_mean)),
                ("b_mean".into(), f(self.b_mean)),
                ("delta".into(), f(self.delta)),
                ("delta_pct".into(), f(self.delta_pct)),
            ],
        )
    }
}
