//! Comparisons of values handed over as buffers: paired, unpaired, a constraint and a guardrail.

use super::input::{calls, invalid, options, paired, Extras};
use crate::py::arrow::ArrowTable;
use crate::py::{json, run};
use crate::stats::compare::{self, UnpairedInput};
use crate::stats::constraint::{self, GuardrailMode, Limit};
use crate::stats::tables;
use crate::stats::verdict::LimitOp;
use pyo3::prelude::*;

/// `stats_compare(...) -> (bytes, ArrowTable)`: a paired comparison (JSON) and its pairs table.
#[pyfunction]
#[pyo3(signature = (baseline, candidate, options_json, *, baseline_offsets=None, candidate_offsets=None,
    cases=None, case_names=None, case_weights=None, orders=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_compare(
    py: Python<'_>,
    baseline: &[u8],
    candidate: &[u8],
    options_json: &[u8],
    baseline_offsets: Option<&[u8]>,
    candidate_offsets: Option<&[u8]>,
    cases: Option<&[u8]>,
    case_names: Option<Vec<String>>,
    case_weights: Option<Vec<f64>>,
    orders: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let input = paired(
            calls("baseline", baseline, baseline_offsets)?,
            calls("candidate", candidate, candidate_offsets)?,
            Extras {
                cases,
                case_names,
                case_weights,
                orders,
                valid,
            },
        )?;
        let outcome = compare::compare(&input, &opts)?;
        let table = tables::pairs_table(&input, &outcome)?;
        Ok((outcome.comparison, table))
    })?;
    Ok((json(&doc)?, table.into()))
}

/// `stats_compare_unpaired(...) -> (bytes, ArrowTable)`: two independent samples.
#[pyfunction]
#[pyo3(signature = (baseline, candidate, options_json, *, baseline_offsets=None, candidate_offsets=None))]
pub fn stats_compare_unpaired(
    py: Python<'_>,
    baseline: &[u8],
    candidate: &[u8],
    options_json: &[u8],
    baseline_offsets: Option<&[u8]>,
    candidate_offsets: Option<&[u8]>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let input = UnpairedInput {
            baseline: calls("baseline", baseline, baseline_offsets)?,
            candidate: calls("candidate", candidate, candidate_offsets)?,
            blocks: None,
        };
        let outcome = compare::compare_unpaired(&input, &opts)?;
        let table = tables::unpaired_table(&input, &outcome)?;
        Ok((outcome.comparison, table))
    })?;
    Ok((json(&doc)?, table.into()))
}

/// `stats_constraint(baseline, candidate, options_json, limit_json, ...) -> bytes`: a relative or
/// absolute non-inferiority constraint (JSON `ConstraintResult`).
#[pyfunction]
#[pyo3(signature = (baseline, candidate, options_json, limit_json, *, baseline_offsets=None,
    candidate_offsets=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_constraint(
    py: Python<'_>,
    baseline: &[u8],
    candidate: &[u8],
    options_json: &[u8],
    limit_json: &[u8],
    baseline_offsets: Option<&[u8]>,
    candidate_offsets: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<Vec<u8>> {
    let result = run(py, || {
        let opts = options(options_json)?;
        let limit: Limit =
            serde_json::from_slice(limit_json).map_err(|e| invalid("limit", &e.to_string()))?;
        let input = paired(
            calls("baseline", baseline, baseline_offsets)?,
            calls("candidate", candidate, candidate_offsets)?,
            Extras {
                cases: None,
                case_names: None,
                case_weights: None,
                orders: None,
                valid,
            },
        )?;
        constraint::constraint(&input, &opts, limit)
    })?;
    json(&result)
}

/// `stats_guardrail(candidate, options_json, op, limit, mode, ...) -> bytes`: an absolute guardrail on
/// the candidate's values (JSON `GuardrailResult`).
#[pyfunction]
#[pyo3(signature = (candidate, options_json, op, limit, mode, *, candidate_offsets=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_guardrail(
    py: Python<'_>,
    candidate: &[u8],
    options_json: &[u8],
    op: &str,
    limit: f64,
    mode: &str,
    candidate_offsets: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<Vec<u8>> {
    let result = run(py, || {
        let opts = options(options_json)?;
        let op = match op {
            "le" => LimitOp::Le,
            "ge" => LimitOp::Ge,
            _ => return Err(invalid("op", "le or ge")),
        };
        let mode = match mode {
            "every_call" => GuardrailMode::EveryCall,
            "ci" => GuardrailMode::Ci,
            _ => return Err(invalid("mode", "every_call or ci")),
        };
        let cand = calls("candidate", candidate, candidate_offsets)?;
        let valid: Option<Vec<bool>> = valid.map(|v| v.iter().map(|&b| b != 0).collect());
        if let Some(v) = &valid {
            if v.len() != cand.len() {
                return Err(invalid("valid", "one flag per call"));
            }
        }
        constraint::guardrail(&cand, valid.as_deref(), &opts, op, limit, mode)
    })?;
    json(&result)
}
