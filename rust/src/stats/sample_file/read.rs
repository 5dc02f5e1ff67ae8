//! Reading one sample file: its format, its values checked, and its rows grouped into calls.

use super::cells::{check_row, format_error};
use super::csv::read_csv;
use super::jsonl::read_jsonl;
use super::model::{ReadOptions, Row, SampleFile, MAX_SAMPLE_FILE_BYTES};
use crate::error::{Error, Result};
use crate::stats::codes;
use crate::stats::quantile::Calls;
use std::collections::HashMap;
use std::path::Path;

/// Reads one sample file.
pub fn read(path: &Path, options: &ReadOptions) -> Result<SampleFile> {
    let bytes = crate::identity::read_regular(path, MAX_SAMPLE_FILE_BYTES, "sample file")?;
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    parse(
        path.display().to_string(),
        extension.as_deref(),
        bytes,
        options,
    )
}

/// Parses the bytes of a sample file shown as `shown`, its format told by `extension` (lower case)
/// or, without a known one, by its first character.
pub fn parse(
    shown: String,
    extension: Option<&str>,
    bytes: Vec<u8>,
    options: &ReadOptions,
) -> Result<SampleFile> {
    let text = String::from_utf8(bytes).map_err(|e| {
        // The line of the first byte that is not UTF-8 (1-based), as every other error of the file.
        let at = e.utf8_error().valid_up_to();
        let before = e.as_bytes().get(..at).unwrap_or_default();
        let line = 1 + memchr::memchr_iter(b'\n', before).count() as u64;
        format_error(&shown, line, format!("not UTF-8 text (byte {at})"))
    })?;
    let first = text.trim_start().chars().next();
    let format = match extension {
        Some("csv") => "csv",
        Some("tsv") => "tsv",
        Some("jsonl" | "ndjson" | "json") => "jsonl",
        _ if matches!(first, Some('{' | '[')) => "jsonl",
        _ => "csv",
    };
    let parsed = match format {
        "jsonl" => read_jsonl(&shown, &text, options)?,
        _ => read_csv(
            &shown,
            &text,
            options,
            if format == "tsv" { b'\t' } else { b',' },
        )?,
    };
    let (rows, value_column, unmodeled_columns) = parsed;
    if rows.is_empty() {
        return Err(
            Error::input("format_invalid", format!("{shown} holds no values"))
                .with_path(shown)
                .with_expected("at least one value"),
        );
    }
    for row in &rows {
        check_row(&shown, row)?;
    }
    assemble(
        shown,
        format,
        value_column,
        unmodeled_columns,
        rows,
        options,
    )
}

/// Groups rows into calls (by key when there is a key column, else one call per row).
fn assemble(
    path: String,
    format: &'static str,
    value_column: Option<String>,
    unmodeled_columns: Vec<String>,
    rows: Vec<Row>,
    options: &ReadOptions,
) -> Result<SampleFile> {
    let row_count = rows.len();
    let mut groups: Vec<Row> = Vec::new();
    if options.key_column.is_some() {
        let mut slot_of: HashMap<String, usize> = HashMap::new();
        for row in rows {
            let key = row.key.clone().unwrap_or_default();
            match slot_of.get(&key).and_then(|&s| groups.get_mut(s)) {
                Some(group) => {
                    if group.case != row.case {
                        return Err(Error::input(
                            codes::CASE_MISMATCH,
                            format!(
                                "{path}:{}: key {key:?} has case {:?} here but {:?} on line {}",
                                row.line, row.case, group.case, group.line
                            ),
                        )
                        .with_path(format!("{path}:{}", row.line)));
                    }
                    if group.order != row.order {
                        return Err(format_error(
                            &path,
                            row.line,
                            format!("key {key:?} changes its order"),
                        ));
                    }
                    group.values.extend(row.values);
                }
                None => {
                    slot_of.insert(key, groups.len());
                    groups.push(row);
                }
            }
        }
    } else {
        groups = rows;
    }
    let lines = groups.iter().map(|g| g.line).collect();
    let keys = options.key_column.as_ref().map(|_| {
        groups
            .iter()
            .map(|g| g.key.clone().unwrap_or_default())
            .collect()
    });
    let cases = options.case_column.as_ref().map(|_| {
        groups
            .iter()
            .map(|g| g.case.clone().unwrap_or_default())
            .collect()
    });
    let blocks = options.block_column.as_ref().map(|_| {
        groups
            .iter()
            .map(|g| g.block.clone().unwrap_or_default())
            .collect()
    });
    let orders = options
        .order_column
        .as_ref()
        .map(|_| groups.iter().filter_map(|g| g.order).collect::<Vec<_>>());
    let calls = Calls::from_nested(groups.into_iter().map(|g| g.values).collect())?;
    Ok(SampleFile {
        path,
        format,
        value_column,
        calls,
        keys,
        cases,
        orders,
        blocks,
        lines,
        rows: row_count,
        unmodeled_columns,
    })
}
