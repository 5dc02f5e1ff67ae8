//! Sample files for `gpuopt stats`: JSON Lines or CSV, one call per row (or per key), turned into
//! calls and then into pairs.
//!
//! - **JSON Lines** (`.jsonl`, `.ndjson`, `.json`, or content starting with `{`/`[`): each non-empty line
//!   is a number, an array of numbers (the samples of one call), or an object whose value field is a
//!   number or an array of numbers.
//! - **CSV** (`.csv`; `.tsv` is tab-separated): a header row naming the columns, or no header and one
//!   value per line.
//! - **Value column**: `--column NAME`; else the only column; else a column named `value`.
//! - **Key column**: rows with the same key are the samples of one call; pairs match by key (the
//!   baseline's order is the plan order). Without a key, row i of each file is pair i.
//! - Every value must be finite and > 0; an error names the file, the line and the pair.
//! - A format error names the position and the expected shape, never the file's bytes: not a cell that
//!   fails to parse, not the header's names (a mistaken file's first line may be a secret); see
//!   `crate::shape`. Keys and cases of a file that parsed are named (they are the caller's own labels).

use super::codes;
use super::compare::Blocks;
use super::compare::{Cases, PairedInput};
use super::quantile::Calls;
use super::schedule::Order;
use crate::error::{Error, Result};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// The largest sample file read (tens of millions of values).
pub const MAX_SAMPLE_FILE_BYTES: u64 = 1 << 30;

/// Which columns of a sample file to read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadOptions {
    pub column: Option<String>,
    pub key_column: Option<String>,
    pub case_column: Option<String>,
    pub order_column: Option<String>,
    /// The column naming each row's block (process, run, worker).
    pub block_column: Option<String>,
    /// Resample whole blocks (`--block-column`); false: only report per-block effects and warn.
    pub resample_blocks: bool,
}

/// One parsed sample file.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleFile {
    pub path: String,
    /// `jsonl`, `csv` or `tsv`.
    pub format: &'static str,
    /// The value column read (none for bare values).
    pub value_column: Option<String>,
    pub calls: Calls,
    pub keys: Option<Vec<String>>,
    pub cases: Option<Vec<String>>,
    pub orders: Option<Vec<Order>>,
    /// The block of each call (its first row's).
    pub blocks: Option<Vec<String>>,
    /// The first line of each call.
    pub lines: Vec<u64>,
    /// Data rows read.
    pub rows: usize,
    /// Columns present but not read.
    pub unmodeled_columns: Vec<String>,
}

struct Row {
    line: u64,
    key: Option<String>,
    case: Option<String>,
    order: Option<Order>,
    block: Option<String>,
    values: Vec<f64>,
}

fn format_error(path: &str, line: u64, message: impl Into<String>) -> Error {
    Error::input(
        "format_invalid",
        format!("{path}:{line}: {}", message.into()),
    )
    .with_path(format!("{path}:{line}"))
}

fn column_missing(path: &str, name: &str, present: &[String]) -> Error {
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
fn value_hint(candidates: usize) -> String {
    format!(
        "--column NAME naming the value among the {candidates} candidate columns (and --key-column NAME \
         for a column that pairs rows, e.g. a pair or run id), or a single value column, or one named \
         \"value\""
    )
}

/// What a JSON value is, without its content.
fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

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
    let text = String::from_utf8(bytes)
        .map_err(|e| format_error(&shown, 0, format!("not UTF-8 text ({e})")))?;
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

fn check_row(path: &str, row: &Row) -> Result<()> {
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

type Parsed = (Vec<Row>, Option<String>, Vec<String>);

fn parse_order(path: &str, line: u64, text: &str) -> Result<Order> {
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

fn parse_number(path: &str, line: u64, text: &str) -> Result<f64> {
    text.trim().parse::<f64>().map_err(|_| {
        format_error(path, line, "the value is not a number")
            .with_expected("a decimal number")
            .with_observed(crate::shape::of(text.as_bytes()))
    })
}

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

fn read_csv(path: &str, text: &str, options: &ReadOptions, delimiter: u8) -> Result<Parsed> {
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

fn json_values(path: &str, line: u64, value: &serde_json::Value) -> Result<Vec<f64>> {
    let number = |v: &serde_json::Value| {
        v.as_f64()
            .ok_or_else(|| format_error(path, line, format!("{} is not a number", json_kind(v))))
    };
    match value {
        serde_json::Value::Array(items) if !items.is_empty() => items.iter().map(number).collect(),
        serde_json::Value::Array(_) => Err(format_error(path, line, "an empty array of samples")),
        other => Ok(vec![number(other)?]),
    }
}

fn json_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn read_jsonl(path: &str, text: &str, options: &ReadOptions) -> Result<Parsed> {
    let mut rows = Vec::new();
    let mut value_column = options.column.clone();
    let mut unmodeled: Vec<String> = Vec::new();
    let named = [
        &options.key_column,
        &options.case_column,
        &options.order_column,
        &options.block_column,
    ];
    for (index, raw) in text.lines().enumerate() {
        let line = index as u64 + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if matches!(
            trimmed,
            "NaN" | "Infinity" | "-Infinity" | "nan" | "inf" | "-inf"
        ) {
            rows.push(Row {
                line,
                key: None,
                case: None,
                order: None,
                block: None,
                values: vec![f64::NAN],
            });
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(trimmed)
            .map_err(|e| format_error(path, line, format!("not JSON ({e})")))?;
        if value.is_object() {
            check_unique_keys(path, line, trimmed)?;
        }
        let serde_json::Value::Object(object) = value else {
            if named.iter().any(|n| n.is_some()) || options.column.is_some() {
                return Err(format_error(
                    path,
                    line,
                    "named columns need JSON objects, one per line",
                ));
            }
            rows.push(Row {
                line,
                key: None,
                case: None,
                order: None,
                block: None,
                values: json_values(path, line, &value)?,
            });
            continue;
        };
        let field = |name: &Option<String>| -> Result<Option<&serde_json::Value>> {
            match name {
                None => Ok(None),
                Some(n) => object.get(n).map(Some).ok_or_else(|| {
                    column_missing(path, n, &object.keys().cloned().collect::<Vec<_>>())
                        .with_path(format!("{path}:{line}"))
                }),
            }
        };
        let key = field(&options.key_column)?.map(json_text);
        let case = field(&options.case_column)?.map(json_text);
        let block = field(&options.block_column)?.map(json_text);
        let order = match field(&options.order_column)? {
            Some(o) => Some(parse_order(path, line, &json_text(o))?),
            None => None,
        };
        if value_column.is_none() {
            let candidates: Vec<&String> = object
                .keys()
                .filter(|k| !named.iter().any(|n| n.as_deref() == Some(k.as_str())))
                .collect();
            value_column = match candidates.as_slice() {
                [only] => Some((*only).clone()),
                _ if object.contains_key("value") => Some("value".to_string()),
                _ => {
                    return Err(column_missing(
                        path,
                        "value",
                        &object.keys().cloned().collect::<Vec<_>>(),
                    )
                    .with_expected(value_hint(candidates.len())));
                }
            };
        }
        let column = value_column.clone().unwrap_or_default();
        let raw_value = object.get(&column).ok_or_else(|| {
            column_missing(path, &column, &object.keys().cloned().collect::<Vec<_>>())
                .with_path(format!("{path}:{line}"))
        })?;
        for k in object.keys() {
            let used = *k == column || named.iter().any(|n| n.as_deref() == Some(k.as_str()));
            if !used && !unmodeled.contains(k) {
                unmodeled.push(k.clone());
            }
        }
        rows.push(Row {
            line,
            key,
            case,
            order,
            block,
            values: json_values(path, line, raw_value)?,
        });
    }
    Ok((rows, value_column, unmodeled))
}

/// The member names of one JSON object, in order (values skipped); `serde_json::Value` keeps only
/// the last of two equal names, so a duplicate would silently pick one of two values.
struct ObjectKeys(Vec<String>);

impl<'de> Deserialize<'de> for ObjectKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = ObjectKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<ObjectKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(ObjectKeys(keys))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// Refuses a JSON Lines object naming one field twice (as `gpuopt map` does).
fn check_unique_keys(path: &str, line: u64, text: &str) -> Result<()> {
    let ObjectKeys(keys) = serde_json::from_str(text)
        .map_err(|e| format_error(path, line, format!("not JSON ({e})")))?;
    let mut seen = std::collections::HashSet::new();
    match keys.into_iter().find(|k| !seen.insert(k.clone())) {
        Some(_) => Err(format_error(path, line, "a field name appears twice")
            .with_expected("each field once per line")),
        None => Ok(()),
    }
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

/// Pairs two sample files: by key when both have keys, else by order (row i with row i).
pub fn pair(baseline: SampleFile, candidate: SampleFile) -> Result<PairedInput> {
    let (candidate_calls, candidate_cases, candidate_orders) = match (
        &baseline.keys,
        &candidate.keys,
    ) {
        (Some(base_keys), Some(cand_keys)) => {
            let position: HashMap<&str, usize> = cand_keys
                .iter()
                .enumerate()
                .map(|(i, k)| (k.as_str(), i))
                .collect();
            let base_set: std::collections::HashSet<&str> =
                base_keys.iter().map(String::as_str).collect();
            let missing: Vec<&str> = base_keys
                .iter()
                .map(String::as_str)
                .filter(|k| !position.contains_key(k))
                .collect();
            let extra: Vec<&str> = cand_keys
                .iter()
                .map(String::as_str)
                .filter(|k| !base_set.contains(k))
                .collect();
            if !missing.is_empty() || !extra.is_empty() {
                let show = |v: &[&str]| {
                    v.iter()
                        .take(5)
                        .map(|k| format!("{k:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(Error::input(
                    codes::PAIR_KEY_UNMATCHED,
                    format!(
                        "{} key(s) only in {} [{}], {} key(s) only in {} [{}]",
                        missing.len(),
                        baseline.path,
                        show(&missing),
                        extra.len(),
                        candidate.path,
                        show(&extra)
                    ),
                )
                .with_expected("the same keys on both sides")
                .with_observed(format!(
                    "{} baseline keys, {} candidate keys",
                    base_keys.len(),
                    cand_keys.len()
                )));
            }
            let order: Vec<usize> = base_keys
                .iter()
                .filter_map(|k| position.get(k.as_str()).copied())
                .collect();
            let pick = |v: &Option<Vec<String>>| {
                v.as_ref().map(|v| {
                    order
                        .iter()
                        .filter_map(|&i| v.get(i).cloned())
                        .collect::<Vec<_>>()
                })
            };
            let orders = candidate.orders.as_ref().map(|o| {
                order
                    .iter()
                    .filter_map(|&i| o.get(i).copied())
                    .collect::<Vec<_>>()
            });
            (
                candidate.calls.select(&order),
                pick(&candidate.cases),
                orders,
            )
        }
        _ => {
            if baseline.calls.len() != candidate.calls.len() {
                return Err(Error::input(
                    codes::PAIR_COUNT_MISMATCH,
                    format!(
                        "{} has {} calls but {} has {}; pairing by order needs equal counts (or use a key column)",
                        baseline.path, baseline.calls.len(), candidate.path, candidate.calls.len()
                    ),
                )
                .with_expected(format!("{} calls", baseline.calls.len()))
                .with_observed(format!("{} calls", candidate.calls.len())));
            }
            (
                candidate.calls.clone(),
                candidate.cases.clone(),
                candidate.orders.clone(),
            )
        }
    };
    let n = baseline.calls.len();
    let cases = match (&baseline.cases, &candidate_cases) {
        (Some(base), cand) => {
            if let Some(cand) = cand {
                if let Some(i) = (0..n).find(|&i| base.get(i) != cand.get(i)) {
                    return Err(Error::input(
                        codes::CASE_MISMATCH,
                        format!(
                            "pair {i} is case {:?} in {} but {:?} in {}",
                            base.get(i).map_or("", String::as_str),
                            baseline.path,
                            cand.get(i).map_or("", String::as_str),
                            candidate.path
                        ),
                    )
                    .with_path(format!(
                        "{}:{}",
                        baseline.path,
                        baseline.lines.get(i).copied().unwrap_or(0)
                    )));
                }
            }
            let mut names: Vec<String> = Vec::new();
            let case_of = base
                .iter()
                .map(|c| match names.iter().position(|x| x == c) {
                    Some(p) => p,
                    None => {
                        names.push(c.clone());
                        names.len() - 1
                    }
                })
                .collect();
            Some(Cases {
                case_of,
                names,
                weights: None,
            })
        }
        (None, _) => None,
    };
    let orders = match (&baseline.orders, &candidate_orders) {
        (Some(b), Some(c)) if b != c => {
            return Err(Error::input(
                "format_invalid",
                format!(
                    "{} and {} disagree on the order of some pairs",
                    baseline.path, candidate.path
                ),
            ));
        }
        (Some(b), _) => Some(b.clone()),
        (None, c) => c.clone(),
    };
    Ok(PairedInput {
        baseline: baseline.calls,
        candidate: candidate_calls,
        cases,
        orders,
        valid: None,
        keys: baseline.keys,
        blocks: None,
    })
}

/// The blocks of paired calls from the baseline's block labels (first-seen order), as `options` asks.
pub fn blocks(labels: Option<&[String]>, options: &ReadOptions) -> Option<Blocks> {
    let (labels, column) = (labels?, options.block_column.clone()?);
    let mut names: Vec<String> = Vec::new();
    let block_of = labels
        .iter()
        .map(|label| match names.iter().position(|n| n == label) {
            Some(p) => p,
            None => {
                names.push(label.clone());
                names.len() - 1
            }
        })
        .collect();
    Some(Blocks {
        block_of,
        names,
        column,
        resample: options.resample_blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(body.as_bytes()).unwrap();
        p
    }

    fn tmp() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "gpuopt-stats-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn rand_suffix() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::Relaxed)
    }

    #[test]
    fn errors_name_the_line_never_its_text() {
        // Issue 28: a mistaken file (a .env, a token) was echoed by "... is not a number".
        let d = tmp();
        for (name, text) in [
            ("env.csv", "GITHUB_TOKEN=ghp_secret\nDB_PASS=hunter2\n"),
            ("order.csv", "value,order\n1,ghp_secret\n"),
            ("cols.csv", "ghp_secret,hunter2\n1,2\n"),
            ("obj.jsonl", "{\"value\": \"ghp_secret\"}\n"),
        ] {
            let path = write(&d, name, text);
            let options = ReadOptions {
                order_column: (name == "order.csv").then(|| "order".to_string()),
                ..ReadOptions::default()
            };
            let err = read(&path, &options).unwrap_err();
            let said = serde_json::to_string(&err).unwrap();
            assert!(
                !said.contains("ghp_secret") && !said.contains("hunter2"),
                "{said}"
            );
        }
    }

    #[test]
    fn duplicate_keys_and_columns_are_refused() {
        // Issue 13.10: serde_json kept the last of two equal keys, so a line silently lost a value.
        let d = tmp();
        let jsonl = write(
            &d,
            "dup.jsonl",
            "{\"value\": 1}\n{\"value\": 2, \"value\": 3}\n",
        );
        let err = read(&jsonl, &ReadOptions::default()).unwrap_err();
        assert_eq!(err.code, "format_invalid");
        assert!(
            err.message.contains(":2: a field name appears twice"),
            "{}",
            err.message
        );
        let csv = write(&d, "dup.csv", "value,key,value\n1,a,2\n");
        let err = read(&csv, &ReadOptions::default()).unwrap_err();
        assert!(
            err.message
                .contains(":1: columns 1 and 3 have the same name"),
            "{}",
            err.message
        );
        // Nested arrays and distinct keys still read.
        let ok = write(&d, "ok.jsonl", "{\"value\": [1, 2], \"key\": \"a\"}\n");
        let opts = ReadOptions {
            key_column: Some("key".into()),
            ..ReadOptions::default()
        };
        assert_eq!(read(&ok, &opts).unwrap().rows, 1);
    }

    #[test]
    fn bare_values_csv_and_jsonl() {
        let d = tmp();
        let csv = read(
            &write(&d, "a.csv", "1.5\n2.5\n\n3\n"),
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(csv.calls.samples(), &[1.5, 2.5, 3.0]);
        assert_eq!(csv.lines, vec![1, 2, 4]);
        let jl = read(
            &write(&d, "a.jsonl", "1.5\n[2.0, 3.0]\n"),
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(jl.calls.len(), 2);
        assert_eq!(jl.calls.call(1), &[2.0, 3.0]);
    }

    #[test]
    fn named_columns_keys_and_unmodeled() {
        let d = tmp();
        let body = "run,case,ms,note\nr1,a,10,x\nr2,b,11,y\nr1,a,12,z\n";
        let opts = ReadOptions {
            column: Some("ms".into()),
            key_column: Some("run".into()),
            case_column: Some("case".into()),
            ..ReadOptions::default()
        };
        let f = read(&write(&d, "b.csv", body), &opts).unwrap();
        assert_eq!(f.calls.len(), 2);
        assert_eq!(f.calls.call(0), &[10.0, 12.0]);
        assert_eq!(f.keys, Some(vec!["r1".to_string(), "r2".to_string()]));
        assert_eq!(f.unmodeled_columns, vec!["note".to_string()]);
        let missing = read(&write(&d, "c.csv", "a,b\n1,2\n"), &ReadOptions::default()).unwrap_err();
        assert_eq!(missing.code, codes::COLUMN_MISSING);
    }

    #[test]
    fn bad_values_name_file_and_line() {
        let d = tmp();
        let p = write(&d, "n.csv", "ms\n1\n-2\n");
        let err = read(&p, &ReadOptions::default()).unwrap_err();
        assert_eq!(err.code, codes::NONPOSITIVE_METRIC_VALUE);
        assert!(err.path.unwrap().ends_with("n.csv:3"));
        let err = read(&write(&d, "n.jsonl", "1\nNaN\n"), &ReadOptions::default()).unwrap_err();
        assert_eq!(err.code, codes::NONFINITE_METRIC_VALUE);
        let err = read(&write(&d, "g.jsonl", "1\n{oops\n"), &ReadOptions::default()).unwrap_err();
        assert_eq!(err.code, "format_invalid");
        let err = read(&write(&d, "e.csv", ""), &ReadOptions::default()).unwrap_err();
        assert_eq!(err.code, "format_invalid");
    }

    #[test]
    fn pairing_by_key_follows_the_baseline_order() {
        let d = tmp();
        let opts = ReadOptions {
            key_column: Some("k".into()),
            ..ReadOptions::default()
        };
        let b = read(
            &write(
                &d,
                "b.jsonl",
                "{\"k\":\"x\",\"v\":1}\n{\"k\":\"y\",\"v\":2}\n",
            ),
            &opts,
        )
        .unwrap();
        let c = read(
            &write(
                &d,
                "c.jsonl",
                "{\"k\":\"y\",\"v\":4}\n{\"k\":\"x\",\"v\":3}\n",
            ),
            &opts,
        )
        .unwrap();
        let p = pair(b.clone(), c).unwrap();
        assert_eq!(p.candidate.samples(), &[3.0, 4.0]);
        let other = read(
            &write(
                &d,
                "o.jsonl",
                "{\"k\":\"z\",\"v\":4}\n{\"k\":\"x\",\"v\":3}\n",
            ),
            &opts,
        )
        .unwrap();
        assert_eq!(pair(b, other).unwrap_err().code, codes::PAIR_KEY_UNMATCHED);
    }
}
