//! A/A noise from two buffers of values: the noise report and its pairs table.

use super::input::{calls, options, paired, Extras};
use crate::error::Result;
use crate::py::arrow::ArrowTable;
use crate::py::{json, run};
use crate::stats::compare::{self, PairedInput};
use crate::stats::{noise, tables, CompareOptions};
use pyo3::prelude::*;

/// `stats_noise(first, second, options_json, at, ...) -> (bytes, ArrowTable)`: noise from A/A pairs.
#[pyfunction]
#[pyo3(signature = (first, second, options_json, at, *, first_offsets=None, second_offsets=None,
    orders=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_noise(
    py: Python<'_>,
    first: &[u8],
    second: &[u8],
    options_json: &[u8],
    at: Vec<usize>,
    first_offsets: Option<&[u8]>,
    second_offsets: Option<&[u8]>,
    orders: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let input = paired(
            calls("first", first, first_offsets)?,
            calls("second", second, second_offsets)?,
            Extras {
                cases: None,
                case_names: None,
                case_weights: None,
                orders,
                valid,
            },
        )?;
        noise_with_table(&input, &opts, &at)
    })?;
    Ok((json(&doc)?, table.into()))
}

pub(super) fn noise_with_table(
    input: &PairedInput,
    opts: &CompareOptions,
    at: &[usize],
) -> Result<(noise::NoiseReport, crate::table::Table)> {
    let outcome = noise::noise(input, opts, at)?;
    let rows = compare::PairedOutcome {
        comparison: outcome.report.aa.clone(),
        rows: outcome.rows,
    };
    let table = tables::pairs_table(input, &rows)?;
    Ok((outcome.report, table))
}
