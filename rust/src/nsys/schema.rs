//! What an nsys SQLite export is: its export-schema version, its tables (with versioned `_V<n>`
//! names resolved), their columns, and the checks that make every later scan safe.

use super::codes;
use super::db;
use crate::error::{Error, Result};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The process bits of a `globalTid` (`globalPid` has the same layout with the thread bits zero).
pub const PID_MASK: i64 = 0xFFFF_FFFF_FF00_0000_u64 as i64;

/// The export-schema major version gpuopt models (nsys 2023.3 … 2026.2 write 3.x).
pub const SUPPORTED_MAJOR: u32 = 3;
/// The newest export-schema minor version gpuopt has read (3.25.0, nsys 2026.2.1). A newer minor may
/// change what a column means without removing it, so it fails closed until it has been checked.
pub const NEWEST_KNOWN_MINOR: u32 = 25;

/// A table gpuopt reads, with the columns it needs. `required` tables must exist; the others are
/// facts when absent ("not captured").
pub struct Source {
    pub name: &'static str,
    pub columns: &'static [&'static str],
    pub required: bool,
}

pub const STRING_IDS: Source = Source {
    name: "StringIds",
    columns: &["id", "value"],
    required: true,
};
pub const KERNEL: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_KERNEL",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "demangledName",
        "shortName",
    ],
    required: false,
};
/// Graph executions of a graph-level trace (`--cuda-graph-trace=graph`, nsys' default).
pub const GRAPH_TRACE: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "graphId",
        "graphExecId",
    ],
    required: false,
};
/// Graph and graph-exec creation events (graph-level traces).
pub const GRAPH_EVENTS: Source = Source {
    name: "CUDA_GRAPH_EVENTS",
    columns: &["start", "graphId", "graphExecId"],
    required: false,
};
pub const RUNTIME: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_RUNTIME",
    columns: &["start", "end", "globalTid", "correlationId", "nameId"],
    required: false,
};
pub const MEMCPY: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_MEMCPY",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "bytes",
        "copyKind",
        "srcKind",
        "dstKind",
    ],
    required: false,
};
pub const MEMSET: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_MEMSET",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "bytes",
    ],
    required: false,
};
pub const SYNC: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "syncType",
    ],
    required: false,
};
pub const NVTX: Source = Source {
    name: "NVTX_EVENTS",
    columns: &[
        "start",
        "end",
        "eventType",
        "text",
        "globalTid",
        "endGlobalTid",
        "textId",
        "domainId",
    ],
    required: false,
};
pub const PROFILER_OVERHEAD: Source = Source {
    name: "PROFILER_OVERHEAD",
    columns: &["start", "end", "globalTid"],
    required: false,
};
pub const CUPTI_OVERHEAD: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_OVERHEAD",
    columns: &["start", "end", "globalTid"],
    required: false,
};
pub const ENUM_MEMCPY_OPER: Source = Source {
    name: "ENUM_CUDA_MEMCPY_OPER",
    columns: &["id", "label"],
    required: false,
};
pub const ENUM_MEM_KIND: Source = Source {
    name: "ENUM_CUDA_MEM_KIND",
    columns: &["id", "label"],
    required: false,
};
pub const ENUM_SYNC_TYPE: Source = Source {
    name: "ENUM_CUPTI_SYNC_TYPE",
    columns: &["id", "label"],
    required: false,
};
/// Names `overheadType` values; a label ending in "(Profiler)" is overhead the export attributes to
/// the profiler ("Command buffer full (CUDA)" is CUDA's own stall).
pub const ENUM_OVERHEAD_TYPE: Source = Source {
    name: "ENUM_CUPTI_OVERHEAD_TYPE",
    columns: &["id", "label"],
    required: false,
};

/// Every source gpuopt reads, in the order they are validated.
pub const SOURCES: &[&Source] = &[
    &STRING_IDS,
    &KERNEL,
    &GRAPH_TRACE,
    &GRAPH_EVENTS,
    &RUNTIME,
    &MEMCPY,
    &MEMSET,
    &SYNC,
    &NVTX,
    &PROFILER_OVERHEAD,
    &CUPTI_OVERHEAD,
    &ENUM_MEMCPY_OPER,
    &ENUM_MEM_KIND,
    &ENUM_SYNC_TYPE,
    &ENUM_OVERHEAD_TYPE,
];

/// Enum tables that must accompany an activity table when it is present.
const COMPANIONS: &[(&Source, &Source)] = &[
    (&MEMCPY, &ENUM_MEMCPY_OPER),
    (&MEMCPY, &ENUM_MEM_KIND),
    (&SYNC, &ENUM_SYNC_TYPE),
];

/// The export's identity, from `META_DATA_EXPORT` (or the older `EXPORT_META_DATA`).
#[derive(Debug, Clone, Serialize)]
pub struct ExportMeta {
    pub metadata_table: String,
    pub schema_version: String,
    pub schema_major: u32,
    pub schema_minor: u32,
    pub schema_micro: u32,
    pub product_version: Option<String>,
    pub product_name: Option<String>,
}

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

fn list_views(conn: &Connection, path: &Path) -> Result<Vec<String>> {
    db::query_on(
        conn,
        path,
        "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name",
        &mut |row| Ok(db::opt_text(row, 0)?.unwrap_or_default()),
    )
}

/// nsys writes tables only. A VIEW under a name gpuopt reads is refused by name, never read (a view
/// can compute unbounded rows) nor reported as "not captured" (it is there, as something else).
fn refuse_view(
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

fn list_tables(conn: &Connection, path: &Path) -> Result<BTreeMap<String, Layout>> {
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

fn check_columns(
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

fn read_meta(
    conn: &Connection,
    path: &Path,
    tables: &BTreeMap<String, BTreeSet<String>>,
) -> Result<ExportMeta> {
    let shown = path.display().to_string();
    let Some(table) = ["META_DATA_EXPORT", "EXPORT_META_DATA"]
        .into_iter()
        .find(|t| {
            tables
                .get(*t)
                .is_some_and(|c| c.contains("name") && c.contains("value"))
        })
    else {
        return Err(Error::input(
            codes::VERSION_UNSUPPORTED,
            format!("{shown} has no export metadata table, so its schema version is unknown"),
        )
        .with_path(shown)
        .with_expected("META_DATA_EXPORT (or EXPORT_META_DATA) with EXPORT_SCHEMA_VERSION"));
    };
    let rows = db::query_on(
        conn,
        path,
        &format!("SELECT name, value FROM {table}"),
        &mut |row| Ok((db::opt_text(row, 0)?, db::opt_text(row, 1)?)),
    )?;
    let lookup = |key: &str| -> Vec<String> {
        rows.iter()
            .filter(|(n, _)| n.as_deref() == Some(key))
            .filter_map(|(_, v)| v.clone())
            .collect()
    };
    let versions = lookup("EXPORT_SCHEMA_VERSION");
    let [version] = versions.as_slice() else {
        return Err(Error::input(
            codes::VERSION_UNSUPPORTED,
            format!(
                "{shown}: {table} holds {} EXPORT_SCHEMA_VERSION rows",
                versions.len()
            ),
        )
        .with_path(shown)
        .with_expected("exactly one EXPORT_SCHEMA_VERSION row")
        .with_observed(versions.join(", ")));
    };
    let (major, minor, micro) = parse_schema_version(&shown, version)?;
    for (row, part) in [
        ("EXPORT_SCHEMA_VERSION_MAJOR", major),
        ("EXPORT_SCHEMA_VERSION_MINOR", minor),
        ("EXPORT_SCHEMA_VERSION_MICRO", micro),
    ] {
        let values = lookup(row);
        if values.is_empty() {
            continue; // older exports write only EXPORT_SCHEMA_VERSION
        }
        if values.as_slice() != [part.to_string()] {
            return Err(Error::input(
                codes::VERSION_UNSUPPORTED,
                format!("{shown}: {row} {values:?} disagrees with EXPORT_SCHEMA_VERSION {version}"),
            )
            .with_path(shown)
            .with_expected(format!("{row} = {part}"))
            .with_observed(values.join(", ")));
        }
    }
    Ok(ExportMeta {
        metadata_table: table.to_string(),
        schema_version: version.clone(),
        schema_major: major,
        schema_minor: minor,
        schema_micro: micro,
        product_version: lookup("EXPORT_PRODUCT_VERSION").into_iter().next(),
        product_name: lookup("EXPORT_PRODUCT_NAME").into_iter().next(),
    })
}

/// `MAJOR.MINOR.MICRO`, decimal digits only (no spaces, signs or missing parts), of the major version
/// gpuopt models and no newer minor than it has read.
fn parse_schema_version(shown: &str, version: &str) -> Result<(u32, u32, u32)> {
    let malformed = || {
        Error::input(
            codes::VERSION_UNSUPPORTED,
            format!(
                "{shown}: EXPORT_SCHEMA_VERSION {version:?} is not a MAJOR.MINOR.MICRO version"
            ),
        )
        .with_path(shown.to_string())
        .with_expected("MAJOR.MINOR.MICRO, e.g. 3.20.3")
        .with_observed(version.to_string())
    };
    let number = |p: &str| -> Option<u32> {
        let plain = !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit());
        plain.then(|| p.parse().ok()).flatten()
    };
    let parts: Vec<Option<u32>> = version.split('.').map(number).collect();
    let [Some(major), Some(minor), Some(micro)] = parts.as_slice() else {
        return Err(malformed());
    };
    let (major, minor, micro) = (*major, *minor, *micro);
    if major != SUPPORTED_MAJOR || minor > NEWEST_KNOWN_MINOR {
        let why = if major == SUPPORTED_MAJOR {
            "a minor version newer than gpuopt has checked"
        } else {
            "a major version gpuopt does not model"
        };
        return Err(Error::input(
            codes::VERSION_UNSUPPORTED,
            format!("{shown}: export schema {version} has {why}"),
        )
        .with_path(shown.to_string())
        .with_expected(format!(
            "export schema {SUPPORTED_MAJOR}.x up to {SUPPORTED_MAJOR}.{NEWEST_KNOWN_MINOR}.x"
        ))
        .with_observed(version.to_string()));
    }
    Ok((major, minor, micro))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_versions_parse_strictly() {
        // Issue 13.10: '3.99.0', ' 3.20.3' and '3.20' were accepted.
        assert_eq!(parse_schema_version("f", "3.20.3").unwrap(), (3, 20, 3));
        assert_eq!(parse_schema_version("f", "3.25.0").unwrap(), (3, 25, 0));
        assert_eq!(parse_schema_version("f", "3.16.1").unwrap(), (3, 16, 1));
        for bad in [
            "3.99.0",
            " 3.20.3",
            "3.20.3 ",
            "3.20",
            "3",
            "4.0.0",
            "2.20.3",
            "3.+20.3",
            "3.20.3.1",
            "3..3",
            "",
            "3.20.x",
            "03.20.99999999999",
        ] {
            let err = parse_schema_version("f", bad).unwrap_err();
            assert_eq!(err.code, codes::VERSION_UNSUPPORTED, "{bad:?}");
        }
        assert!(parse_schema_version("f", "3.26.0")
            .unwrap_err()
            .message
            .contains("newer than gpuopt has checked"));
    }

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
