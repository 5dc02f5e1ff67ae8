//! The tables of one export: each one's columns and record layout, versioned names resolved, views refused.

use super::sources::Source;
use crate::error::{Error, Result};
use crate::nsys::{codes, db};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One table as found in the file.
#[derive(Debug, Clone, Serialize)]
pub struct TableInfo {
    /// The name gpuopt knows it by (`CUPTI_ACTIVITY_KIND_RUNTIME`).
    pub logical: String,
    /// The name in the file (`CUPTI_ACTIVITY_KIND_RUNTIME_V3` where versioned).
    pub actual: String,
    pub columns: BTreeSet<String>,
    #[serde(skip)]
    pub layout: Layout,
}

/// How a table's rows are stored: its root page and the record position of each column.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Root page of the table b-tree (None for views and index-organized tables).
    pub root: Option<u32>,
    /// Column names in record order (`PRAGMA table_info` cid order).
    pub order: Vec<String>,
    /// The column that aliases the rowid (`INTEGER PRIMARY KEY`), stored as NULL in records.
    pub rowid_alias: Option<String>,
}

impl Layout {
    /// The record index of a column; `Some(None)` for the rowid (or its alias); None if absent.
    pub fn position(&self, column: &str) -> Option<Option<usize>> {
        if column == "rowid" || self.rowid_alias.as_deref() == Some(column) {
            return Some(None);
        }
        self.order.iter().position(|c| c == column).map(Some)
    }
}

pub(super) fn list_views(conn: &Connection, path: &Path) -> Result<Vec<String>> {
    db::query_on(
        conn,
        path,
        "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name",
        &mut |row| Ok(db::opt_text(row, 0)?.unwrap_or_default()),
    )
}

/// nsys writes tables only. A VIEW under a name gpuopt reads is refused by name, never read (a view
/// can compute unbounded rows) nor reported as "not captured" (it is there, as something else).
pub(super) fn refuse_view(
    path: &Path,
    source: &Source,
    tables: &BTreeMap<String, BTreeSet<String>>,
    views: &[String],
) -> Result<()> {
    // The name that would be read had the views been tables.
    let Some(view) =
        resolve_name(source.name, tables.keys().chain(views)).filter(|name| views.contains(name))
    else {
        return Ok(());
    };
    Err(Error::input(
        codes::TABLE_IS_VIEW,
        format!(
            "{}: {view} is a VIEW, not a table nsys writes; gpuopt does not read it",
            path.display()
        ),
    )
    .with_path(path.display().to_string())
    .with_expected(format!("table {}", source.name))
    .with_observed(format!("view {view}")))
}

pub(super) fn list_tables(conn: &Connection, path: &Path) -> Result<BTreeMap<String, Layout>> {
    let tables = db::query_on(
        conn,
        path,
        "SELECT name, rootpage, sql FROM sqlite_master WHERE type = 'table' ORDER BY name",
        &mut |row| {
            Ok((
                db::opt_text(row, 0)?.unwrap_or_default(),
                db::opt_int(row, 1, "sqlite_master", "rootpage")?,
                db::opt_text(row, 2)?.unwrap_or_default(),
            ))
        },
    )?;
    let mut out = BTreeMap::new();
    for (name, root, sql) in tables {
        let pragma = format!("PRAGMA table_info(\"{}\")", name.replace('"', "\"\""));
        let columns = db::query_on(conn, path, &pragma, &mut |row| {
            Ok((
                db::opt_text(row, 1)?.unwrap_or_default(),
                db::opt_text(row, 2)?.unwrap_or_default(),
                db::opt_int(row, 5, "table_info", "pk")?.unwrap_or(0),
            ))
        })?;
        let keys: Vec<&(String, String, i64)> = columns.iter().filter(|c| c.2 > 0).collect();
        let rowid_alias = match keys.as_slice() {
            [only] if only.1.eq_ignore_ascii_case("INTEGER") => Some(only.0.clone()),
            _ => None,
        };
        let without_rowid = sql.to_ascii_uppercase().contains("WITHOUT ROWID");
        out.insert(
            name,
            Layout {
                root: root
                    .and_then(|r| u32::try_from(r).ok())
                    .filter(|&r| r > 0 && !without_rowid),
                order: columns.into_iter().map(|c| c.0).collect(),
                rowid_alias,
            },
        );
    }
    Ok(out)
}

/// The table holding `logical`: the exact name first, else the highest `_V<n>` version of it.
/// `CUPTI_ACTIVITY_KIND_MEMCPY2` is a different activity kind, never a version of `..._MEMCPY`.
pub fn resolve_name<'a>(logical: &str, names: impl Iterator<Item = &'a String>) -> Option<String> {
    let mut best: Option<(u32, &String)> = None;
    for name in names {
        if name == logical {
            return Some(name.clone());
        }
        let Some(version) = name
            .strip_prefix(logical)
            .and_then(|rest| rest.strip_prefix("_V"))
            .and_then(|v| v.parse::<u32>().ok())
        else {
            continue;
        };
        if best.is_none_or(|(b, _)| version > b) {
            best = Some((version, name));
        }
    }
    best.map(|(_, name)| name.clone())
}

pub(super) fn check_columns(
    path: &Path,
    source: &Source,
    actual: &str,
    columns: &BTreeSet<String>,
) -> Result<()> {
    let missing: Vec<&str> = source
        .columns
        .iter()
        .copied()
        .filter(|c| !columns.contains(*c))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::input(
        codes::COLUMN_MISSING,
        format!(
            "{}: table {actual} lacks column(s) {}",
            path.display(),
            missing.join(", ")
        ),
    )
    .with_path(path.display().to_string())
    .with_expected(format!("{actual}({})", source.columns.join(", ")))
    .with_observed(format!(
        "{actual}({})",
        columns.iter().cloned().collect::<Vec<_>>().join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_exact_then_highest_version() {
        let names: Vec<String> = [
            "CUPTI_ACTIVITY_KIND_RUNTIME_V2",
            "CUPTI_ACTIVITY_KIND_RUNTIME_V3",
            "CUPTI_ACTIVITY_KIND_MEMCPY2",
            "CUPTI_ACTIVITY_KIND_MEMCPY2_V2",
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_KERNEL_V2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            resolve_name("CUPTI_ACTIVITY_KIND_RUNTIME", names.iter()).as_deref(),
            Some("CUPTI_ACTIVITY_KIND_RUNTIME_V3")
        );
        assert_eq!(
            resolve_name("CUPTI_ACTIVITY_KIND_KERNEL", names.iter()).as_deref(),
            Some("CUPTI_ACTIVITY_KIND_KERNEL")
        );
        assert_eq!(
            resolve_name("CUPTI_ACTIVITY_KIND_MEMCPY", names.iter()),
            None
        );
    }
}
