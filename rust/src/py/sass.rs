//! Bindings for SASS listings: one scan returns the summary document and three tables.

use super::arrow::ArrowTable;
use super::{json, run};
use crate::sass::{self, Catalog, Listing, ScanOptions};
use pyo3::prelude::*;
use std::path::PathBuf;

type ScanResult = (Vec<u8>, ArrowTable, ArrowTable, ArrowTable);

fn options(
    catalog_json: Option<&[u8]>,
    evidence_limit: usize,
) -> crate::error::Result<ScanOptions> {
    let catalog = match catalog_json {
        Some(bytes) => Catalog::parse(bytes)?,
        None => Catalog::builtin()?,
    };
    Ok(ScanOptions {
        catalog: Some(catalog),
        evidence_limit,
        ..ScanOptions::default()
    })
}

fn tables(listing: Listing) -> crate::error::Result<(sass::Summary, [crate::table::Table; 3])> {
    let functions = sass::functions_table(&listing)?;
    let opcodes = sass::opcodes_table(&listing)?;
    let signatures = match &listing.catalog {
        Some(catalog) => sass::signatures_table(&listing, catalog)?,
        None => sass::signatures_table(&listing, &Catalog::builtin()?)?,
    };
    Ok((listing.summary(), [functions, opcodes, signatures]))
}

fn finish(result: (sass::Summary, [crate::table::Table; 3])) -> PyResult<ScanResult> {
    let (summary, [functions, opcodes, signatures]) = result;
    Ok((
        json(&summary)?,
        functions.into(),
        opcodes.into(),
        signatures.into(),
    ))
}

/// `sass_scan_path(path, catalog_json, evidence_limit) -> (summary_json, functions, opcodes, signatures)`.
#[pyfunction]
#[pyo3(signature = (path, catalog_json = None, evidence_limit = 3))]
pub fn sass_scan_path(
    py: Python<'_>,
    path: PathBuf,
    catalog_json: Option<Vec<u8>>,
    evidence_limit: usize,
) -> PyResult<ScanResult> {
    let result = run(py, || {
        let opts = options(catalog_json.as_deref(), evidence_limit)?;
        tables(sass::scan_path(&path, opts)?)
    })?;
    finish(result)
}

/// `sass_scan_text(text, catalog_json, evidence_limit)`: the same for a listing held in memory.
#[pyfunction]
#[pyo3(signature = (text, catalog_json = None, evidence_limit = 3))]
pub fn sass_scan_text(
    py: Python<'_>,
    text: Vec<u8>,
    catalog_json: Option<Vec<u8>>,
    evidence_limit: usize,
) -> PyResult<ScanResult> {
    let result = run(py, || {
        let opts = options(catalog_json.as_deref(), evidence_limit)?;
        tables(sass::scan_bytes(&text, opts)?)
    })?;
    finish(result)
}

/// `sass_builtin_catalog() -> bytes`: the signature catalog compiled into this build.
#[pyfunction]
pub fn sass_builtin_catalog() -> Vec<u8> {
    sass::signatures::BUILTIN.as_bytes().to_vec()
}
