//! Bindings for the profile comparison: per-key totals in as little-endian float64 matrices (keys ×
//! captures, row-major), options as JSON; one row per key out as an Arrow table.

use super::arrow::ArrowTable;
use super::run;
use crate::error::{Error, Result};
use crate::profile::{self, codes, DiffOptions, KeyDiff, KeyMatrix};
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

/// `profile_diff_keys(keys, baseline, k_baseline, candidate, k_candidate, options_json) -> table`.
#[pyfunction]
pub fn profile_diff_keys(
    py: Python<'_>,
    keys: Vec<String>,
    baseline: &[u8],
    k_baseline: usize,
    candidate: &[u8],
    k_candidate: usize,
    options_json: &[u8],
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
        };
        table(&profile::diff(&matrix, &options)?)
    })?;
    Ok(table.into())
}
