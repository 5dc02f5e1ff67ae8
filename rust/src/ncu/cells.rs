//! Reading report cells for the fact tables (units checked, text where a number belongs is an error) and
//! building their Arrow tables and columns: the helpers the fact tables share.

use super::codes;
use super::model::{Cell, LaunchIdentity, Report};
use crate::column::Column;
use crate::error::{Error, Result};
use crate::table::Table;
use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use std::sync::Arc;

/// Fails unless column `col` has a known unit among `accepted`.
pub fn check_unit(report: &Report, col: usize, accepted: &[&str], used_for: &str) -> Result<()> {
    let Some(column) = report.metrics.column(col) else {
        return Ok(());
    };
    if !column.unit_known {
        return Err(Error::input(
            codes::UNIT_UNKNOWN,
            format!(
                "metric {} (used for {used_for}) has unit {:?}, which is not in gpuopt's unit table",
                column.name, column.reported_unit
            ),
        )
        .with_expected(format!("a unit normalising to one of {accepted:?}"))
        .with_observed(column.reported_unit.clone()));
    }
    if !accepted.contains(&column.unit.as_str()) {
        return Err(Error::input(
            codes::UNIT_UNEXPECTED,
            format!(
                "metric {} (used for {used_for}) is in {:?} (base {:?})",
                column.name, column.reported_unit, column.unit
            ),
        )
        .with_expected(format!("{accepted:?}"))
        .with_observed(column.unit.clone()));
    }
    Ok(())
}

/// The numeric value of a metric cell for a fact: text where a number belongs is an error.
pub fn number(report: &Report, row: usize, col: usize) -> Result<Option<f64>> {
    match report.metrics.cell(row, col) {
        Cell::Number(v) => Ok(Some(v)),
        Cell::Missing => Ok(None),
        Cell::Text(t) => Err(Error::input(
            codes::VALUE_INVALID,
            format!(
                "metric {} holds {} for launch {}, where a number belongs",
                report
                    .metrics
                    .column(col)
                    .map(|c| c.name.as_str())
                    .unwrap_or_default(),
                crate::shape::of(t.as_bytes()),
                report.launches.get(row).map_or(-1, |l| l.id)
            ),
        )),
    }
}

/// A table from owned column names, exactly as `declared` (`fields.rs`) says.
pub fn table(declared: &[Column], columns: Vec<(String, ArrayRef)>) -> Result<Table> {
    Table::declared(
        declared,
        columns
            .iter()
            .map(|(n, a)| (n.as_str(), a.clone()))
            .collect(),
    )
}

/// The short kernel name secondary tables carry (launch_id is the key to the launches table).
pub fn function_of(launch: &LaunchIdentity) -> Option<String> {
    launch
        .kernel_function
        .clone()
        .or_else(|| Some(launch.kernel_name.clone()))
}

/// An Arrow column of optional strings.
pub fn strings(values: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

/// An Arrow column of optional 64-bit integers.
pub fn ints(values: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(values))
}

/// An Arrow column of optional floats.
pub fn floats(values: Vec<Option<f64>>) -> ArrayRef {
    Arc::new(Float64Array::from(values))
}
