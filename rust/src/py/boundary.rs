//! The boundary helper: release the GIL around engine work, turn panics into `InternalError`, and map the
//! crate's `Error` onto the `gpuopt.errors` hierarchy (chosen in Python by `kind` and `code`).

use crate::error::{codes, Error};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `work` without the GIL; a panic inside it becomes an internal error instead of aborting.
pub(crate) fn run<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> crate::error::Result<T> + Send,
{
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(work)));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(to_pyerr(err)),
        Err(payload) => Err(to_pyerr(panic_error(payload.as_ref()))),
    }
}

fn panic_error(payload: &(dyn std::any::Any + Send)) -> Error {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_string());
    Error::internal(
        codes::INTERNAL_PANIC,
        format!("the native engine panicked: {detail}"),
    )
}

/// Builds the matching `gpuopt.errors` exception; falls back to RuntimeError if the package is broken.
pub(crate) fn to_pyerr(err: Error) -> PyErr {
    Python::attach(|py| match build_exception(py, &err) {
        Ok(exc) => PyErr::from_value(exc),
        Err(import_failure) => {
            let msg = format!("{err} [gpuopt.errors unavailable: {import_failure}]");
            pyo3::exceptions::PyRuntimeError::new_err(msg)
        }
    })
}

fn build_exception<'py>(py: Python<'py>, err: &Error) -> PyResult<Bound<'py, PyAny>> {
    let factory = py.import("gpuopt.errors")?.getattr("from_native")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("path", err.path.as_deref())?;
    kwargs.set_item("expected", err.expected.as_deref())?;
    kwargs.set_item("observed", err.observed.as_deref())?;
    let kind = match err.kind {
        crate::error::ErrorKind::Input => "input",
        crate::error::ErrorKind::Absent => "absent",
        crate::error::ErrorKind::Internal => "internal",
    };
    factory.call((kind, err.code, err.message.as_str()), Some(&kwargs))
}
