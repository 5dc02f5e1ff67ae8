//! SQLite access: the file check before SQLite opens it, read-only immutable connections, SQLite
//! error mapping, whole queries, and the cell readers (and timestamp checks) every row goes through.
//! Scans of a resolved table, which need the schema, are `scan.rs`.

use super::codes;
use super::pages::Val;
use crate::error::{Error, Result};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The 16-byte magic at the start of every SQLite 3 database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The size of the database header; a shorter file cannot be a database.
const HEADER_LEN: usize = 100;
/// Page cache per connection (KiB, as a negative `cache_size`): scans are sequential, so a small
/// cache keeps the resident set small without costing speed.
const CACHE_KIB: i64 = 8192;

/// Checks that `path` is a regular file holding a complete SQLite database (magic, header, and the
/// page count the header claims), before SQLite itself touches it.
pub fn check_sqlite_file(path: &Path) -> Result<()> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if !meta.is_file() {
        return Err(Error::input(
            crate::error::codes::NOT_A_FILE,
            format!("{shown} is not a regular file"),
        )
        .with_path(shown));
    }
    let mut header = [0u8; HEADER_LEN];
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let read = read_up_to(&mut file, &mut header).map_err(|e| Error::io(path, &e))?;
    let magic = header.get(..read.min(16)).unwrap_or_default();
    if read < 16 || magic != SQLITE_MAGIC {
        return Err(Error::input(
            codes::FORMAT_INVALID,
            format!("{shown} is not an SQLite database: the first 16 bytes are not an SQLite header (an nsys export is made by `nsys export --type sqlite`)"),
        )
        .with_path(shown)
        .with_expected("an SQLite 3 file starting with \"SQLite format 3\"")
        .with_observed(format!("the first {}", crate::shape::of(magic))));
    }
    if read < HEADER_LEN {
        return Err(truncated(&shown, meta.len(), HEADER_LEN as u64));
    }
    let page_size = match u16_at(&header, 16) {
        1 => 65536u64,
        n => u64::from(n),
    };
    let page_count = u64::from(u32_at(&header, 28));
    // The in-header page count is valid only when the "version-valid-for" number equals the change
    // counter (SQLite file format §1.3.7); older writers leave it stale.
    let valid = u32_at(&header, 92) == u32_at(&header, 24);
    let expected = page_size.saturating_mul(page_count);
    if valid && page_count > 0 && meta.len() < expected {
        return Err(truncated(&shown, meta.len(), expected));
    }
    Ok(())
}

fn truncated(shown: &str, have: u64, need: u64) -> Error {
    Error::input(
        codes::FILE_TRUNCATED,
        format!("{shown} is truncated: {have} bytes, the SQLite header describes {need}"),
    )
    .with_path(shown)
    .with_expected(format!("{need} bytes"))
    .with_observed(format!("{have} bytes"))
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match file.read(rest)? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

fn u16_at(buf: &[u8], at: usize) -> u16 {
    match buf.get(at..at + 2) {
        Some(&[a, b]) => u16::from_be_bytes([a, b]),
        _ => 0,
    }
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    match buf.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_be_bytes([a, b, c, d]),
        _ => 0,
    }
}

/// The `file:` URI that opens `path` read-only and immutable (no locks, no journal, never a write).
pub fn uri_for(path: &Path) -> String {
    let mut uri = String::from("file:");
    // The file name's own bytes (a non-UTF-8 name must not turn into U+FFFD and a missing file).
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'.' | b'_' | b'-' | b'~') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    uri
}

/// Opens a read-only, immutable connection.
pub fn connect(uri: &str, path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags).map_err(|e| sql_error(&e, path))?;
    conn.pragma_update(None, "cache_size", -CACHE_KIB)
        .map_err(|e| sql_error(&e, path))?;
    conn.pragma_update(None, "query_only", true)
        .map_err(|e| sql_error(&e, path))?;
    Ok(conn)
}

/// Maps an SQLite error to the crate's error: a damaged file (SQLite's "malformed", whose length
/// the header check already found whole, so damaged rather than cut) or not a database at all is
/// `format_invalid`, anything else `nsys_sqlite_error`.
pub fn sql_error(err: &rusqlite::Error, path: &Path) -> Error {
    let shown = path.display().to_string();
    match err.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => Error::input(
            codes::FORMAT_INVALID,
            format!("{shown} is damaged: SQLite: {err}"),
        )
        .with_path(shown)
        .with_expected(
            "an SQLite export whose pages are intact (export it again from the .nsys-rep)",
        )
        .with_observed("a page SQLite reports malformed"),
        Some(rusqlite::ErrorCode::NotADatabase) => {
            Error::input(codes::FORMAT_INVALID, format!("{shown}: SQLite: {err}")).with_path(shown)
        }
        _ => Error::input(codes::SQLITE_ERROR, format!("{shown}: SQLite: {err}")).with_path(shown),
    }
}

/// An integer cell that must be present.
pub fn int(row: &Row<'_>, idx: usize, table: &str, column: &str) -> Result<i64> {
    cell_int(&value_of(row, idx)?, table, column)
}

/// An integer cell that may be NULL.
pub fn opt_int(row: &Row<'_>, idx: usize, table: &str, column: &str) -> Result<Option<i64>> {
    cell_opt_int(&value_of(row, idx)?, table, column)
}

/// A text cell that may be NULL.
pub fn opt_text(row: &Row<'_>, idx: usize) -> Result<Option<String>> {
    Ok(cell_opt_text(&value_of(row, idx)?))
}

/// Cell `idx` of an SQLite row, as the direct reader would have decoded it.
pub fn value_of<'a>(row: &'a Row<'_>, idx: usize) -> Result<Val<'a>> {
    match row.get_ref(idx) {
        Ok(v) => Ok(from_ref(v)),
        Err(e) => Err(Error::input(codes::SQLITE_ERROR, e.to_string())),
    }
}

fn from_ref(v: ValueRef<'_>) -> Val<'_> {
    match v {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(i) => Val::Int(i),
        ValueRef::Real(r) => Val::Real(r),
        ValueRef::Text(t) => Val::Text(t),
        ValueRef::Blob(b) => Val::Blob(b),
    }
}

fn cell_int(v: &Val<'_>, table: &str, column: &str) -> Result<i64> {
    match cell_opt_int(v, table, column)? {
        Some(i) => Ok(i),
        None => Err(Error::input(
            codes::VALUE_NULL,
            format!("{table}.{column} is NULL in a row where a value is required"),
        )
        .with_expected(format!("an integer in {table}.{column}"))
        .with_observed("NULL")),
    }
}

fn cell_opt_int(v: &Val<'_>, table: &str, column: &str) -> Result<Option<i64>> {
    match v {
        Val::Int(i) => Ok(Some(*i)),
        Val::Null => Ok(None),
        other => Err(Error::input(
            codes::VALUE_INVALID,
            format!("{table}.{column} holds a non-integer value"),
        )
        .with_expected(format!("an integer in {table}.{column}"))
        .with_observed(kind_of(other).to_string())),
    }
}

fn cell_opt_text(v: &Val<'_>) -> Option<String> {
    match v {
        Val::Null => None,
        Val::Int(i) => Some(i.to_string()),
        Val::Real(r) => Some(r.to_string()),
        Val::Text(t) | Val::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

fn kind_of(v: &Val<'_>) -> &'static str {
    match v {
        Val::Null => "NULL",
        Val::Int(_) => "integer",
        Val::Real(_) => "real",
        Val::Text(_) => "text",
        Val::Blob(_) => "blob",
    }
}

/// Timestamps beyond ±2^62 ns (146 years from the clock's origin) are not real; keeping them out at
/// the one place rows are read makes every difference of two timestamps fit in an `i64`.
pub const TIMESTAMP_LIMIT_NS: i64 = 1 << 62;

fn row_label(table: &str, rowid: Option<i64>) -> String {
    match rowid {
        Some(r) => format!("{table} row {r}"),
        None => format!("a row of {table}"),
    }
}

/// Checks one `start`/`end` pair as read: both timestamps possible, and end >= start.
/// The hot path (every row of every scan) forms no string: the row's label is made only on failure.
#[inline]
pub fn check_interval(table: &str, rowid: Option<i64>, start: i64, end: i64) -> Result<()> {
    let possible = -TIMESTAMP_LIMIT_NS..TIMESTAMP_LIMIT_NS;
    if possible.contains(&start) && possible.contains(&end) && end >= start {
        return Ok(());
    }
    interval_error(table, rowid, start, end)
}

#[cold]
fn interval_error(table: &str, rowid: Option<i64>, start: i64, end: i64) -> Result<()> {
    let at = row_label(table, rowid);
    for (column, t) in [("start", start), ("end", end)] {
        if !(-TIMESTAMP_LIMIT_NS..TIMESTAMP_LIMIT_NS).contains(&t) {
            return Err(Error::input(
                codes::TIMESTAMP_IMPOSSIBLE,
                format!("{at}: {column} = {t} ns is not a possible timestamp (more than 2^62 ns, 146 years, from the clock's origin)"),
            )
            .with_expected(format!("|{table}.{column}| < 2^62"))
            .with_observed(t.to_string()));
        }
    }
    if end < start {
        return Err(Error::input(
            codes::INTERVAL_INVERTED,
            format!("{at} ends before it starts (start {start}, end {end})"),
        )
        .with_expected("end >= start")
        .with_observed(format!(
            "end - start = {}",
            i128::from(end) - i128::from(start)
        )));
    }
    Ok(())
}

/// A `start`/`end` pair that must form a forward interval.
pub fn interval(row: &Row<'_>, s: usize, e: usize, table: &str) -> Result<(i64, i64)> {
    let start = int(row, s, table, "start")?;
    let end = int(row, e, table, "end")?;
    check_interval(table, None, start, end)?;
    Ok((start, end))
}

/// One scanned row: the requested columns, in request order.
pub struct Cells<'a> {
    vals: &'a [Val<'a>],
    names: &'a [&'a str],
    table: &'a str,
    rowid: Option<i64>,
}

impl<'a> Cells<'a> {
    /// The row `rowid` (where known) of `table`, holding the columns `names` as `vals`.
    #[inline]
    pub fn new(
        vals: &'a [Val<'a>],
        names: &'a [&'a str],
        table: &'a str,
        rowid: Option<i64>,
    ) -> Self {
        Self {
            vals,
            names,
            table,
            rowid,
        }
    }

    fn val(&self, i: usize) -> Val<'_> {
        self.vals.get(i).copied().unwrap_or(Val::Null)
    }

    fn name(&self, i: usize) -> &str {
        self.names.get(i).copied().unwrap_or("?")
    }

    /// An integer that must be present.
    #[inline]
    pub fn int(&self, i: usize) -> Result<i64> {
        match self.val(i) {
            Val::Int(v) => Ok(v),
            other => cell_int(&other, self.table, self.name(i)),
        }
    }

    /// An integer that may be NULL.
    #[inline]
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.val(i) {
            Val::Int(v) => Ok(Some(v)),
            other => cell_opt_int(&other, self.table, self.name(i)),
        }
    }

    pub fn opt_text(&self, i: usize) -> Option<String> {
        cell_opt_text(&self.val(i))
    }

    /// A size that may be NULL (0 then) and cannot be negative (bytes moved or set).
    #[inline]
    pub fn size_or_zero(&self, i: usize) -> Result<i64> {
        match self.opt_int(i)? {
            Some(v) if v < 0 => Err(self.negative(i, v)),
            v => Ok(v.unwrap_or(0)),
        }
    }

    #[cold]
    fn negative(&self, i: usize, v: i64) -> Error {
        let column = self.name(i);
        Error::input(
            codes::VALUE_INVALID,
            format!(
                "{}: {column} is negative",
                row_label(self.table, self.rowid)
            ),
        )
        .with_expected(format!("{}.{column} >= 0", self.table))
        .with_observed(v.to_string())
    }

    /// Columns `s` and `e` as a forward interval.
    #[inline]
    pub fn interval(&self, s: usize, e: usize) -> Result<(i64, i64)> {
        let (start, end) = (self.int(s)?, self.int(e)?);
        check_interval(self.table, self.rowid, start, end)?;
        Ok((start, end))
    }
}

/// Runs a whole query on one connection (small tables: metadata, enums, strings, NVTX).
pub fn query_all<T, F>(uri: &str, path: &Path, sql: &str, mut each: F) -> Result<Vec<T>>
where
    F: FnMut(&Row<'_>) -> Result<T>,
{
    let conn = connect(uri, path)?;
    query_on(&conn, path, sql, &mut each)
}

/// Like [`query_all`], on an open connection.
pub fn query_on<T, F>(conn: &Connection, path: &Path, sql: &str, each: &mut F) -> Result<Vec<T>>
where
    F: FnMut(&Row<'_>) -> Result<T>,
{
    let mut stmt = conn.prepare(sql).map_err(|e| sql_error(&e, path))?;
    let mut rows = stmt.query([]).map_err(|e| sql_error(&e, path))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| sql_error(&e, path))? {
        out.push(each(row)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_escapes_query_characters() {
        assert_eq!(
            uri_for(Path::new("/a b/x?y#z%.sqlite")),
            "file:/a%20b/x%3Fy%23z%25.sqlite?mode=ro&immutable=1"
        );
    }
}
