//! Binding for the column declarations of every table (`crate::fields`).

use super::json;
use pyo3::prelude::*;

/// `table_fields_json() -> bytes`: JSON `[{key, columns: [{name, dtype, unit, meaning}]}]`, sorted by key.
#[pyfunction]
pub fn table_fields_json() -> PyResult<Vec<u8>> {
    json(&crate::fields::tables())
}
