//! The cell parsers (a number, an AB/BA order) and the errors every sample-file reader gives.

use super::model::Row;
use crate::error::{Error, Result};
use crate::stats::codes;
use crate::stats::schedule::Order;

pub(super) fn format_error(path: &str, line: u64, message: impl Into<String>) -> Error {
    Error::input(
        "format_invalid",
        format!("{path}:{line}: {}", message.into()),
    )
    .with_path(format!("{path}:{line}"))
}

pub(super) fn column_missing(path: &str, name: &str, present: &[String]) -> Error {
    Error::input(
        codes::COLUMN_MISSING,
        format!("{path} has no column {name:?}"),
    )
    .with_path(path.to_string())
    .with_expected(format!("a column named {name:?}"))
    .with_observed(format!("{} other columns", present.len()))
}

/// What to pass when several columns could hold the value: the options that name them. The names
/// themselves are not repeated (they are the file's first line: see the module documentation).
pub(super) fn value_hint(candidates: usize) -> String {
    format!(
        "--column NAME naming the value among the {candidates} candidate columns (and --key-column NAME \
         for a column that pairs rows, e.g. a pair or run id), or a single value column, or one named \
         \"value\""
    )
}

pub(super) fn check_row(path: &str, row: &Row) -> Result<()> {
    for &v in &row.values {
        let code = if !v.is_finite() {
            codes::NONFINITE_METRIC_VALUE
        } else if v <= 0.0 {
            codes::NONPOSITIVE_METRIC_VALUE
        } else {
            continue;
        };
        let which = match &row.key {
            Some(k) => format!(" (pair key {k:?})"),
            None => String::new(),
        };
        return Err(Error::input(
            code,
            format!(
                "{path}:{}{which}: value {v} is not a finite number > 0",
                row.line
            ),
        )
        .with_path(format!("{path}:{}", row.line))
        .with_expected("a finite value > 0")
        .with_observed(v.to_string()));
    }
    Ok(())
}

pub(super) fn parse_order(path: &str, line: u64, text: &str) -> Result<Order> {
    match text.trim().to_ascii_uppercase().as_str() {
        "AB" => Ok(Order::Ab),
        "BA" => Ok(Order::Ba),
        _ => Err(format_error(
            path,
            line,
            format!(
                "the order cell is neither AB nor BA ({})",
                crate::shape::of(text.as_bytes())
            ),
        )),
    }
}

pub(super) fn parse_number(path: &str, line: u64, text: &str) -> Result<f64> {
    text.trim().parse::<f64>().map_err(|_| {
        format_error(path, line, "the value is not a number")
            .with_expected("a decimal number")
            .with_observed(crate::shape::of(text.as_bytes()))
    })
}
