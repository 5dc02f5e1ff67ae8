//! Memory operations: `cuda_gpu_mem_time_sum`, `cuda_gpu_mem_size_sum`, and memcpy/memset facts by
//! kind with bytes, time and achieved bandwidth (pageable vs pinned host memory).

use super::codes;
use super::db;
use super::describe::{Durations, Summary};
use super::fields;
use super::ops::{self, Op, OpKind};
use super::out::{total_i64, Columns};
use super::schema::{Schema, ENUM_MEMCPY_OPER, ENUM_MEM_KIND, MEMCPY, MEMSET};
use super::select::Selection;
use super::strings::Strings;
use super::summary;
use crate::error::{Error, Result};
use crate::table::Table;
use std::collections::BTreeMap;

/// An `ENUM_*` table: id → label.
pub fn enum_labels(
    schema: &Schema,
    source: &super::schema::Source,
) -> Result<BTreeMap<i64, String>> {
    let Some(table) = schema.table(source) else {
        return Ok(BTreeMap::new());
    };
    let name = table.actual.clone();
    let rows = db::query_all(
        &schema.uri,
        &schema.path,
        &format!("SELECT id, label FROM \"{name}\""),
        |row| {
            Ok((
                db::int(row, 0, &name, "id")?,
                db::opt_text(row, 1)?.unwrap_or_default(),
            ))
        },
    )?;
    Ok(rows.into_iter().collect())
}

fn label<'a>(
    labels: &'a BTreeMap<i64, String>,
    id: i64,
    table: &str,
    column: &str,
    enum_table: &str,
) -> Result<&'a str> {
    labels.get(&id).map(String::as_str).ok_or_else(|| {
        Error::input(
            codes::ENUM_UNKNOWN,
            format!("{table}.{column} holds {id}, which {enum_table} does not name"),
        )
        .with_expected(format!("a value listed in {enum_table}"))
        .with_observed(id.to_string())
    })
}

/// The operation name nsys prints: `[CUDA memcpy <copy kind label>]` or `[CUDA memset]`.
fn operation(op: &Op, opers: &BTreeMap<i64, String>) -> Result<String> {
    match op.kind {
        OpKind::Memcpy => Ok(format!(
            "[CUDA memcpy {}]",
            label(
                opers,
                op.name,
                MEMCPY.name,
                "copyKind",
                ENUM_MEMCPY_OPER.name
            )?
        )),
        _ => Ok("[CUDA memset]".to_string()),
    }
}

fn grouped(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    value: impl Fn(&Op) -> i64,
) -> Result<Vec<(String, Summary)>> {
    let opers = enum_labels(schema, &ENUM_MEMCPY_OPER)?;
    let memops = ops::load(schema, strings, sel, &[OpKind::Memcpy, OpKind::Memset])?;
    let mut groups: BTreeMap<String, Durations> = BTreeMap::new();
    for op in &memops {
        groups
            .entry(operation(op, &opers)?)
            .or_default()
            .push(value(op));
    }
    let mut rows = summary::describe_all(groups.into_iter().collect());
    rows.sort_by(|a, b| b.1.total.cmp(&a.1.total).then_with(|| a.0.cmp(&b.0)));
    Ok(rows)
}

/// `cuda_gpu_mem_time_sum`: memcpy/memset durations by operation, sorted by total time.
pub fn mem_time_sum(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let rows = grouped(schema, strings, sel, Op::duration)?;
    summary::time_table(fields::CUDA_GPU_MEM_TIME_SUM, &rows, "count", "operation")
}

/// `cuda_gpu_mem_size_sum`: memcpy/memset sizes (bytes) by operation, sorted by total bytes.
pub fn mem_size_sum(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let rows = grouped(schema, strings, sel, |op| op.bytes)?;
    Columns::of(fields::CUDA_GPU_MEM_SIZE_SUM)
        .int(
            "total_bytes",
            rows.iter()
                .map(|r| total_i64(r.1.total, "total_bytes"))
                .collect::<Result<_>>()?,
        )
        .int(
            "count",
            rows.iter()
                .map(|r| i64::try_from(r.1.count).unwrap_or(i64::MAX))
                .collect(),
        )
        .float("avg_bytes", rows.iter().map(|r| r.1.mean).collect())
        .float("med_bytes", rows.iter().map(|r| r.1.median).collect())
        .int("min_bytes", rows.iter().map(|r| r.1.min).collect())
        .int("max_bytes", rows.iter().map(|r| r.1.max).collect())
        .float("stddev_bytes", rows.iter().map(|r| r.1.stddev).collect())
        .text("operation", rows.iter().map(|r| r.0.clone()).collect())
        .build()
}

#[derive(Default)]
struct KindRow {
    count: i64,
    bytes: i128,
    time: i128,
    rates: Vec<f64>,
}

/// Memcpy and memset facts per (device, operation, copy kind, source kind, destination kind):
/// count, bytes, summed time, achieved bandwidth (Σ bytes / Σ time, in GB/s = bytes/ns) and the
/// median per-operation bandwidth. `host_memory` is the host side of a host↔device copy
/// (`Pageable`, `Pinned`, ...), null when neither side is on the host.
pub fn memory_by_kind(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let opers = enum_labels(schema, &ENUM_MEMCPY_OPER)?;
    let kinds = enum_labels(schema, &ENUM_MEM_KIND)?;
    let memops = ops::load(schema, strings, sel, &[OpKind::Memcpy, OpKind::Memset])?;
    type Key = (
        i64,
        String,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let mut rows: BTreeMap<Key, KindRow> = BTreeMap::new();
    for op in &memops {
        let (copy_kind, src, dst, host) = match op.kind {
            OpKind::Memcpy => {
                let copy = label(
                    &opers,
                    op.name,
                    MEMCPY.name,
                    "copyKind",
                    ENUM_MEMCPY_OPER.name,
                )?;
                let src = label(
                    &kinds,
                    op.src_kind,
                    MEMCPY.name,
                    "srcKind",
                    ENUM_MEM_KIND.name,
                )?;
                let dst = label(
                    &kinds,
                    op.dst_kind,
                    MEMCPY.name,
                    "dstKind",
                    ENUM_MEM_KIND.name,
                )?;
                let host = host_side(src, dst);
                (
                    copy.to_string(),
                    Some(src.to_string()),
                    Some(dst.to_string()),
                    host,
                )
            }
            _ => {
                let mem = if op.name >= 0 && !kinds.is_empty() {
                    Some(
                        label(&kinds, op.name, MEMSET.name, "memKind", ENUM_MEM_KIND.name)?
                            .to_string(),
                    )
                } else {
                    None
                };
                ("Memset".to_string(), None, mem, None)
            }
        };
        let key = (
            op.device,
            op.kind.as_str().to_string(),
            copy_kind,
            src,
            dst,
            host,
        );
        let row = rows.entry(key).or_default();
        row.count += 1;
        row.bytes += i128::from(op.bytes);
        row.time += i128::from(op.duration());
        if op.duration() > 0 {
            row.rates.push(op.bytes as f64 / op.duration() as f64);
        }
    }
    let rows: Vec<(Key, KindRow)> = rows.into_iter().collect();
    Columns::of(fields::MEMORY)
        .int("device_id", rows.iter().map(|r| r.0 .0).collect())
        .text("operation", rows.iter().map(|r| r.0 .1.clone()).collect())
        .text("copy_kind", rows.iter().map(|r| r.0 .2.clone()).collect())
        .opt_text("src_kind", rows.iter().map(|r| r.0 .3.clone()).collect())
        .opt_text("dst_kind", rows.iter().map(|r| r.0 .4.clone()).collect())
        .opt_text("host_memory", rows.iter().map(|r| r.0 .5.clone()).collect())
        .int("count", rows.iter().map(|r| r.1.count).collect())
        .int(
            "total_bytes",
            rows.iter()
                .map(|r| total_i64(r.1.bytes, "total_bytes"))
                .collect::<Result<_>>()?,
        )
        .int(
            "total_time_ns",
            rows.iter()
                .map(|r| total_i64(r.1.time, "total_time_ns"))
                .collect::<Result<_>>()?,
        )
        .opt_float(
            "bandwidth_gbps",
            rows.iter()
                .map(|r| (r.1.time > 0).then(|| r.1.bytes as f64 / r.1.time as f64))
                .collect(),
        )
        .opt_float(
            "median_op_bandwidth_gbps",
            rows.iter().map(|r| median_f64(&r.1.rates)).collect(),
        )
        .build()
}

/// The host memory kind of a copy with exactly one host side (`Pageable`/`Pinned`), else None.
fn host_side(src: &str, dst: &str) -> Option<String> {
    let host = |k: &str| matches!(k, "Pageable" | "Pinned");
    match (host(src), host(dst)) {
        (true, false) => Some(src.to_string()),
        (false, true) => Some(dst.to_string()),
        _ => None,
    }
}

fn median_f64(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let hi = *v.get(n / 2)?;
    if n % 2 == 1 {
        Some(hi)
    } else {
        Some((*v.get(n / 2 - 1)? + hi) / 2.0)
    }
}
