//! Column declarations: the one place a table column's name, type, unit and meaning are written.
//!
//! Every engine declares the columns of each table it builds next to the code that computes them
//! (`nsys/fields.rs`, `torch_trace/fields.rs`, ...), and builds the table through
//! [`Table::declared`], which refuses a column that is not declared, declared twice, out of order or of
//! another type. `crate::fields` gathers every declaration; Python reads them through one binding and
//! generates `gpuopt schema AREA.TABLE`, `references/fields.md`, the units people's tables scale by and
//! the column lists of the agent tools from them.

use crate::error::{Error, Result};
use crate::table::Table;
use arrow_array::ArrayRef;
use arrow_schema::DataType;
use serde::Serialize;

/// What a column's numbers count or measure (people's tables scale by it: ns become ms, bytes MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Nanoseconds (durations, and instants on the capture clock or from a trace's origin).
    Ns,
    Bytes,
    /// Bytes per second.
    BytesPerS,
    /// Gigabytes per second, 1 GB = 1e9 bytes.
    Gbps,
    /// Percent (0-100).
    Pct,
    Hz,
    Cycles,
    /// Floating-point operations (an FMA counts 2).
    Flop,
    FlopPerS,
    /// Tera (1e12) floating-point operations per second.
    TflopPerS,
    FlopPerByte,
    /// A number of things (launches, calls, instructions, threads, ...).
    Count,
    /// A dimensionless number (a ratio, a logarithm, a probability).
    Ratio,
    /// A number that names something (process, thread, device, stream, launch, rank, position).
    Id,
    /// The unit of the values read from the input (`gpuopt stats`: whatever the sample file holds).
    Input,
    /// The unit the row itself names in its `unit` column (`ncu table metrics`, `ncu compare`).
    PerRow,
    /// Not a number: text, a flag, a list.
    None,
}

/// The Arrow type a column is built with (what polars shows as its dtype).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Dtype {
    Int64,
    UInt32,
    UInt64,
    Float64,
    #[serde(rename = "String")]
    Text,
    Boolean,
    #[serde(rename = "List(String)")]
    TextList,
    /// A list of records; its fields are part of the meaning.
    #[serde(rename = "List(Struct)")]
    RecordList,
}

impl Dtype {
    /// Whether an Arrow array of type `data_type` is of this declared type.
    pub fn matches(self, data_type: &DataType) -> bool {
        match (self, data_type) {
            (Self::Int64, DataType::Int64)
            | (Self::UInt32, DataType::UInt32)
            | (Self::UInt64, DataType::UInt64)
            | (Self::Float64, DataType::Float64)
            | (Self::Text, DataType::Utf8)
            | (Self::Boolean, DataType::Boolean) => true,
            (Self::TextList, DataType::List(item)) => item.data_type() == &DataType::Utf8,
            (Self::RecordList, DataType::List(item)) => {
                matches!(item.data_type(), DataType::Struct(_))
            }
            _ => false,
        }
    }
}

/// One column: name (unit in the name where it has one), type, unit and a one-line meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Column {
    pub name: &'static str,
    pub dtype: Dtype,
    pub unit: Unit,
    pub meaning: &'static str,
}

impl Column {
    pub const fn int(name: &'static str, unit: Unit, meaning: &'static str) -> Self {
        Self::new(name, Dtype::Int64, unit, meaning)
    }

    pub const fn float(name: &'static str, unit: Unit, meaning: &'static str) -> Self {
        Self::new(name, Dtype::Float64, unit, meaning)
    }

    pub const fn text(name: &'static str, meaning: &'static str) -> Self {
        Self::new(name, Dtype::Text, Unit::None, meaning)
    }

    pub const fn flag(name: &'static str, meaning: &'static str) -> Self {
        Self::new(name, Dtype::Boolean, Unit::None, meaning)
    }

    pub const fn new(name: &'static str, dtype: Dtype, unit: Unit, meaning: &'static str) -> Self {
        Self {
            name,
            dtype,
            unit,
            meaning,
        }
    }

    /// The same column meaning something more precise in one table (`total_time_ns` of kernels).
    pub const fn meaning(self, meaning: &'static str) -> Self {
        Self { meaning, ..self }
    }
}

/// A table's declaration: its key (`AREA.TABLE`, what `gpuopt schema` takes) and its columns in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Declared {
    pub key: &'static str,
    pub columns: Vec<Column>,
}

impl Declared {
    pub fn new(key: &'static str, columns: &[Column]) -> Self {
        Self {
            key,
            columns: columns.to_vec(),
        }
    }
}

impl Table {
    /// A one-batch table whose columns are exactly `declared`, in order and of the declared types;
    /// anything else is an internal error naming the column (a column computed but never described,
    /// or described but never computed, cannot ship).
    pub fn declared(declared: &[Column], columns: Vec<(&str, ArrayRef)>) -> Result<Self> {
        check(declared, &columns)?;
        Self::from_columns(columns)
    }
}

fn check(declared: &[Column], columns: &[(&str, ArrayRef)]) -> Result<()> {
    let undeclared = |what: String| Error::internal("column_undeclared", what);
    for (i, (name, array)) in columns.iter().enumerate() {
        let Some(column) = declared.get(i) else {
            return Err(undeclared(format!(
                "column {name:?} (position {i}) is not declared"
            )));
        };
        if column.name != *name {
            return Err(undeclared(format!(
                "column {i} is {name:?} where {:?} is declared",
                column.name
            )));
        }
        if !column.dtype.matches(array.data_type()) {
            return Err(undeclared(format!(
                "column {name:?} is {} where {:?} is declared",
                array.data_type(),
                column.dtype
            )));
        }
    }
    match declared.get(columns.len()) {
        Some(missing) => Err(undeclared(format!(
            "declared column {:?} is not built",
            missing.name
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int64Array};
    use std::sync::Arc;

    const DECLARED: &[Column] = &[
        Column::int("count", Unit::Count, "Things"),
        Column::float("avg_ns", Unit::Ns, "Mean duration (ns)"),
    ];

    fn ints() -> ArrayRef {
        Arc::new(Int64Array::from(vec![1, 2]))
    }

    fn floats() -> ArrayRef {
        Arc::new(Float64Array::from(vec![1.0, 2.0]))
    }

    #[test]
    fn builds_exactly_the_declared_columns() {
        let table = Table::declared(DECLARED, vec![("count", ints()), ("avg_ns", floats())]);
        assert_eq!(
            table.map(|t| t.column_names()).ok(),
            Some(vec!["count".into(), "avg_ns".into()])
        );
    }

    #[test]
    fn refuses_what_the_declaration_does_not_say() {
        let cases: Vec<Vec<(&str, ArrayRef)>> = vec![
            vec![("count", ints())],
            vec![("count", ints()), ("avg_ns", floats()), ("extra", ints())],
            vec![("avg_ns", floats()), ("count", ints())],
            vec![("count", ints()), ("avg_ns", ints())],
        ];
        for columns in cases {
            let err = Table::declared(DECLARED, columns).err();
            assert_eq!(err.map(|e| e.code), Some("column_undeclared"));
        }
    }
}
