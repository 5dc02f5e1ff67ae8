//! The export's identity and schema version, read from its metadata table and checked strictly.

use crate::error::{Error, Result};
use crate::nsys::{codes, db};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The export-schema major version gpuopt models (nsys 2023.3 … 2026.2 write 3.x).
pub const SUPPORTED_MAJOR: u32 = 3;
/// The newest export-schema minor version gpuopt has read (3.25.0, nsys 2026.2.1). A newer minor may
/// change what a column means without removing it, so it fails closed until it has been checked.
pub const NEWEST_KNOWN_MINOR: u32 = 25;

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

pub(super) fn read_meta(
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
        // Digits and dots are shown as they are; any other text only by its length (it is the
        // file's content, and can be anything).
        let seen =
            if version.len() <= 32 && version.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                format!("{version:?}")
            } else {
                format!("a {}-byte text that is not digits and dots", version.len())
            };
        Error::input(
            codes::VERSION_UNSUPPORTED,
            format!("{shown}: EXPORT_SCHEMA_VERSION {seen} is not a MAJOR.MINOR.MICRO version"),
        )
        .with_path(shown.to_string())
        .with_expected("MAJOR.MINOR.MICRO, e.g. 3.20.3")
        .with_observed(seen)
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
}
