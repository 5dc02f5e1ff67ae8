//! Coverage flags: GPU activity that is in the export but not in a fact, named so that no fact is
//! printed as complete when it is not.
//!
//! A table of GPU activity is one named `CUPTI_ACTIVITY_KIND_*` with `start`, `end` and `deviceId`
//! columns (work with a time span on a device). Every such table gpuopt does not read, when it has
//! rows, flags every GPU-time fact. Graph executions of a graph-level trace are modeled (busy time,
//! gaps, graphs) but hide their kernels, so they flag the facts that list kernels one by one.

use super::db;
use super::schema::{Schema, GRAPH_TRACE};
use crate::error::Result;
use serde::Serialize;

/// One table whose GPU activity a fact leaves out.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Coverage {
    pub table: String,
    pub rows: u64,
    /// What the fact leaves out, in words.
    pub note: String,
}

/// Facts that list kernels one by one (a graph-level trace hides the kernels of graph executions).
const KERNEL_FACTS: &[&str] = &[
    "kernels",
    "cuda_gpu_kern_sum",
    "cuda_kern_exec_sum",
    "nvtx_kern_sum",
];

/// The coverage flags of a fact by its name (`timeline`, `gaps`, `kernels`, an nsys report name...).
pub fn for_fact(schema: &Schema, fact: &str) -> Result<Vec<Coverage>> {
    let mut out = unmodeled_activity(schema)?;
    if KERNEL_FACTS.contains(&fact) {
        if let Some(table) = schema.table(&GRAPH_TRACE) {
            let rows = count_rows(schema, &table.actual)?;
            if rows > 0 {
                out.push(Coverage {
                    table: table.actual.clone(),
                    rows,
                    note: format!(
                        "{rows} CUDA graph executions (graph-level trace): their kernels are not \
                         listed one by one, so kernel counts and kernel time leave them out"
                    ),
                });
            }
        }
    }
    Ok(out)
}

/// The flags of the timeline facts (busy, idle, gaps, concurrency).
pub fn timeline(schema: &Schema) -> Result<Vec<Coverage>> {
    unmodeled_activity(schema)
}

/// Present, non-empty GPU activity tables that no fact reads.
fn unmodeled_activity(schema: &Schema) -> Result<Vec<Coverage>> {
    let mut out = Vec::new();
    for name in schema.unread_tables() {
        let Some(columns) = schema.all_tables.get(&name) else {
            continue;
        };
        let activity = name.starts_with("CUPTI_ACTIVITY_KIND_")
            && ["start", "end", "deviceId"]
                .iter()
                .all(|c| columns.contains(*c));
        if !activity {
            continue;
        }
        let rows = count_rows(schema, &name)?;
        if rows > 0 {
            out.push(Coverage {
                note: format!(
                    "{rows} rows of GPU activity gpuopt does not model: busy time, idle time, gaps \
                     and concurrency leave them out"
                ),
                table: name,
                rows,
            });
        }
    }
    Ok(out)
}

fn count_rows(schema: &Schema, table: &str) -> Result<u64> {
    let quoted = table.replace('"', "\"\"");
    let n = db::query_all(
        &schema.uri,
        &schema.path,
        &format!("SELECT count(*) FROM \"{quoted}\""),
        |row| db::int(row, 0, table, "count(*)"),
    )?;
    Ok(n.first()
        .copied()
        .and_then(|v| u64::try_from(v).ok())
        .unwrap_or(0))
}
