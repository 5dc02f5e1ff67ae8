//! Parallel row scans of one resolved table: the leaf pages (through the direct b-tree reader) or
//! rowid ranges (through SQLite) are split among the workers, each reading its own part through its
//! own connection.

use super::db::{connect, sql_error, value_of, Cells};
use super::pages::{self, Val};
use super::schema::{Schema, TableInfo};
use crate::error::Result;
use rayon::prelude::*;

/// Leaf pages a worker reads at the least (256 KiB of 4 KiB pages): a smaller table is read on the
/// calling thread, because handing it to the pool costs more than it saves, and callers reading many
/// files at once (`--workers`) would otherwise queue on the one pool for each small table.
const MIN_LEAVES_PER_WORKER: usize = 64;

/// How many leaves each worker reads: the leaves split among the pool, `MIN_LEAVES_PER_WORKER` at least.
fn leaves_per_worker(leaves: usize) -> usize {
    leaves
        .div_ceil(rayon::current_num_threads().max(1))
        .max(MIN_LEAVES_PER_WORKER)
}

/// How a scan reads the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The direct b-tree reader, falling back to SQLite when it steps aside.
    Auto,
    /// SQLite only (`sqlite3_step` per row).
    Sqlite,
}

/// Scans columns of `table` (`"rowid"` names the rowid), folding rows into per-worker accumulators.
/// The leaf pages (or rowid ranges, through SQLite) are split among the workers in order, and the
/// accumulators come back in that order, so a merge is deterministic whatever the thread count.
pub fn scan<A, I, F>(
    schema: &Schema,
    table: &TableInfo,
    columns: &[&str],
    init: I,
    fold: F,
) -> Result<Vec<A>>
where
    A: Send,
    I: Fn() -> A + Sync,
    F: Fn(&mut A, &Cells<'_>) -> Result<()> + Sync,
{
    scan_with(Reader::Auto, schema, table, columns, init, fold)
}

/// [`scan`] with a chosen reader (tests compare the two).
pub fn scan_with<A, I, F>(
    reader: Reader,
    schema: &Schema,
    table: &TableInfo,
    columns: &[&str],
    init: I,
    fold: F,
) -> Result<Vec<A>>
where
    A: Send,
    I: Fn() -> A + Sync,
    F: Fn(&mut A, &Cells<'_>) -> Result<()> + Sync,
{
    if reader == Reader::Auto {
        // The direct reader steps aside (Err) on layouts it does not handle; SQLite reads those.
        if let Ok(done) = scan_pages(schema, table, columns, &init, &fold) {
            return done;
        }
    }
    scan_sqlite(schema, table, columns, &init, &fold)
}

/// The number of rows of `table`: the leaf pages' cell counts (split among the workers) through the
/// direct reader, or SQLite's `count(*)` where the reader steps aside.
pub fn count(schema: &Schema, table: &TableInfo) -> Result<i64> {
    let direct = table.layout.root.ok_or(()).and_then(|root| {
        let tree = pages::Tree::open(&schema.path, root).map_err(|_| ())?;
        let per = leaves_per_worker(tree.leaves.len());
        let parts: std::result::Result<Vec<u64>, pages::Unsupported> = if tree.leaves.len() <= per {
            tree.leaves.chunks(per).map(|c| tree.count(c)).collect()
        } else {
            tree.leaves.par_chunks(per).map(|c| tree.count(c)).collect()
        };
        let n: u64 = parts.map_err(|_| ())?.into_iter().sum();
        i64::try_from(n).map_err(|_| ())
    });
    if let Ok(n) = direct {
        return Ok(n);
    }
    let conn = connect(&schema.uri, &schema.path)?;
    conn.query_row(
        &format!(
            "SELECT count(*) FROM \"{}\"",
            table.actual.replace('"', "\"\"")
        ),
        [],
        |r| r.get(0),
    )
    .map_err(|e| sql_error(&e, &schema.path))
}

fn scan_pages<A, I, F>(
    schema: &Schema,
    table: &TableInfo,
    columns: &[&str],
    init: &I,
    fold: &F,
) -> std::result::Result<Result<Vec<A>>, pages::Unsupported>
where
    A: Send,
    I: Fn() -> A + Sync,
    F: Fn(&mut A, &Cells<'_>) -> Result<()> + Sync,
{
    let Some(root) = table.layout.root else {
        return Err(pages::Unsupported("no table b-tree".into()));
    };
    let mut positions = Vec::with_capacity(columns.len());
    for c in columns {
        match table.layout.position(c) {
            Some(p) => positions.push(p),
            None => return Err(pages::Unsupported(format!("no column {c}"))),
        }
    }
    let tree = pages::Tree::open(&schema.path, root)?;
    let per = leaves_per_worker(tree.leaves.len());
    let chunks: Vec<&[u32]> = tree.leaves.chunks(per).collect();
    let table_name = table.actual.as_str();
    let read = |leaves: &[u32]| {
        let mut acc = init();
        let mut each = |rowid: i64, vals: &[Val<'_>]| {
            fold(
                &mut acc,
                &Cells::new(vals, columns, table_name, Some(rowid)),
            )
        };
        match tree.scan(leaves, &positions, &mut each)? {
            Ok(()) => Ok(Ok(acc)),
            Err(e) => Ok(Err(e)),
        }
    };
    let results: Vec<std::result::Result<Result<A>, pages::Unsupported>> = if chunks.len() <= 1 {
        chunks.into_iter().map(read).collect()
    } else {
        chunks.into_par_iter().map(read).collect()
    };
    let mut out = Vec::with_capacity(results.len());
    for r in results {
        match r? {
            Ok(acc) => out.push(acc),
            Err(e) => return Ok(Err(e)),
        }
    }
    if out.is_empty() {
        out.push(init());
    }
    Ok(Ok(out))
}

fn scan_sqlite<A, I, F>(
    schema: &Schema,
    table: &TableInfo,
    columns: &[&str],
    init: &I,
    fold: &F,
) -> Result<Vec<A>>
where
    A: Send,
    I: Fn() -> A + Sync,
    F: Fn(&mut A, &Cells<'_>) -> Result<()> + Sync,
{
    let (uri, path, name) = (&schema.uri, &schema.path, table.actual.as_str());
    let conn = connect(uri, path)?;
    let bounds: (Option<i64>, Option<i64>) = conn
        .query_row(
            &format!("SELECT min(rowid), max(rowid) FROM \"{name}\""),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| sql_error(&e, path))?;
    let (Some(lo), Some(hi)) = bounds else {
        return Ok(vec![init()]);
    };
    let quoted: Vec<String> = columns
        .iter()
        .map(|c| {
            if *c == "rowid" {
                "rowid".to_string()
            } else {
                format!("\"{c}\"")
            }
        })
        .collect();
    // The rowid rides last, so that an error can name the row.
    let sql = format!(
        "SELECT {}, rowid FROM \"{name}\" WHERE rowid >= ?1 AND rowid <= ?2",
        quoted.join(", ")
    );
    ranges(lo, hi, rayon::current_num_threads().max(1))
        .into_par_iter()
        .map(|(a, b)| {
            let conn = connect(uri, path)?;
            let mut stmt = conn.prepare(&sql).map_err(|e| sql_error(&e, path))?;
            let mut rows = stmt.query([a, b]).map_err(|e| sql_error(&e, path))?;
            let mut acc = init();
            while let Some(row) = rows.next().map_err(|e| sql_error(&e, path))? {
                let mut vals = [Val::Null; pages::MAX_COLUMNS];
                for (i, slot) in vals.iter_mut().enumerate().take(columns.len()) {
                    *slot = value_of(row, i)?;
                }
                let rowid = match value_of(row, columns.len())? {
                    Val::Int(r) => Some(r),
                    _ => None,
                };
                let read = vals.get(..columns.len()).unwrap_or_default();
                let cells = Cells::new(read, columns, name, rowid);
                fold(&mut acc, &cells)?;
            }
            Ok(acc)
        })
        .collect()
}

/// Splits `[lo, hi]` into at most `n` contiguous, non-empty ranges.
fn ranges(lo: i64, hi: i64, n: usize) -> Vec<(i64, i64)> {
    let span = i128::from(hi) - i128::from(lo) + 1;
    let n = i128::try_from(n).unwrap_or(1).clamp(1, span.max(1));
    let step = (span + n - 1) / n;
    let mut out = Vec::new();
    let mut a = i128::from(lo);
    while a <= i128::from(hi) {
        let b = (a + step - 1).min(i128::from(hi));
        if let (Ok(x), Ok(y)) = (i64::try_from(a), i64::try_from(b)) {
            out.push((x, y));
        }
        a = b + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_exactly() {
        assert_eq!(ranges(1, 10, 3), vec![(1, 4), (5, 8), (9, 10)]);
        assert_eq!(ranges(5, 5, 4), vec![(5, 5)]);
        assert_eq!(ranges(1, 2, 8), vec![(1, 1), (2, 2)]);
    }
}
