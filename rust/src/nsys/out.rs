//! Column builders for the engine's output tables (Arrow arrays from plain vectors).

use super::codes;
use crate::column::Column;
use crate::error::{Error, Result};
use crate::table::Table;
use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use std::sync::Arc;

/// A table under construction: named columns appended in order, built only as `declared` says
/// (`nsys/fields.rs`).
pub struct Columns {
    declared: &'static [Column],
    columns: Vec<(&'static str, ArrayRef)>,
}

impl Columns {
    pub fn of(declared: &'static [Column]) -> Self {
        Self {
            declared,
            columns: Vec::new(),
        }
    }

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

    /// The table, or an internal error when a column differs from its declaration.
    pub fn build(self) -> Result<Table> {
        Table::declared(self.declared, self.columns)
    }
}

/// A total (i128 internally) as an Arrow i64; a total past `i64::MAX` ns (292 years) is an error
/// naming the column, never a saturated or wrapped number.
pub fn total_i64(total: i128, column: &str) -> Result<i64> {
    i64::try_from(total).map_err(|_| {
        Error::input(
            codes::SUM_OVERFLOW,
            format!("the sum in {column} overflows a 64-bit integer: {total} (a real capture does not hold 292 years of time or 9.2 EB)"),
        )
        .with_expected(format!("{column} <= {}", i64::MAX))
        .with_observed(total.to_string())
    })
}

/// `a + b` for a running i64 sum of ns or bytes, an error naming `column` on overflow.
pub fn add_i64(a: i64, b: i64, column: &str) -> Result<i64> {
    total_i64(i128::from(a) + i128::from(b), column)
}

/// The checked sum of i64 values (ns or bytes), an error naming `column` on overflow.
pub fn sum_i64(values: impl IntoIterator<Item = i64>, column: &str) -> Result<i64> {
    total_i64(values.into_iter().map(i128::from).sum(), column)
}

/// `part` as a percentage of `whole`, 0 when the whole is 0.
pub fn pct(part: i128, whole: i128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_past_i64_are_errors_naming_the_column() {
        assert_eq!(total_i64(i128::from(i64::MAX), "x").ok(), Some(i64::MAX));
        let err = total_i64(i128::from(i64::MAX) + 1, "total_time_ns").err();
        assert_eq!(err.as_ref().map(|e| e.code), Some(codes::SUM_OVERFLOW));
        assert!(err.is_some_and(|e| e.message.contains("total_time_ns")));
        assert!(add_i64(i64::MAX, 1, "c").is_err());
        assert_eq!(sum_i64([1, 2, 3], "c").ok(), Some(6));
    }
}
