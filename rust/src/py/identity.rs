//! Bindings for provenance: file identities and the native build description.

use super::{json, run};
use pyo3::prelude::*;
use std::path::PathBuf;

/// `file_identity_json(path, cache_dir=None) -> bytes`: JSON `{identity: {path, size_bytes, sha256,
/// from_cache}, warnings}` of a regular file, through the identity cache in `cache_dir` when given.
#[pyfunction]
#[pyo3(signature = (path, cache_dir=None))]
pub fn file_identity_json(
    py: Python<'_>,
    path: PathBuf,
    cache_dir: Option<PathBuf>,
) -> PyResult<Vec<u8>> {
    let cache = crate::identity::cache::IdentityCache::new(cache_dir);
    let identified = run(py, || crate::identity::identify(&path, &cache))?;
    json(&identified)
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
