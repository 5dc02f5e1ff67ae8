//! Identity facts from the trace's top-level keys (everything beside `traceEvents`).

use super::codes;
use super::codes as generic;
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Top-level keys read into identity facts; any other key is reported as unmodeled.
const MODELED: [&str; 14] = [
    "schemaVersion",
    "deviceProperties",
    "distributedInfo",
    "baseTimeNanoseconds",
    "cupti_version",
    "cuda_runtime_version",
    "cuda_driver_version",
    "trace_id",
    "traceName",
    "displayTimeUnit",
    "INFO",
    "WARNING",
    "ERROR",
    "record_shapes",
];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Device {
    pub id: Option<i64>,
    pub name: Option<String>,
    pub total_memory_bytes: Option<i64>,
    /// `major.minor` from `computeMajor`/`computeMinor`.
    pub compute_capability: Option<String>,
    pub multiprocessors: Option<i64>,
    pub warp_size: Option<i64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Distributed {
    pub backend: Option<String>,
    pub global_rank: Option<i64>,
    pub world_size: Option<i64>,
    pub nccl_version: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct LogLines {
    pub info: u64,
    pub warning: u64,
    pub error: u64,
    /// The `ERROR` lines themselves (at most 20).
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Header {
    pub schema_version: i64,
    pub trace_name: Option<String>,
    pub trace_id: Option<String>,
    pub base_time_ns: Option<i64>,
    pub display_time_unit: Option<String>,
    pub cupti_version: Option<i64>,
    pub cuda_runtime_version: Option<i64>,
    pub cuda_driver_version: Option<i64>,
    pub record_shapes: Option<bool>,
    pub distributed: Option<Distributed>,
    pub devices: Vec<Device>,
    pub log_lines: LogLines,
    /// Top-level keys present but not modeled (job metadata and the like).
    #[serde(skip)]
    pub unmodeled_keys: Vec<String>,
}

/// Reads the identity facts; `schemaVersion` must be 1 (the only Kineto schema there is).
pub fn parse(header: &BTreeMap<String, Value>) -> Result<Header> {
    let schema_version = match header.get("schemaVersion") {
        // A number is shown; anything else by its kind (a string there may be any text).
        Some(v) => int(v).ok_or_else(|| match v {
            Value::Number(n) => version_error(&n.to_string()),
            other => version_error(kind(other)),
        })?,
        None => {
            return Err(Error::input(
                generic::VERSION_UNSUPPORTED,
                "the trace has no `schemaVersion`",
            )
            .with_expected("schemaVersion 1 (a Kineto trace)")
            .with_observed("no schemaVersion key"))
        }
    };
    if schema_version != 1 {
        return Err(version_error(&schema_version.to_string()));
    }
    let text = |key: &str| header.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| header.get(key).and_then(int);
    let distributed = header.get("distributedInfo").map(|v| Distributed {
        backend: v.get("backend").and_then(Value::as_str).map(str::to_owned),
        global_rank: v.get("rank").and_then(int),
        world_size: v.get("world_size").and_then(int),
        nccl_version: v
            .get("nccl_version")
            .and_then(Value::as_str)
            .map(str::to_owned),
    });
    let devices = match header.get("deviceProperties") {
        None => Vec::new(),
        Some(Value::Array(items)) => items.iter().map(device).collect(),
        Some(other) => {
            return Err(
                Error::input(codes::HEADER_INVALID, "`deviceProperties` is not an array")
                    .with_expected("an array of device objects")
                    .with_observed(kind(other)),
            )
        }
    };
    let mut log_lines = LogLines::default();
    for (key, slot) in [("INFO", 0), ("WARNING", 1), ("ERROR", 2)] {
        let lines: Vec<&str> = match header.get(key) {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(s)) => vec![s.as_str()],
            _ => Vec::new(),
        };
        let n = lines.len() as u64;
        match slot {
            0 => log_lines.info = n,
            1 => log_lines.warning = n,
            _ => {
                log_lines.error = n;
                log_lines.errors = lines.iter().take(20).map(|s| (*s).to_owned()).collect();
            }
        }
    }
    let unmodeled_keys = header
        .keys()
        .filter(|k| !MODELED.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(Header {
        schema_version,
        trace_name: text("traceName"),
        trace_id: text("trace_id"),
        base_time_ns: number("baseTimeNanoseconds"),
        display_time_unit: text("displayTimeUnit"),
        cupti_version: number("cupti_version"),
        cuda_runtime_version: number("cuda_runtime_version"),
        cuda_driver_version: number("cuda_driver_version"),
        record_shapes: header.get("record_shapes").and_then(int).map(|v| v != 0),
        distributed,
        devices,
        log_lines,
        unmodeled_keys,
    })
}

fn device(v: &Value) -> Device {
    let capability = match (
        v.get("computeMajor").and_then(int),
        v.get("computeMinor").and_then(int),
    ) {
        (Some(major), Some(minor)) => Some(format!("{major}.{minor}")),
        _ => None,
    };
    Device {
        id: v.get("id").and_then(int),
        name: v.get("name").and_then(Value::as_str).map(str::to_owned),
        total_memory_bytes: v.get("totalGlobalMem").and_then(int),
        compute_capability: capability,
        multiprocessors: v.get("numSms").and_then(int),
        warp_size: v.get("warpSize").and_then(int),
    }
}

/// An integer written as a JSON integer or as a decimal string (some writers quote versions).
fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn version_error(observed: &str) -> Error {
    Error::input(
        generic::VERSION_UNSUPPORTED,
        format!("unsupported Kineto schemaVersion {observed}"),
    )
    .with_expected("schemaVersion 1")
    .with_observed(observed.to_owned())
}
