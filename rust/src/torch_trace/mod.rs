//! PyTorch profiler (Kineto) Chrome traces: a streaming reader, links between CPU ops, runtime calls
//! and GPU activity, and the tables and breakdowns built on them.
//!
//! `open(path)` reads one trace file (plain or `.gz`) or a folder of rank traces into a [`TraceSet`];
//! the table functions (`kernels::table`, `ops::table`, ...) and `summary::summary` read from it.
//! Times are integer nanoseconds relative to each trace's first complete event (see `time`).

pub mod activity;
pub mod api;
mod blocks;
pub mod collectives;
mod columns;
pub mod distribution;
pub mod events;
pub mod fields;
pub mod flops;
mod framer;
mod framing;
pub mod graphs;
mod gzip;
pub mod header;
mod ingest;
pub mod interned;
pub mod kernels;
pub mod launches;
pub mod links;
mod memo;
pub mod ops;
pub mod paths;
pub mod perfetto;
mod quick;
pub mod ranks;
pub mod raw;
pub mod reader;
pub mod records;
mod scan;
pub mod scope;
mod segments;
pub mod serde_reader;
pub mod steps;
pub mod summary;
pub mod time;
pub mod timeline;
pub mod transfers;

use crate::error::{Error, Result};
use events::Events;
use header::Header;
use links::Links;
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Error codes of this engine (strings are the stable contract).
pub mod codes {
    /// Generic codes (mapped to `FormatError` / `UnsupportedVersionError` in Python).
    pub const FORMAT_INVALID: &str = "format_invalid";
    pub const FILE_TRUNCATED: &str = "file_truncated";
    pub const VERSION_UNSUPPORTED: &str = "version_unsupported";
    /// The object has no `traceEvents` key.
    pub const EVENTS_MISSING: &str = "torch_trace_events_missing";
    /// `traceEvents` is not an array.
    pub const EVENTS_NOT_ARRAY: &str = "torch_trace_events_not_array";
    /// An event lacks a required field or has one of the wrong type.
    pub const EVENT_INVALID: &str = "torch_trace_event_invalid";
    pub const DUPLICATE_KEY: &str = "torch_trace_duplicate_key";
    pub const NEGATIVE_DURATION: &str = "torch_trace_negative_duration";
    pub const TIMESTAMP_INVALID: &str = "torch_trace_timestamp_invalid";
    /// The trace has no complete (`X`) events at all.
    pub const EMPTY: &str = "torch_trace_empty";
    pub const HEADER_INVALID: &str = "torch_trace_header_invalid";
    /// A folder holds no `.json` / `.json.gz` files.
    pub const FOLDER_EMPTY: &str = "torch_trace_folder_empty";
    /// Two files of a folder claim the same rank.
    pub const RANK_DUPLICATE: &str = "torch_trace_rank_duplicate";
}

/// What produced the trace, as far as its content tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// CUDA runtime calls and/or CUPTI GPU activity.
    Cuda,
    /// HIP runtime calls or an AMD device (ROCm through roctracer).
    Rocm,
    /// Meta's MTIA accelerator (`mtia_*` categories).
    Mtia,
    /// No accelerator runtime calls or activity at all.
    CpuOnly,
}

impl Platform {
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Cuda => "cuda",
            Platform::Rocm => "rocm",
            Platform::Mtia => "mtia",
            Platform::CpuOnly => "cpu_only",
        }
    }
}

/// One trace file, read and linked.
#[derive(Debug)]
pub struct Trace {
    pub path: String,
    pub compressed: bool,
    pub rank: i64,
    /// `distributedInfo`, `single_trace` (no rank info, one file) or `file_order` (folder, no info).
    pub rank_source: &'static str,
    pub header: Header,
    pub platform: Platform,
    /// `kineto`, or `kineto_2021` for the 2021 categories (`Operator`, `Runtime`, `Kernel`).
    pub format: &'static str,
    pub events: Events,
    pub links: Links,
}

impl Trace {
    /// Start of the trace's first kept complete event: the zero of every relative time.
    pub fn origin(&self) -> i64 {
        self.events.first_start.unwrap_or(0)
    }

    pub fn name(&self, id: u32) -> &str {
        self.events.strings.get(id)
    }

    /// True when the trace holds GPU activity (kernels, memcpys or memsets).
    pub fn gpu_present(&self) -> bool {
        !self.events.gpu.is_empty()
    }
}

/// One or more traces (the ranks of one job), each read and linked.
#[derive(Debug)]
pub struct TraceSet {
    pub traces: Vec<Trace>,
}

/// Reads a trace file or a folder of trace files (`*.json`, `*.json.gz`), one per rank.
pub fn open(path: &Path) -> Result<TraceSet> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    let files = if meta.is_dir() {
        trace_files(path)?
    } else {
        vec![path.to_path_buf()]
    };
    read_set(&files, meta.is_dir())
}

/// Reads several trace files or folders as the ranks of one job (ranks from `distributedInfo`, or in
/// the order given when a trace lacks it).
pub fn open_paths(paths: &[PathBuf]) -> Result<TraceSet> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
        if meta.is_dir() {
            files.extend(trace_files(path)?);
        } else {
            files.push(path.clone());
        }
    }
    read_set(&files, files.len() > 1)
}

fn read_set(files: &[PathBuf], several: bool) -> Result<TraceSet> {
    let mut traces = files
        .par_iter()
        .map(|file| read_one(file))
        .collect::<Result<Vec<_>>>()?;
    assign_ranks(&mut traces, several)?;
    traces.sort_by_key(|t| t.rank);
    Ok(TraceSet { traces })
}

fn trace_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, &e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(std::result::Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            p.is_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::input(
            codes::FOLDER_EMPTY,
            format!("{}: the folder holds no trace files", dir.display()),
        )
        .with_path(dir.display().to_string())
        .with_expected("one *.json or *.json.gz Kineto trace per rank"));
    }
    Ok(files)
}

fn read_one(path: &Path) -> Result<Trace> {
    build(path.display().to_string(), reader::read_path(path)?)
}

/// One rank's trace from what the reader read (`shown` names it in errors).
pub(crate) fn build(shown: String, read: reader::ReadTrace) -> Result<Trace> {
    let header = header::parse(&read.header).map_err(|e| e.with_path(shown.clone()))?;
    let mut events = read.events;
    if events.counts.complete == 0 {
        return Err(Error::input(
            codes::EMPTY,
            format!("{shown}: the trace has no complete (`X`) events"),
        )
        .with_path(shown)
        .with_expected("at least one complete event (cpu_op, kernel, ...)")
        .with_observed(format!("{} events, none complete", events.counts.events)));
    }
    for key in &header.unmodeled_keys {
        events.count_unmodeled("header_key", key);
    }
    let platform = platform(&header, &events);
    let format = if events.counts.legacy > 0 {
        "kineto_2021"
    } else {
        "kineto"
    };
    let links = links::link(&events);
    Ok(Trace {
        path: shown,
        compressed: read.compressed,
        rank: header
            .distributed
            .as_ref()
            .and_then(|d| d.global_rank)
            .unwrap_or(-1),
        rank_source: "distributedInfo",
        header,
        platform,
        format,
        events,
        links,
    })
}

fn platform(header: &Header, events: &Events) -> Platform {
    let mtia = events
        .unmodeled
        .by_kind
        .get("event_category")
        .is_some_and(|cats| cats.keys().any(|c| c.starts_with("mtia")))
        || events.process_labels.values().any(|l| l.contains("MTIA"));
    let amd = header.devices.iter().any(|d| {
        d.name
            .as_deref()
            .is_some_and(|n| n.contains("AMD") || n.contains("Radeon") || n.contains("Instinct"))
    });
    if mtia {
        Platform::Mtia
    } else if events.counts.hip_calls > 0 || amd {
        Platform::Rocm
    } else if !events.gpu.is_empty() || events.counts.runtime_calls + events.counts.driver_calls > 0
    {
        Platform::Cuda
    } else {
        Platform::CpuOnly
    }
}

fn assign_ranks(traces: &mut [Trace], folder: bool) -> Result<()> {
    let all_known = traces.iter().all(|t| t.rank >= 0);
    if all_known {
        let mut seen = std::collections::HashMap::new();
        for t in traces.iter() {
            if let Some(other) = seen.insert(t.rank, t.path.clone()) {
                return Err(Error::input(
                    codes::RANK_DUPLICATE,
                    format!("rank {} appears in both {other} and {}", t.rank, t.path),
                )
                .with_expected("one trace file per rank"));
            }
        }
        return Ok(());
    }
    let source = if folder && traces.len() > 1 {
        "file_order"
    } else {
        "single_trace"
    };
    for (i, t) in traces.iter_mut().enumerate() {
        t.rank = i64::try_from(i).unwrap_or(i64::MAX);
        t.rank_source = source;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_graphs;
#[cfg(test)]
mod tests_quick;
