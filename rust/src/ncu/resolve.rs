//! Facts resolved against one report: the metric columns each is read from, its value per launch.

use super::cells::{check_unit, number};
use super::metrics::{Candidate, Fact, FACTS};
use super::model::Report;
use crate::error::Result;
use serde::Serialize;

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

pub(super) fn fact_value(report: &Report, row: usize, resolved: &Resolved) -> Result<Option<f64>> {
    let mut sum = 0.0;
    for &col in &resolved.columns {
        match number(report, row, col)? {
            // Every fact is a duration, count, size, clock, rate or share: none can be below 0.
            Some(v) if v < 0.0 => return Err(negative(report, row, col, resolved.fact.name, v)),
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

#[cold]
fn negative(report: &Report, row: usize, col: usize, fact: &str, v: f64) -> crate::error::Error {
    let metric = report.metrics.column(col).map_or("?", |c| c.name.as_str());
    crate::error::Error::input(
        super::codes::VALUE_INVALID,
        format!(
            "metric {metric} is negative for launch {} (read for {fact}, which cannot be)",
            report.launches.get(row).map_or(-1, |l| l.id)
        ),
    )
    .with_expected(format!("{metric} >= 0"))
    .with_observed(v.to_string())
}
