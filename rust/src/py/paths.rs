//! Bindings for call paths (`gpuopt torch paths`).

use super::arrow::ArrowTable;
use super::run;
use super::torch_trace::TorchTrace;
use crate::torch_trace::paths;
use pyo3::prelude::*;

/// `torch_paths(trace) -> ArrowTable`: one row per distinct host path, inclusive/exclusive times.
#[pyfunction]
pub fn torch_paths(py: Python<'_>, trace: &TorchTrace) -> PyResult<ArrowTable> {
    let set = trace.set();
    Ok(run(py, move || paths::table(&set))?.into())
}

/// `torch_kernel_paths(trace) -> ArrowTable`: GPU events per (path, call, launch, name, kind).
#[pyfunction]
pub fn torch_kernel_paths(py: Python<'_>, trace: &TorchTrace) -> PyResult<ArrowTable> {
    let set = trace.set();
    Ok(run(py, move || paths::kernels_table(&set))?.into())
}
