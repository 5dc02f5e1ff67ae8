//! Engine tests on the real fixtures in `tests/data/fixtures` (NVIDIA's own `nsys stats` output is the
//! oracle; the Python tests compare every cell, these pin the engine without an interpreter).

use super::scan::{self, Reader};
use super::schema::SOURCES;
use super::select::Request;
use super::timeline::GapKeep;
use super::Report;
use arrow_array::{Array, Float64Array, Int64Array, StringArray};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    crate::testdata::fixtures()
}

fn eager() -> PathBuf {
    fixtures().join("h200/nsys/eager.sqlite")
}

fn all_fixtures() -> Vec<PathBuf> {
    let mut out = vec![eager()];
    let public = fixtures().join("public/nsys");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&public)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    names.sort();
    out.extend(
        names
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "sqlite")),
    );
    assert!(
        out.len() >= 7,
        "expected the h200 and 6 public nsys fixtures"
    );
    out
}

pub(super) fn ints(t: &crate::table::Table, col: &str) -> Vec<i64> {
    let b = &t.batches[0];
    let a = b.column_by_name(col).unwrap();
    let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
    (0..a.len()).map(|i| a.value(i)).collect()
}

pub(super) fn floats(t: &crate::table::Table, col: &str) -> Vec<f64> {
    let b = &t.batches[0];
    let a = b.column_by_name(col).unwrap();
    let a = a.as_any().downcast_ref::<Float64Array>().unwrap();
    (0..a.len()).map(|i| a.value(i)).collect()
}

pub(super) fn texts(t: &crate::table::Table, col: &str) -> Vec<String> {
    let b = &t.batches[0];
    let a = b.column_by_name(col).unwrap();
    let a = a.as_any().downcast_ref::<StringArray>().unwrap();
    (0..a.len()).map(|i| a.value(i).to_string()).collect()
}

/// The direct page reader and SQLite agree on every row and column of every table gpuopt reads, in
/// every fixture (the same rows in the same order).
#[test]
fn page_reader_agrees_with_sqlite_on_every_fixture() {
    for path in all_fixtures() {
        let report = Report::open(&path).unwrap();
        for source in SOURCES {
            let Some(table) = report.schema.table(source) else {
                continue;
            };
            let mut columns: Vec<&str> = vec!["rowid"];
            columns.extend(table.layout.order.iter().map(String::as_str));
            columns.truncate(super::pages::MAX_COLUMNS);
            let read = |reader| {
                scan::scan_with(
                    reader,
                    &report.schema,
                    table,
                    &columns,
                    Vec::new,
                    |acc: &mut Vec<String>, row| {
                        let mut line = String::new();
                        for i in 0..columns.len() {
                            line.push_str(&row.opt_text(i).unwrap_or_else(|| "NULL".into()));
                            line.push('|');
                        }
                        acc.push(line);
                        Ok(())
                    },
                )
                .unwrap()
                .concat()
            };
            let direct = read(Reader::Auto);
            let sqlite = read(Reader::Sqlite);
            assert_eq!(
                direct.len(),
                sqlite.len(),
                "{} {}",
                path.display(),
                table.actual
            );
            assert_eq!(direct, sqlite, "{} {}", path.display(), table.actual);
        }
    }
}

#[test]
fn every_fixture_opens_and_reports_its_schema() {
    let expected = [
        ("eager.sqlite", "3.20.3"),
        ("fuser_2024.6.2.sqlite", "3.16.1"),
        ("fuser_h200_2025.1.1.sqlite", "3.17.1"),
        ("h100_2gpu_1s.sqlite", "3.25.0"),
        ("mfu_2gpu_after.sqlite", "3.25.0"),
        ("mfu_2gpu_before.sqlite", "3.25.0"),
        ("mock.sqlite", "3.24.14"),
    ];
    for path in all_fixtures() {
        let report = Report::open(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let want = expected.iter().find(|(f, _)| *f == file).map(|(_, v)| *v);
        assert_eq!(
            Some(report.schema.meta.schema_version.as_str()),
            want,
            "{file}"
        );
        for name in super::STATS_REPORTS {
            report.stats(name, &Request::default()).unwrap();
        }
        report.timeline(&Request::default()).unwrap();
        report.nvtx(&Request::default(), true).unwrap();
        report.memory(&Request::default()).unwrap();
        let all = report.gaps(&Request::default(), GapKeep::All).unwrap();
        report
            .gaps(&Request::default(), GapKeep::Longest(3))
            .unwrap();
        // The first 3 in table order are the table's first 3 rows.
        let first = report.gaps(&Request::default(), GapKeep::First(3)).unwrap();
        let head: Vec<i64> = ints(&all, "start_ns").into_iter().take(3).collect();
        assert_eq!(ints(&first, "start_ns"), head, "{file}");
        assert_eq!(ints(&first, "device_id").len(), head.len());
        report.info().unwrap();
    }
}

#[test]
fn info_reads_the_driver_versions_of_target_info_system_env() {
    let info = Report::open(&eager()).unwrap().info().unwrap();
    assert_eq!(info.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(info.cuda_driver_version.as_deref(), Some("13000"));
    let mock = Report::open(&fixtures().join("public/nsys/mock.sqlite")).unwrap();
    let info = mock.info().unwrap();
    assert_eq!(info.driver_version.as_deref(), Some("591.86"));
    assert_eq!(info.cuda_driver_version.as_deref(), Some("13010"));
}

#[test]
fn eager_kernel_summary_matches_nsys() {
    let report = Report::open(&eager()).unwrap();
    let t = report
        .stats("cuda_gpu_kern_sum", &Request::default())
        .unwrap();
    assert_eq!(
        ints(&t, "total_time_ns"),
        vec![4421779, 949717, 718522, 683286, 362172, 179389, 90718]
    );
    assert_eq!(ints(&t, "instances"), vec![64, 16, 16, 32, 32, 8, 8]);
    assert_eq!(floats(&t, "med_ns")[0], 78527.0);
    assert_eq!(format!("{:.1}", floats(&t, "stddev_ns")[0]), "26702.3");
    assert_eq!(
        texts(&t, "name")[0],
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
    );
    assert_eq!(ints(&t, "instances").iter().sum::<i64>(), 176);
}

#[test]
fn eager_api_summary_strips_only_v_suffixes() {
    let report = Report::open(&eager()).unwrap();
    let t = report.stats("cuda_api_sum", &Request::default()).unwrap();
    let names = texts(&t, "name");
    assert_eq!(names.len(), 28);
    assert_eq!(ints(&t, "num_calls").iter().sum::<i64>(), 2573);
    assert!(names.contains(&"cudaLaunchKernel".to_string()));
    assert!(names.contains(&"cuGetProcAddress_v2".to_string()));
    assert!(names.contains(&"cudaStreamIsCapturing_v10000".to_string()));
}

#[test]
fn nvtx_selection_keeps_work_launched_in_the_range() {
    let report = Report::open(&eager()).unwrap();
    let req = Request {
        nvtx: Some("step_3".into()),
        ..Request::default()
    };
    let t = report.stats("cuda_gpu_kern_sum", &req).unwrap();
    // nvtx_kern_sum's :step_3 rows: 8 + 2 + 2 + 4 + 4 + 1 + 1 kernels.
    assert_eq!(ints(&t, "instances").iter().sum::<i64>(), 22);
    assert_eq!(
        ints(&t, "total_time_ns").iter().sum::<i64>(),
        547672 + 119744 + 90558 + 85440 + 45024 + 22624 + 11552
    );
    let unknown = report.stats(
        "cuda_gpu_kern_sum",
        &Request {
            nvtx: Some("no_such_range".into()),
            ..Request::default()
        },
    );
    assert_eq!(
        unknown.map(|_| ()).map_err(|e| e.code),
        Err(super::codes::NVTX_RANGE_UNKNOWN)
    );
}

/// Overflow pages (values longer than a page), interior pages (many rows), rows written before
/// `ALTER TABLE ADD COLUMN` (shorter records) and an `INTEGER PRIMARY KEY` rowid alias: the direct
/// reader and SQLite still agree.
#[test]
fn page_reader_handles_overflow_interior_pages_and_added_columns() {
    let dir = std::env::temp_dir().join(format!("gpuopt-pages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("built.sqlite");
    let _ = std::fs::remove_file(&path);
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        let tx = conn.transaction().unwrap();
        tx.execute_batch(
            "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3');
             CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL);",
        )
        .unwrap();
        for (i, len) in [10usize, 5000, 20000, 100_000, 4061, 4062]
            .iter()
            .enumerate()
        {
            let text: String = (0..*len)
                .map(|k| char::from(b'a' + (k % 26) as u8))
                .collect();
            tx.execute(
                "INSERT INTO StringIds VALUES (?1, ?2)",
                rusqlite::params![i as i64 + 1, text],
            )
            .unwrap();
        }
        for i in 0..20_000i64 {
            tx.execute(
                "INSERT INTO NVTX_EVENTS VALUES (?1, ?2, 59)",
                rusqlite::params![i * 10, if i % 7 == 0 { None } else { Some(i * 10 + 5) }],
            )
            .unwrap();
        }
        tx.execute_batch(
            "ALTER TABLE NVTX_EVENTS ADD COLUMN text TEXT;
             ALTER TABLE NVTX_EVENTS ADD COLUMN globalTid INTEGER;
             ALTER TABLE NVTX_EVENTS ADD COLUMN endGlobalTid INTEGER;
             ALTER TABLE NVTX_EVENTS ADD COLUMN textId INTEGER;
             ALTER TABLE NVTX_EVENTS ADD COLUMN domainId INTEGER;
             INSERT INTO NVTX_EVENTS VALUES (1, 2, 59, 'late', 5, NULL, NULL, 0);",
        )
        .unwrap();
        tx.commit().unwrap();
    }
    let report = Report::open(&path).unwrap();
    for source in [&super::schema::STRING_IDS, &super::schema::NVTX] {
        let table = report.schema.table(source).unwrap();
        let mut columns: Vec<&str> = vec!["rowid"];
        columns.extend(table.layout.order.iter().map(String::as_str));
        let read = |reader| {
            scan::scan_with(
                reader,
                &report.schema,
                table,
                &columns,
                Vec::new,
                |acc: &mut Vec<String>, row| {
                    let cells: Vec<String> = (0..columns.len())
                        .map(|i| row.opt_text(i).unwrap_or_else(|| "NULL".into()))
                        .collect();
                    acc.push(cells.join("|"));
                    Ok(())
                },
            )
            .unwrap()
            .concat()
        };
        let direct = read(Reader::Auto);
        assert_eq!(direct, read(Reader::Sqlite), "{}", table.actual);
        assert!(direct.len() >= 6);
    }
    // The direct reader did read these (a multi-level b-tree), not fall back: it lists leaf pages.
    let root = report
        .schema
        .table(&super::schema::NVTX)
        .unwrap()
        .layout
        .root
        .unwrap();
    assert!(super::pages::Tree::open(&path, root).unwrap().leaves.len() > 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The merge join finds, for every GPU operation of every fixture, the runtime call SQLite finds for
/// its (process, correlation id), in any order of the keys (reversed keys gallop backwards), and
/// repeated keys all get the call.
#[test]
fn call_join_matches_sqlite_on_every_fixture() {
    use super::ops::{self, OpKind};
    use super::select::{Selection, PID_MASK};
    let kinds = [
        OpKind::Kernel,
        OpKind::Memcpy,
        OpKind::Memset,
        OpKind::Graph,
    ];
    let mut matched_total = 0usize;
    for path in all_fixtures() {
        let report = Report::open(&path).unwrap();
        let (schema, strings) = (&report.schema, &report.strings);
        let all = ops::load(schema, strings, &Selection::default(), &kinds).unwrap();
        let mut keys: Vec<(i64, i64)> = all.iter().map(|o| (o.global_pid, o.correlation)).collect();
        let forward = ops::join_calls(schema, strings, keys.iter().copied()).unwrap();
        keys.reverse();
        let mut backward = ops::join_calls(schema, strings, keys.iter().copied()).unwrap();
        backward.reverse();
        assert_eq!(forward, backward, "{}", path.display());
        // Each key twice: both copies get the call.
        let doubled = ops::join_calls(
            schema,
            strings,
            all.iter()
                .flat_map(|o| [(o.global_pid, o.correlation); 2])
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let want: Vec<_> = forward.iter().flat_map(|c| [*c; 2]).collect();
        assert_eq!(doubled, want, "{}", path.display());
        // The oracle: the first runtime row (rowid order) of each (process, correlation id).
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut first: std::collections::HashMap<(i64, i64), (i64, i64, i64)> =
            std::collections::HashMap::new();
        if let Some(t) = schema.table(&super::schema::RUNTIME) {
            let sql = format!(
                "SELECT correlationId, globalTid, start, end FROM \"{}\" \
                 WHERE correlationId IS NOT NULL ORDER BY rowid",
                t.actual
            );
            let mut stmt = conn.prepare(&sql).unwrap();
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                })
                .unwrap();
            for row in rows {
                let (corr, tid, start, end) = row.unwrap();
                first
                    .entry((tid & PID_MASK, corr))
                    .or_insert((start, end, tid));
            }
        }
        for (op, call) in all.iter().zip(&forward) {
            assert_eq!(
                call.map(|c| (c.start, c.end, c.global_tid)),
                first
                    .get(&(op.global_pid & PID_MASK, op.correlation))
                    .copied(),
                "{}",
                path.display()
            );
            matched_total += usize::from(call.is_some());
        }
    }
    assert!(matched_total > 0);
}

/// The direct reader's row counts (leaf cell counts) equal SQLite's `count(*)` for every source
/// table of every fixture.
#[test]
fn leaf_counts_match_sqlite_count_on_every_fixture() {
    use super::schema::SOURCES;
    let mut tables = 0usize;
    for path in all_fixtures() {
        let report = Report::open(&path).unwrap();
        let schema = &report.schema;
        let conn = schema.connect().unwrap();
        for source in SOURCES {
            let Some(table) = schema.table(source) else {
                continue;
            };
            let want: i64 = conn
                .query_row(
                    &format!("SELECT count(*) FROM \"{}\"", table.actual),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let got = super::scan::count(schema, table).unwrap();
            assert_eq!(got, want, "{} {}", path.display(), table.actual);
            tables += 1;
        }
    }
    assert!(tables > 10, "only {tables} tables counted");
}

/// The recipe "Where to add a new nsys fact" (`references/architecture.md`): every table the engine
/// builds has exactly the columns `fields.rs` declares for it, of the declared types, and every
/// declaration is a table some fact builds (a declaration without its table, or a table built
/// without its declaration, fails here).
#[test]
fn every_table_is_built_as_declared() {
    let report = Report::open(&eager()).unwrap();
    let req = Request::default();
    let mut built: Vec<(String, crate::table::Table)> = super::STATS_REPORTS
        .iter()
        .map(|name| (format!("nsys.{name}"), report.stats(name, &req).unwrap()))
        .collect();
    built.push(("nsys.memory".into(), report.memory(&req).unwrap()));
    built.push(("nsys.nvtx_ranges".into(), report.nvtx(&req, false).unwrap()));
    built.push((
        "nsys.nvtx_instances".into(),
        report.nvtx(&req, true).unwrap(),
    ));
    built.push(("nsys.comm".into(), report.comm(&req).unwrap()));
    built.push(("nsys.gaps".into(), report.gaps(&req, GapKeep::All).unwrap()));
    built.push(("nsys.operations".into(), report.operations(&req).unwrap()));
    built.push((
        "nsys.cuda_gpu_kern_sum".into(),
        report.kernels(&req, true).unwrap(),
    ));
    let declared = super::fields::tables();
    for (key, table) in &built {
        let columns = &declared.iter().find(|d| d.key == key).unwrap().columns;
        let fields = table.schema.fields();
        assert_eq!(fields.len(), columns.len(), "{key}");
        for (field, column) in fields.iter().zip(columns) {
            assert_eq!(field.name(), column.name, "{key}");
            assert!(
                column.dtype.matches(field.data_type()),
                "{key}.{}",
                column.name
            );
        }
    }
    let keys: std::collections::BTreeSet<&str> = built.iter().map(|(k, _)| k.as_str()).collect();
    let declared: std::collections::BTreeSet<&str> = declared.iter().map(|d| d.key).collect();
    assert_eq!(keys, declared);
}
