//! Bindings for the execution-map engine: columns in as little-endian bytes, totals out as JSON and the
//! per-group table as Arrow.

use super::arrow::ArrowTable;
use super::{json, run};
use crate::error::{Error, Result};
use crate::intervals::Span;
use crate::map::{self, Events};
use pyo3::prelude::*;

fn i64s(bytes: &[u8], what: &str) -> Result<Vec<i64>> {
    let chunks = bytes.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return Err(Error::internal(
            "map_columns_invalid",
            format!("{what} is not a whole number of int64 values"),
        ));
    }
    Ok(chunks
        .map(|c| i64::from_le_bytes(<[u8; 8]>::try_from(c).unwrap_or_default()))
        .collect())
}

fn u32s(bytes: &[u8]) -> Result<Vec<u32>> {
    let chunks = bytes.chunks_exact(4);
    if !chunks.remainder().is_empty() {
        return Err(Error::internal(
            "map_columns_invalid",
            "group is not a whole number of uint32 values",
        ));
    }
    Ok(chunks
        .map(|c| u32::from_le_bytes(<[u8; 4]>::try_from(c).unwrap_or_default()))
        .collect())
}

/// `map_account(start_ns, end_ns, group, groups, window) -> (totals_json, groups_table)`: the columns are
/// little-endian int64 / int64 / uint32 bytes; `window` is `(start, end)` or `None` for the events' hull.
#[pyfunction]
#[pyo3(signature = (start_ns, end_ns, group, groups, window = None))]
pub fn map_account(
    py: Python<'_>,
    start_ns: &[u8],
    end_ns: &[u8],
    group: &[u8],
    groups: usize,
    window: Option<(i64, i64)>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    let (totals, table) = run(py, move || {
        let (s, e, g) = (
            i64s(start_ns, "start_ns")?,
            i64s(end_ns, "end_ns")?,
            u32s(group)?,
        );
        let events = Events {
            start_ns: &s,
            end_ns: &e,
            group: &g,
            groups,
        };
        let account = map::account(&events, window.map(|(a, b)| Span::new(a, b)))?;
        Ok((account.totals.clone(), map::groups_table(&account)?))
    })?;
    Ok((json(&totals)?, table.into()))
}
