//! Tables as Arrow record batches: what every engine returns and what Python sees as a polars DataFrame.

use crate::error::{Error, Result};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use std::sync::Arc;

/// A schema and its batches (one or more); cheap to clone (batches share their buffers).
#[derive(Debug, Clone)]
pub struct Table {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl Table {
    /// Builds a one-batch table from named columns (all of the same length).
    pub fn from_columns(columns: Vec<(&str, ArrayRef)>) -> Result<Self> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let arrays = columns.into_iter().map(|(_, a)| a).collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| {
            Error::internal("table_invalid", format!("cannot assemble a table: {e}"))
        })?;
        Ok(Self {
            schema,
            batches: vec![batch],
        })
    }

    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    pub fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    #[test]
    fn builds_a_table_from_columns() {
        let table = Table::from_columns(vec![
            (
                "name",
                Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
            ),
            (
                "duration_ns",
                Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
            ),
        ]);
        let table = table.ok();
        assert_eq!(table.as_ref().map(Table::num_rows), Some(2));
        assert_eq!(
            table.map(|t| t.column_names()),
            Some(vec!["name".to_string(), "duration_ns".to_string()])
        );
    }

    #[test]
    fn mismatched_lengths_are_an_error() {
        let table = Table::from_columns(vec![
            ("a", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
            ("b", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        ]);
        assert!(table.is_err());
    }
}
