//! `ArrowTable`: a native table handed to Python through the Arrow PyCapsule stream interface, so that
//! `polars.DataFrame(table)` takes the columns without a Python object per row.

use crate::table::Table;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::RecordBatchIterator;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

#[pyclass(frozen, module = "gpuopt._native")]
pub struct ArrowTable {
    table: Table,
}

impl From<Table> for ArrowTable {
    fn from(table: Table) -> Self {
        Self { table }
    }
}

#[pymethods]
impl ArrowTable {
    /// Exports the table as an `arrow_array_stream` capsule (the Arrow PyCapsule protocol).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // Schema negotiation is optional in the protocol; the table is offered as it is.
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(
            self.table.batches.clone().into_iter().map(Ok),
            self.table.schema.clone(),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.table.num_rows()
    }

    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.table.column_names()
    }

    fn __len__(&self) -> usize {
        self.table.num_rows()
    }
}
