//! Bindings for the profile comparison: per-key totals in as little-endian float64 matrices (keys ×
//! captures, row-major), options as JSON; one row per key out as an Arrow table.

use super::arrow::ArrowTable;
use super::run;
use crate::error::{Error, Result};
use crate::profile::{self, codes, timer, DiffOptions, KeyDiff, KeyMatrix};
use crate::table::Table;
use arrow_array::{ArrayRef, BooleanArray, Float64Array};
use pyo3::prelude::*;
use std::sync::Arc;

fn f64s(what: &str, bytes: &[u8]) -> Result<Vec<f64>> {
    let chunks = bytes.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return Err(Error::input(
            codes::PROFILE_DIFF_INVALID,
            format!("{what} is not a whole number of float64 values"),
        ));
    }
    Ok(chunks
        .map(|c| f64::from_le_bytes(<[u8; 8]>::try_from(c).unwrap_or_default()))
        .collect())
}

fn column(out: &[KeyDiff], f: impl Fn(&KeyDiff) -> Option<f64>) -> ArrayRef {
    Arc::new(Float64Array::from(out.iter().map(f).collect::<Vec<_>>()))
}

fn table(out: &[KeyDiff]) -> Result<Table> {
    Table::from_columns(vec![
        ("baseline_mean_ns", column(out, |d| Some(d.baseline_mean))),
        ("candidate_mean_ns", column(out, |d| Some(d.candidate_mean))),
        ("change_ns", column(out, |d| Some(d.change))),
        ("change_pct", column(out, |d| d.change_pct)),
        ("ci_low_ns", column(out, |d| d.ci_low)),
        ("ci_high_ns", column(out, |d| d.ci_high)),
        ("ci_low_pct", column(out, |d| d.ci_low_pct)),
        ("ci_high_pct", column(out, |d| d.ci_high_pct)),
        ("ci_level", column(out, |d| d.ci_level)),
        ("p_value", column(out, |d| d.p_value)),
        ("q_value", column(out, |d| d.q_value)),
        (
            "flagged",
            Arc::new(BooleanArray::from(
                out.iter().map(|d| d.flagged).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
    ])
}

/// The rounding variance of every value of one side: `instances` (keys × captures, as the values),
/// each capture's timer resolution and the factor its values were scaled by (1 / steps).
fn rounding(
    side: &str,
    instances: Option<&[u8]>,
    q_ns: Option<Vec<f64>>,
    scale: Option<Vec<f64>>,
    k: usize,
) -> Result<Vec<f64>> {
    let (Some(instances), Some(q_ns)) = (instances, q_ns) else {
        return Ok(Vec::new());
    };
    let instances = f64s(&format!("{side} instances"), instances)?;
    let scale = scale.unwrap_or_else(|| vec![1.0; k]);
    if q_ns.len() != k || scale.len() != k || k == 0 || instances.len() % k != 0 {
        return Err(Error::input(
            codes::PROFILE_DIFF_INVALID,
            format!(
                "{side}: {} resolutions and {} scales for {k} captures ({} instance counts)",
                q_ns.len(),
                scale.len(),
                instances.len()
            ),
        ));
    }
    Ok(instances
        .chunks(k)
        .flat_map(|row| {
            row.iter()
                .zip(q_ns.iter().zip(&scale))
                .map(|(n, (q, s))| timer::rounding_variance(*n, *q, *s))
                .collect::<Vec<_>>()
        })
        .collect())
}

/// `profile_diff_keys(keys, baseline, k_baseline, candidate, k_candidate, options_json,
/// baseline_instances=None, candidate_instances=None, baseline_q_ns=None, candidate_q_ns=None,
/// baseline_scale=None, candidate_scale=None) -> table`. With a side's instance matrix and per-capture
/// timer resolutions, the t test's variance is floored by the timer's rounding ([`timer`]).
#[pyfunction]
#[pyo3(signature = (keys, baseline, k_baseline, candidate, k_candidate, options_json,
    baseline_instances = None, candidate_instances = None, baseline_q_ns = None, candidate_q_ns = None,
    baseline_scale = None, candidate_scale = None))]
#[allow(clippy::too_many_arguments)]
pub fn profile_diff_keys(
    py: Python<'_>,
    keys: Vec<String>,
    baseline: &[u8],
    k_baseline: usize,
    candidate: &[u8],
    k_candidate: usize,
    options_json: &[u8],
    baseline_instances: Option<&[u8]>,
    candidate_instances: Option<&[u8]>,
    baseline_q_ns: Option<Vec<f64>>,
    candidate_q_ns: Option<Vec<f64>>,
    baseline_scale: Option<Vec<f64>>,
    candidate_scale: Option<Vec<f64>>,
) -> PyResult<ArrowTable> {
    let table = run(py, move || {
        let options: DiffOptions = serde_json::from_slice(options_json)
            .map_err(|e| Error::input(codes::PROFILE_DIFF_INVALID, format!("options: {e}")))?;
        let matrix = KeyMatrix {
            keys,
            baseline: f64s("baseline", baseline)?,
            k_baseline,
            candidate: f64s("candidate", candidate)?,
            k_candidate,
            baseline_rounding: rounding(
                "baseline",
                baseline_instances,
                baseline_q_ns,
                baseline_scale,
                k_baseline,
            )?,
            candidate_rounding: rounding(
                "candidate",
                candidate_instances,
                candidate_q_ns,
                candidate_scale,
                k_candidate,
            )?,
        };
        table(&profile::diff(&matrix, &options)?)
    })?;
    Ok(table.into())
}
