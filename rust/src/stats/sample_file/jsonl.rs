//! The JSON Lines reader: a number, an array of numbers, or an object per line; duplicate names refused.

use super::cells::{column_missing, format_error, parse_order, value_hint};
use super::model::{Parsed, ReadOptions, Row};
use crate::error::Result;
use serde::Deserialize;

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

pub(super) fn read_jsonl(path: &str, text: &str, options: &ReadOptions) -> Result<Parsed> {
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
