//! Small constructors for Arrow columns, so table code reads as a list of named columns.

use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use std::sync::Arc;

pub fn int(values: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::from(values))
}

pub fn opt_int(values: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(values))
}

pub fn float(values: Vec<f64>) -> ArrayRef {
    Arc::new(Float64Array::from(values))
}

pub fn opt_float(values: Vec<Option<f64>>) -> ArrayRef {
    Arc::new(Float64Array::from(values))
}

pub fn text<S: AsRef<str>>(values: &[S]) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(
        values.iter().map(AsRef::as_ref),
    ))
}

pub fn opt_text(values: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

/// `part / whole` in percent; 0 when `whole` is 0.
pub fn pct(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        #[allow(clippy::cast_precision_loss)]
        let ratio = part as f64 / whole as f64;
        100.0 * ratio
    }
}

/// Rows as u64 counts become Int64 (Arrow consumers expect signed counts).
pub fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
