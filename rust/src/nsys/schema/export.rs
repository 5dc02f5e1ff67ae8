//! A validated export: its identity, every table in it, and the tables gpuopt reads, resolved.

use super::sources::{Source, COMPANIONS, SOURCES};
use super::tables::{check_columns, list_tables, list_views, refuse_view, resolve_name, TableInfo};
use super::version::{read_meta, ExportMeta};
use crate::error::{Error, Result};
use crate::nsys::{codes, db};
use rusqlite::Connection;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A validated export: path, identity, and the resolved tables.
#[derive(Debug, Clone)]
pub struct Schema {
    pub path: PathBuf,
    pub uri: String,
    pub meta: ExportMeta,
    /// Every table in the file by its actual name, with its columns.
    pub all_tables: BTreeMap<String, BTreeSet<String>>,
    resolved: BTreeMap<&'static str, TableInfo>,
}

impl Schema {
    /// Opens and validates an export: SQLite magic and size, metadata, schema major version, and the
    /// columns of every table gpuopt reads. Nothing is produced from a file that fails here.
    pub fn load(path: &Path) -> Result<Self> {
        db::check_sqlite_file(path)?;
        let uri = db::uri_for(path);
        let conn = db::connect(&uri, path)?;
        let layouts = list_tables(&conn, path)?;
        let all_tables: BTreeMap<String, BTreeSet<String>> = layouts
            .iter()
            .map(|(name, l)| (name.clone(), l.order.iter().cloned().collect()))
            .collect();
        let meta = read_meta(&conn, path, &all_tables)?;
        let views = list_views(&conn, path)?;
        let mut resolved = BTreeMap::new();
        for source in SOURCES {
            refuse_view(path, source, &all_tables, &views)?;
            let Some(actual) = resolve_name(source.name, all_tables.keys()) else {
                if source.required {
                    return Err(Error::input(
                        codes::TABLE_MISSING,
                        format!("{} has no {} table", path.display(), source.name),
                    )
                    .with_path(path.display().to_string())
                    .with_expected(format!("table {}", source.name)));
                }
                continue;
            };
            let columns = all_tables.get(&actual).cloned().unwrap_or_default();
            check_columns(path, source, &actual, &columns)?;
            let layout = layouts.get(&actual).cloned().unwrap_or_default();
            resolved.insert(
                source.name,
                TableInfo {
                    logical: source.name.to_string(),
                    actual,
                    columns,
                    layout,
                },
            );
        }
        for (table, companion) in COMPANIONS {
            if resolved.contains_key(table.name) && !resolved.contains_key(companion.name) {
                return Err(Error::input(
                    codes::TABLE_MISSING,
                    format!(
                        "{} has {} but not {}, which names its values",
                        path.display(),
                        table.name,
                        companion.name
                    ),
                )
                .with_path(path.display().to_string())
                .with_expected(format!("table {}", companion.name)));
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            uri,
            meta,
            all_tables,
            resolved,
        })
    }

    /// The resolved table of a source, or None when the export does not have it (not captured).
    pub fn table(&self, source: &Source) -> Option<&TableInfo> {
        self.resolved.get(source.name)
    }

    /// Whether a present table has a column (for optional columns such as `mangledName`).
    pub fn has_column(&self, source: &Source, column: &str) -> bool {
        self.table(source)
            .is_some_and(|t| t.columns.contains(column))
    }

    /// Tables in the file that gpuopt does not read (reported as `unmodeled`).
    pub fn unread_tables(&self) -> Vec<String> {
        let read: BTreeSet<&str> = self.resolved.values().map(|t| t.actual.as_str()).collect();
        self.all_tables
            .keys()
            .filter(|name| !read.contains(name.as_str()))
            .filter(|name| !name.starts_with("ENUM_") && !name.starts_with("META_DATA"))
            .filter(|name| !name.starts_with("TARGET_INFO_") && *name != "EXPORT_META_DATA")
            .cloned()
            .collect()
    }

    pub fn resolved(&self) -> impl Iterator<Item = &TableInfo> {
        self.resolved.values()
    }

    pub fn connect(&self) -> Result<Connection> {
        db::connect(&self.uri, &self.path)
    }
}
