//! Synchronization facts of the timeline: the `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` rows by type and
//! the call that synchronized, and the host time blocked in synchronizing calls.
//!
//! A call blocks the host when it is a synchronizing API (`cudaDeviceSynchronize`,
//! `cudaStreamSynchronize`, `cudaEventSynchronize`, their driver and deprecated forms) or when CUPTI
//! recorded a synchronization for it (a `cudaStreamWaitEvent` does in some exports). Both are needed:
//! nsys 2025.3.2 on CUDA 13 records no synchronization row for `cudaDeviceSynchronize` (the H200
//! decode captures hold 13 such calls and one "Context sync" row, whose correlationId 9825 names a
//! call the capture stopped before recording), so rows alone left the device syncs out.

use super::api::strip_version;
use super::db;
use super::devices::DeviceMap;
use super::memory::enum_labels;
use super::ops::Call;
use super::out::add_i64;
use super::schema::{Schema, ENUM_SYNC_TYPE, SYNC};
use super::select::{Selection, PID_MASK};
use super::strings::Strings;
use crate::error::Result;
use crate::intervals::Span;
use serde::Serialize;
use std::collections::BTreeMap;

/// The APIs that block the calling host thread until GPU work finishes (runtime, driver and the
/// deprecated `cudaThreadSynchronize`), by name without the version suffix.
pub const SYNC_APIS: &[&str] = &[
    "cudaDeviceSynchronize",
    "cudaThreadSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
];

/// For each canonical string index, whether it names a synchronizing API (what the call join looks
/// for as it scans the runtime calls).
pub fn sync_api_flags(strings: &Strings) -> Vec<bool> {
    (0..strings.len())
        .map(|i| {
            u32::try_from(i).is_ok_and(|i| SYNC_APIS.contains(&strip_version(strings.value(i))))
        })
        .collect()
}

#[derive(Debug, Clone, Serialize)]
pub struct SyncByType {
    /// The device of the context waited on (from the GPU rows of that context; never the export's
    /// `deviceId`, which nsys writes as 0 for every process).
    pub device_id: Option<i64>,
    pub context_id: Option<i64>,
    /// The stream waited on; None for a context- or event-wide synchronization.
    pub stream_id: Option<i64>,
    pub sync_type: String,
    /// None when the export holds no call with the row's correlationId.
    pub api_name: Option<String>,
    pub count: u64,
    pub total_ns: i64,
    pub max_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostSync {
    /// The device of the context the call waited on (from its synchronization row), or else the one
    /// device its process ran work on; None when neither says.
    pub device_id: Option<i64>,
    pub api_name: String,
    /// Distinct calls.
    pub calls: u64,
    /// Calls CUPTI recorded a synchronization row for.
    pub recorded_calls: u64,
    pub blocked_ns: i64,
    pub profiler_overhead_ns: i64,
    pub blocked_excl_overhead_ns: i64,
}

/// One synchronization row: extent, process, correlation id, type, context, stream.
pub type SyncRow = (Span, i64, i64, i64, Option<i64>, Option<i64>);

/// The selected synchronization rows (none without the table).
pub fn sync_rows(schema: &Schema, sel: &Selection) -> Result<Vec<SyncRow>> {
    let Some(table) = schema.table(&SYNC) else {
        return Ok(Vec::new());
    };
    let name = table.actual.clone();
    let context = if schema.has_column(&SYNC, "contextId") {
        "contextId"
    } else {
        "NULL"
    };
    let rows = db::query_all(
        &schema.uri,
        &schema.path,
        &format!(
            "SELECT start, end, globalPid, correlationId, syncType, {context}, streamId FROM \"{name}\""
        ),
        |row| {
            let (s, e) = db::interval(row, 0, 1, &name)?;
            Ok((
                Span::new(s, e),
                db::opt_int(row, 2, &name, "globalPid")?.unwrap_or(0),
                db::opt_int(row, 3, &name, "correlationId")?.unwrap_or(0),
                db::opt_int(row, 4, &name, "syncType")?.unwrap_or(0),
                db::opt_int(row, 5, &name, "contextId")?,
                // CUPTI's "no stream" (u32::MAX): a context- or event-wide synchronization.
                db::opt_int(row, 6, &name, "streamId")?.filter(|&s| s != i64::from(u32::MAX)),
            ))
        },
    )?;
    Ok(rows
        .into_iter()
        .filter(|(s, pid, corr, ..)| sel.keep_gpu(s.start, s.end, *pid, *corr))
        .collect())
}

/// What the facts are made of: the synchronization rows with their calls (`calls[i]` made
/// `rows[i]`), and the selected calls of synchronizing APIs (process, correlationId, call).
pub struct SyncInput<'a> {
    pub rows: &'a [SyncRow],
    pub calls: &'a [Option<Call>],
    pub api_calls: &'a [(i64, i64, Call)],
}

/// One blocking call, once however many synchronization rows it has.
struct Blocking {
    call: Call,
    device: Option<i64>,
    recorded: bool,
}

/// Synchronization by type, and host time blocked per (device, API name). `within(thread, span)`:
/// profiler overhead inside a call.
pub fn sync_facts<'d, W>(
    schema: &Schema,
    strings: &Strings,
    input: &SyncInput<'_>,
    within: W,
    device_map: impl FnOnce() -> Result<&'d DeviceMap>,
) -> Result<(Vec<SyncByType>, Vec<HostSync>)>
where
    W: Fn(i64, Span) -> i64,
{
    if input.rows.is_empty() && input.api_calls.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let devices = device_map()?;
    let api = |c: &Call| strip_version(strings.value(c.name)).to_string();
    let synchronization = by_type(schema, input, devices, &api)?;
    // Every blocking call once, keyed by (process, correlationId): first from the rows (device of
    // the context waited on), then the synchronizing calls no row names.
    let mut blocking: BTreeMap<(i64, i64), Blocking> = BTreeMap::new();
    for (row, call) in input.rows.iter().zip(input.calls) {
        if let Some(call) = call {
            blocking
                .entry((row.1 & PID_MASK, row.2))
                .or_insert_with(|| Blocking {
                    call: *call,
                    device: row.4.and_then(|ctx| devices.of_context(row.1, ctx)),
                    recorded: true,
                });
        }
    }
    for &(pid, corr, call) in input.api_calls {
        blocking
            .entry((pid & PID_MASK, corr))
            .or_insert_with(|| Blocking {
                call,
                device: devices.only_device_of(pid),
                recorded: false,
            });
    }
    let mut host: BTreeMap<(Option<i64>, String), HostSync> = BTreeMap::new();
    for b in blocking.values() {
        let span = Span::new(b.call.start, b.call.end);
        let (device_id, api_name) = (b.device, api(&b.call));
        let h = host
            .entry((device_id, api_name.clone()))
            .or_insert_with(|| HostSync {
                device_id,
                api_name,
                calls: 0,
                recorded_calls: 0,
                blocked_ns: 0,
                profiler_overhead_ns: 0,
                blocked_excl_overhead_ns: 0,
            });
        h.calls += 1;
        h.recorded_calls += u64::from(b.recorded);
        h.blocked_ns = add_i64(h.blocked_ns, span.len(), "host_sync.blocked_ns")?;
        h.profiler_overhead_ns = add_i64(
            h.profiler_overhead_ns,
            within(b.call.global_tid, span),
            "host_sync.profiler_overhead_ns",
        )?;
        h.blocked_excl_overhead_ns = h.blocked_ns - h.profiler_overhead_ns;
    }
    let host_sync = host.into_values().collect();
    Ok((synchronization, host_sync))
}

/// The synchronization rows by (device, context, stream, type, API name): count, total, max.
fn by_type(
    schema: &Schema,
    input: &SyncInput<'_>,
    devices: &DeviceMap,
    api: &dyn Fn(&Call) -> String,
) -> Result<Vec<SyncByType>> {
    if schema.table(&SYNC).is_none() {
        return Ok(Vec::new());
    }
    let labels = enum_labels(schema, &ENUM_SYNC_TYPE)?;
    type TypeKey = (
        Option<i64>,
        Option<i64>,
        Option<i64>,
        String,
        Option<String>,
    );
    let mut groups: BTreeMap<TypeKey, (u64, i64, i64)> = BTreeMap::new();
    for (row, call) in input.rows.iter().zip(input.calls) {
        let device = row.4.and_then(|ctx| devices.of_context(row.1, ctx));
        let sync_type = labels
            .get(&row.3)
            .cloned()
            .unwrap_or_else(|| format!("unknown ({})", row.3));
        let e = groups
            .entry((device, row.4, row.5, sync_type, call.as_ref().map(api)))
            .or_default();
        e.0 += 1;
        e.1 = add_i64(e.1, row.0.len(), "synchronization.total_ns")?;
        e.2 = e.2.max(row.0.len());
    }
    Ok(groups
        .into_iter()
        .map(
            |((device_id, context_id, stream_id, sync_type, api_name), (count, total, max))| {
                SyncByType {
                    device_id,
                    context_id,
                    stream_id,
                    sync_type,
                    api_name,
                    count,
                    total_ns: total,
                    max_ns: max,
                }
            },
        )
        .collect())
}
