//! The only place that uses pyo3: thin functions that convert arguments, call an engine and map errors.

mod arrow;
mod boundary;
mod identity;
mod nsys;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _native {
    #[pymodule_export]
    use super::arrow::ArrowTable;
    #[pymodule_export]
    use super::identity::{
        build_info_json, debug_panic, file_identities_table, file_identity_json,
    };
    #[pymodule_export]
    use super::nsys::{nsys_open, nsys_stats_reports, NsysReport};

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("BUILD_ID", crate::build_info::build_info().build_id)?;
        Ok(())
    }
}

/// Serializes a document for Python; documents cross the boundary as JSON bytes.
pub(crate) fn json<T: serde::Serialize>(value: &T) -> PyResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| {
        boundary::to_pyerr(crate::error::Error::internal(
            "serialize_failed",
            e.to_string(),
        ))
    })
}

pub(crate) use boundary::run;
