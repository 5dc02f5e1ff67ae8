//! The identity of an export: versions, capture options, GPUs, and what was captured.

use super::db;
use super::ranges;
use super::scan;
use super::schema::{ExportMeta, Schema, GRAPH_TRACE, KERNEL, SOURCES};
use super::strings::Strings;
use crate::error::Result;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Serialize)]
pub struct CaptureOption {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Gpu {
    pub id: Option<i64>,
    pub cuda_id: Option<i64>,
    pub name: Option<String>,
    pub chip_name: Option<String>,
    pub bus_location: Option<String>,
    pub uuid: Option<String>,
    pub sm_count: Option<i64>,
    pub total_memory_bytes: Option<i64>,
    pub memory_bandwidth_bytes_per_s: Option<i64>,
    pub clock_rate_hz: Option<i64>,
    pub l2_cache_bytes: Option<i64>,
    pub compute_capability: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceStatus {
    /// The table gpuopt reads (`CUPTI_ACTIVITY_KIND_KERNEL`).
    pub table: String,
    /// Its name in this file (a `_V<n>` name where versioned), or None when not captured.
    pub actual: Option<String>,
    pub captured: bool,
    pub rows: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Info {
    pub export: ExportMeta,
    pub capture: Vec<CaptureOption>,
    /// How many capture rows were environment variables (not reproduced: they may be private).
    pub capture_environment_variables: u64,
    pub gpus: Vec<Gpu>,
    /// Where `gpus` came from: `TARGET_INFO_GPU`, `TARGET_INFO_CUDA_DEVICE`, or none.
    pub gpu_source: Option<String>,
    pub sources: Vec<SourceStatus>,
    pub nvtx_ranges: u64,
    pub nvtx_open_ranges: u64,
    pub string_ids: u64,
    /// Tables in the file that no gpuopt fact reads.
    pub unread_tables: Vec<String>,
    /// How CUDA graphs were traced: see [`graph_trace_mode`].
    pub graph_trace_mode: Option<String>,
    /// `NvDriverVersion` of `TARGET_INFO_SYSTEM_ENV` (the NVIDIA driver, e.g. `580.95.05`).
    pub driver_version: Option<String>,
    /// `CudaDriverVersion` of `TARGET_INFO_SYSTEM_ENV` (the CUDA version the driver supports, e.g.
    /// `13000` for 13.0), as recorded.
    pub cuda_driver_version: Option<String>,
}

/// The system facts gpuopt reads from `TARGET_INFO_SYSTEM_ENV` (that table also holds the capture's
/// environment and host details, which are never read).
const SYSTEM_ENV_NAMES: [&str; 2] = ["NvDriverVersion", "CudaDriverVersion"];

/// `NvDriverVersion` and `CudaDriverVersion` of `TARGET_INFO_SYSTEM_ENV` (the last row of each, as the
/// table lists them; None when the export has no such table or row).
fn driver_versions(schema: &Schema) -> Result<(Option<String>, Option<String>)> {
    let has_table = schema
        .all_tables
        .get("TARGET_INFO_SYSTEM_ENV")
        .is_some_and(|c| c.contains("name") && c.contains("value"));
    if !has_table {
        return Ok((None, None));
    }
    let names = SYSTEM_ENV_NAMES.map(|n| format!("'{n}'")).join(", ");
    let rows = db::query_all(
        &schema.uri,
        &schema.path,
        &format!("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN ({names})"),
        |row| Ok((db::opt_text(row, 0)?, db::opt_text(row, 1)?)),
    )?;
    let last = |wanted: &str| {
        rows.iter()
            .rev()
            .find(|(name, _)| name.as_deref() == Some(wanted))
            .and_then(|(_, value)| value.clone())
            .filter(|v| !v.is_empty())
    };
    Ok((last("NvDriverVersion"), last("CudaDriverVersion")))
}

/// How the capture traced CUDA graphs (`nsys profile --cuda-graph-trace`): `graph` or `node` as the
/// capture option `CUDA_GRAPH_TRACE_OPTIONS:MODE` records it (per process: processes that differ give
/// `graph+node`), else as the rows show it (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE` rows: `graph`; a kernel
/// with a `graphNodeId`: `node`); None when neither says. Reads the option (a few rows) and, only
/// without it, the graph table's row count and at most one kernel row.
pub fn graph_trace_mode(schema: &Schema) -> Result<Option<String>> {
    let options = capture_options(schema)?.0;
    if let Some(mode) = mode_of_options(&options) {
        return Ok(Some(mode));
    }
    mode_of_rows(schema)
}

fn mode_of_options(options: &[CaptureOption]) -> Option<String> {
    let modes: BTreeSet<String> = options
        .iter()
        .filter(|o| o.name.ends_with("CUDA_GRAPH_TRACE_OPTIONS:MODE"))
        .map(|o| o.value.to_ascii_lowercase())
        .collect();
    (!modes.is_empty()).then(|| modes.into_iter().collect::<Vec<_>>().join("+"))
}

fn mode_of_rows(schema: &Schema) -> Result<Option<String>> {
    let graph = match schema.table(&GRAPH_TRACE) {
        Some(t) => scan::count(schema, t)? > 0,
        None => false,
    };
    let node = match schema.table(&KERNEL) {
        Some(t) if schema.has_column(&KERNEL, "graphNodeId") => !db::query_all(
            &schema.uri,
            &schema.path,
            &format!(
                "SELECT 1 FROM \"{}\" WHERE graphNodeId IS NOT NULL LIMIT 1",
                t.actual
            ),
            |_| Ok(()),
        )?
        .is_empty(),
        _ => false,
    };
    Ok(match (graph, node) {
        (true, true) => Some("graph+node".to_string()),
        (true, false) => Some("graph".to_string()),
        (false, true) => Some("node".to_string()),
        (false, false) => None,
    })
}

/// The capture options of `META_DATA_CAPTURE`, and how many rows were environment variables.
fn capture_options(schema: &Schema) -> Result<(Vec<CaptureOption>, u64)> {
    let mut capture = Vec::new();
    let mut env = 0u64;
    if schema
        .all_tables
        .get("META_DATA_CAPTURE")
        .is_some_and(|c| c.contains("name") && c.contains("value"))
    {
        let rows = db::query_all(
            &schema.uri,
            &schema.path,
            "SELECT name, value FROM META_DATA_CAPTURE",
            |row| {
                Ok((
                    db::opt_text(row, 0)?.unwrap_or_default(),
                    db::opt_text(row, 1)?.unwrap_or_default(),
                ))
            },
        )?;
        for (name, value) in rows {
            if name.ends_with("ENVIRONMENT_VARIABLE") {
                env += 1;
            } else {
                capture.push(CaptureOption { name, value });
            }
        }
    }
    Ok((capture, env))
}

pub fn info(schema: &Schema, strings: &Strings) -> Result<Info> {
    let conn = schema.connect()?;
    let (capture, env) = capture_options(schema)?;
    let (gpus, gpu_source) = gpus(schema, &conn)?;
    let mut sources = Vec::new();
    for source in SOURCES {
        let table = schema.table(source);
        let rows = match table {
            Some(t) => Some(scan::count(schema, t)?),
            None => None,
        };
        sources.push(SourceStatus {
            table: source.name.to_string(),
            actual: table.map(|t| t.actual.clone()),
            captured: table.is_some(),
            rows,
        });
    }
    let nv = ranges::load(schema, strings)?;
    let (driver_version, cuda_driver_version) = driver_versions(schema)?;
    Ok(Info {
        export: schema.meta.clone(),
        capture_environment_variables: env,
        gpus,
        gpu_source,
        sources,
        nvtx_ranges: u64::try_from(nv.ranges.len()).unwrap_or(u64::MAX),
        nvtx_open_ranges: u64::try_from(nv.open_ranges).unwrap_or(u64::MAX),
        string_ids: u64::try_from(strings.len()).unwrap_or(u64::MAX),
        unread_tables: schema.unread_tables(),
        graph_trace_mode: match mode_of_options(&capture) {
            Some(mode) => Some(mode),
            None => mode_of_rows(schema)?,
        },
        driver_version,
        cuda_driver_version,
        capture,
    })
}

/// GPUs from `TARGET_INFO_GPU`, else `TARGET_INFO_CUDA_DEVICE`; only the columns the file has.
/// The GPUs the export describes, without the rest of [`info`].
pub fn gpu_list(schema: &Schema) -> Result<Vec<Gpu>> {
    let conn = schema.connect()?;
    Ok(gpus(schema, &conn)?.0)
}

fn gpus(schema: &Schema, conn: &rusqlite::Connection) -> Result<(Vec<Gpu>, Option<String>)> {
    for table in ["TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE"] {
        let Some(columns) = schema.all_tables.get(table) else {
            continue;
        };
        let pick = |c: &str| {
            if columns.contains(c) {
                c.to_string()
            } else {
                "NULL".to_string()
            }
        };
        let gpu_table = table == "TARGET_INFO_GPU";
        let cols = if gpu_table {
            [
                "id",
                "cuDevice",
                "name",
                "chipName",
                "busLocation",
                "uuid",
                "smCount",
                "totalMemory",
                "memoryBandwidth",
                "clockRate",
                "l2CacheSize",
                "computeMajor",
                "computeMinor",
            ]
        } else {
            [
                "gpuId",
                "cudaId",
                "NULL",
                "NULL",
                "NULL",
                "uuid",
                "numMultiprocessors",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
            ]
        };
        let select: Vec<String> = cols.iter().map(|c| pick(c)).collect();
        let rows = db::query_on(
            conn,
            &schema.path,
            &format!("SELECT DISTINCT {} FROM {table}", select.join(", ")),
            &mut |row| {
                let i = |k| db::opt_int(row, k, table, "gpu");
                let t = |k| db::opt_text(row, k);
                let cc = match (i(11)?, i(12)?) {
                    (Some(a), Some(b)) => Some(format!("{a}.{b}")),
                    _ => None,
                };
                Ok(Gpu {
                    id: i(0)?,
                    cuda_id: i(1)?,
                    name: t(2)?,
                    chip_name: t(3)?,
                    bus_location: t(4)?,
                    uuid: t(5)?,
                    sm_count: i(6)?,
                    total_memory_bytes: i(7)?,
                    memory_bandwidth_bytes_per_s: i(8)?,
                    clock_rate_hz: i(9)?,
                    l2_cache_bytes: i(10)?,
                    compute_capability: cc,
                })
            },
        )?;
        if !rows.is_empty() {
            return Ok((rows, Some(table.to_string())));
        }
    }
    Ok((Vec::new(), None))
}
