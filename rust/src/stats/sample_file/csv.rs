//! The CSV (and TSV) reader: a header row naming the columns, or no header and one value per line.

use super::cells::{column_missing, format_error, parse_number, parse_order, value_hint};
use super::model::{Parsed, ReadOptions, Row};
use crate::error::Result;

/// 1-based line numbers from byte offsets (the csv crate's own line count skips blank lines).
/// A record's position may point at blank lines skipped before it, so those are stepped over first.
struct LineIndex<'a> {
    text: &'a [u8],
    newlines: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            newlines: text.match_indices('\n').map(|(i, _)| i).collect(),
        }
    }

    fn line(&self, byte: u64) -> u64 {
        let mut at = usize::try_from(byte).unwrap_or(usize::MAX);
        while matches!(self.text.get(at), Some(b'\n' | b'\r')) {
            at += 1;
        }
        self.newlines.partition_point(|&nl| nl < at) as u64 + 1
    }

    fn of_record(&self, record: &csv::StringRecord) -> u64 {
        record.position().map_or(0, |p| self.line(p.byte()))
    }

    fn of_error(&self, error: &csv::Error) -> u64 {
        error.position().map_or(0, |p| self.line(p.byte()))
    }
}

pub(super) fn read_csv(
    path: &str,
    text: &str,
    options: &ReadOptions,
    delimiter: u8,
) -> Result<Parsed> {
    let lines = LineIndex::new(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(delimiter)
        .flexible(false)
        .from_reader(text.as_bytes());
    let mut records = reader.records();
    let Some(first) = records.next() else {
        return Ok((Vec::new(), None, Vec::new()));
    };
    let first = first.map_err(|e| format_error(path, lines.of_error(&e), e.to_string()))?;
    let first_line = lines.of_record(&first);
    let headerless = first.iter().all(|f| f.trim().parse::<f64>().is_ok());
    let mut rows = Vec::new();
    if headerless {
        if first.len() != 1 || options.column.is_some() || options.key_column.is_some() {
            return Err(format_error(
                path,
                1,
                "a CSV without a header row must hold one value per line (name columns in a header row)",
            ));
        }
        rows.push(Row {
            line: first_line,
            key: None,
            case: None,
            order: None,
            block: None,
            values: vec![parse_number(
                path,
                first_line,
                first.get(0).unwrap_or_default(),
            )?],
        });
        for record in records {
            let record =
                record.map_err(|e| format_error(path, lines.of_error(&e), e.to_string()))?;
            let line = lines.of_record(&record);
            let field = record.get(0).unwrap_or_default();
            if record.len() == 1 && field.trim().is_empty() {
                continue;
            }
            rows.push(Row {
                line,
                key: None,
                case: None,
                order: None,
                block: None,
                values: vec![parse_number(path, line, field)?],
            });
        }
        return Ok((rows, None, Vec::new()));
    }
    let header: Vec<String> = first.iter().map(|h| h.trim().to_string()).collect();
    if let Some((first, i)) = header.iter().enumerate().find_map(|(i, h)| {
        header
            .iter()
            .take(i)
            .position(|e| e == h)
            .map(|first| (first, i))
    }) {
        return Err(format_error(
            path,
            first_line,
            format!("columns {} and {} have the same name", first + 1, i + 1),
        )
        .with_expected("each column named once"));
    }
    let index_of = |name: &str| header.iter().position(|h| h == name);
    let need = |name: &Option<String>| -> Result<Option<usize>> {
        match name {
            None => Ok(None),
            Some(n) => index_of(n)
                .map(Some)
                .ok_or_else(|| column_missing(path, n, &header)),
        }
    };
    let key = need(&options.key_column)?;
    let case = need(&options.case_column)?;
    let order = need(&options.order_column)?;
    let block = need(&options.block_column)?;
    let value = match &options.column {
        Some(name) => index_of(name).ok_or_else(|| column_missing(path, name, &header))?,
        None => {
            let named = [key, case, order, block];
            let free: Vec<usize> = (0..header.len())
                .filter(|i| !named.contains(&Some(*i)))
                .collect();
            match free.as_slice() {
                [only] => *only,
                _ => index_of("value").ok_or_else(|| {
                    column_missing(path, "value", &header).with_expected(value_hint(free.len()))
                })?,
            }
        }
    };
    let used = [Some(value), key, case, order, block];
    let unmodeled = header
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(&Some(*i)))
        .map(|(_, h)| h.clone())
        .collect();
    for record in records {
        let record = record.map_err(|e| format_error(path, lines.of_error(&e), e.to_string()))?;
        let line = lines.of_record(&record);
        let field = |i: Option<usize>| i.and_then(|i| record.get(i)).map(|s| s.trim().to_string());
        let order = match field(order) {
            Some(o) => Some(parse_order(path, line, &o)?),
            None => None,
        };
        rows.push(Row {
            line,
            key: field(key),
            case: field(case),
            order,
            block: field(block),
            values: vec![parse_number(
                path,
                line,
                record.get(value).unwrap_or_default(),
            )?],
        });
    }
    Ok((rows, header.get(value).cloned(), unmodeled))
}
