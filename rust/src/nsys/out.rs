//! Column builders for the engine's output tables (Arrow arrays from plain vectors).

use crate::error::Result;
use crate::table::Table;
use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use std::sync::Arc;

/// A table under construction: named columns appended in order.
#[derive(Default)]
pub struct Columns {
    columns: Vec<(&'static str, ArrayRef)>,
}

impl Columns {
    pub fn int(mut self, name: &'static str, values: Vec<i64>) -> Self {
        self.columns
            .push((name, Arc::new(Int64Array::from(values)) as ArrayRef));
        self
    }

    pub fn opt_int(mut self, name: &'static str, values: Vec<Option<i64>>) -> Self {
        self.columns
            .push((name, Arc::new(Int64Array::from(values)) as ArrayRef));
        self
    }

    pub fn float(mut self, name: &'static str, values: Vec<f64>) -> Self {
        self.columns
            .push((name, Arc::new(Float64Array::from(values)) as ArrayRef));
        self
    }

    pub fn opt_float(mut self, name: &'static str, values: Vec<Option<f64>>) -> Self {
        self.columns
            .push((name, Arc::new(Float64Array::from(values)) as ArrayRef));
        self
    }

    pub fn text(mut self, name: &'static str, values: Vec<String>) -> Self {
        self.columns
            .push((name, Arc::new(StringArray::from(values)) as ArrayRef));
        self
    }

    pub fn opt_text(mut self, name: &'static str, values: Vec<Option<String>>) -> Self {
        self.columns
            .push((name, Arc::new(StringArray::from(values)) as ArrayRef));
        self
    }

    pub fn build(self) -> Result<Table> {
        Table::from_columns(self.columns)
    }
}

/// A total (i128 internally) as an Arrow i64, saturating (a total beyond 292 years of ns is not real).
pub fn total_i64(total: i128) -> i64 {
    i64::try_from(total).unwrap_or(i64::MAX)
}

/// `part` as a percentage of `whole`, 0 when the whole is 0.
pub fn pct(part: i128, whole: i128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}
