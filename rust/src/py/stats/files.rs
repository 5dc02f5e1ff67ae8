//! Sample files read and then compared (paired or unpaired) or used for noise, with what was read.

use super::input::{invalid, options};
use super::noise::noise_with_table;
use crate::error::Result;
use crate::py::arrow::ArrowTable;
use crate::py::{json, run};
use crate::stats::compare::{self, UnpairedBlocks, UnpairedInput};
use crate::stats::sample_file::{self, ReadOptions, SampleFile};
use crate::stats::{noise, tables};
use pyo3::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

/// What was read from one sample file.
#[derive(Serialize)]
struct FileFacts {
    path: String,
    format: &'static str,
    value_column: Option<String>,
    rows: usize,
    calls: usize,
    unmodeled_columns: Vec<String>,
}

impl From<&SampleFile> for FileFacts {
    fn from(f: &SampleFile) -> Self {
        Self {
            path: f.path.clone(),
            format: f.format,
            value_column: f.value_column.clone(),
            rows: f.rows,
            calls: f.calls.len(),
            unmodeled_columns: f.unmodeled_columns.clone(),
        }
    }
}

#[derive(Serialize)]
struct FileComparison<T: Serialize> {
    files: Vec<FileFacts>,
    #[serde(flatten)]
    result: T,
}

fn read_options(bytes: &[u8]) -> Result<ReadOptions> {
    serde_json::from_slice(bytes).map_err(|e| invalid("read_options", &e.to_string()))
}

/// `stats_compare_files(baseline, candidate, read_json, options_json, unpaired)`: reads two sample
/// files and compares them; JSON `{files, comparison}` and the pairs (or values) table.
#[pyfunction]
pub fn stats_compare_files(
    py: Python<'_>,
    baseline: PathBuf,
    candidate: PathBuf,
    read_json: &[u8],
    options_json: &[u8],
    unpaired: bool,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    #[derive(Serialize)]
    struct Doc {
        comparison: compare::Comparison,
    }
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let read = read_options(read_json)?;
        let base = sample_file::read(&baseline, &read)?;
        let cand = sample_file::read(&candidate, &read)?;
        let files = vec![FileFacts::from(&base), FileFacts::from(&cand)];
        if unpaired {
            let blocks = match (
                sample_file::blocks(base.blocks.as_deref(), &read),
                sample_file::blocks(cand.blocks.as_deref(), &read),
            ) {
                (Some(baseline), Some(candidate)) => Some(UnpairedBlocks {
                    baseline,
                    candidate,
                }),
                _ => None,
            };
            let input = UnpairedInput {
                baseline: base.calls,
                candidate: cand.calls,
                blocks,
            };
            let outcome = compare::compare_unpaired(&input, &opts)?;
            let table = tables::unpaired_table(&input, &outcome)?;
            return Ok((
                FileComparison {
                    files,
                    result: Doc {
                        comparison: outcome.comparison,
                    },
                },
                table,
            ));
        }
        let labels = base.blocks.clone();
        let mut input = sample_file::pair(base, cand)?;
        input.blocks = sample_file::blocks(labels.as_deref(), &read);
        let outcome = compare::compare(&input, &opts)?;
        let table = tables::pairs_table(&input, &outcome)?;
        Ok((
            FileComparison {
                files,
                result: Doc {
                    comparison: outcome.comparison,
                },
            },
            table,
        ))
    })?;
    Ok((json(&doc)?, table.into()))
}

/// `stats_noise_file(path, first_column, second_column, read_json, options_json, at)`: noise from one
/// file holding both A/A values of each pair in two columns.
#[pyfunction]
pub fn stats_noise_file(
    py: Python<'_>,
    path: PathBuf,
    first_column: String,
    second_column: String,
    read_json: &[u8],
    options_json: &[u8],
    at: Vec<usize>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    #[derive(Serialize)]
    struct Doc {
        noise: noise::NoiseReport,
    }
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let read = read_options(read_json)?;
        let first = sample_file::read(
            &path,
            &ReadOptions {
                column: Some(first_column),
                ..read.clone()
            },
        )?;
        let second = sample_file::read(
            &path,
            &ReadOptions {
                column: Some(second_column.clone()),
                ..read
            },
        )?;
        let mut facts = FileFacts::from(&first);
        facts.unmodeled_columns.retain(|c| *c != second_column);
        let input = sample_file::pair(first, second)?;
        let (report, table) = noise_with_table(&input, &opts, &at)?;
        Ok((
            FileComparison {
                files: vec![facts],
                result: Doc { noise: report },
            },
            table,
        ))
    })?;
    Ok((json(&doc)?, table.into()))
}
