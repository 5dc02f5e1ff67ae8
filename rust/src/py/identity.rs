//! Bindings for provenance: file identities and the native build description.

use super::{json, run};
use pyo3::prelude::*;
use std::path::PathBuf;

/// `file_identity_json(path) -> bytes`: JSON `{path, size_bytes, sha256}` of a regular file.
#[pyfunction]
pub fn file_identity_json(py: Python<'_>, path: PathBuf) -> PyResult<Vec<u8>> {
    let identity = run(py, || crate::identity::file_identity(&path))?;
    json(&identity)
}

/// `file_identities_table(paths) -> ArrowTable`: `path`, `size_bytes`, `sha256` of many files, in parallel.
#[pyfunction]
pub fn file_identities_table(
    py: Python<'_>,
    paths: Vec<PathBuf>,
) -> PyResult<super::arrow::ArrowTable> {
    let table = run(py, || {
        let identities = crate::identity::file_identities(&paths)?;
        crate::identity::identities_table(&identities)
    })?;
    Ok(table.into())
}

/// `build_info_json() -> bytes`: JSON description of this native build.
#[pyfunction]
pub fn build_info_json() -> PyResult<Vec<u8>> {
    json(&crate::build_info::build_info())
}

/// Panics inside the engine on purpose, so tests can prove a panic surfaces as `InternalError`.
#[pyfunction]
pub fn debug_panic(py: Python<'_>) -> PyResult<()> {
    run(py, || -> crate::error::Result<()> {
        #[allow(clippy::panic)]
        {
            panic!("deliberate panic from gpuopt._native.debug_panic")
        }
    })
}
