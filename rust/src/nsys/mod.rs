//! The Nsight Systems engine: reads nsys SQLite exports (read-only, immutable), reproduces NVIDIA's
//! `nsys stats` summaries number for number, and computes timeline and NVTX attribution facts.
//!
//! Entry point: [`Report::open`] validates a file (SQLite, metadata, schema major version, required
//! columns of every table present) and interns `StringIds`; every fact is then a method that scans
//! only the columns it needs, in parallel, and returns an Arrow [`Table`] or a serializable document.

pub mod activity;
pub mod api;
pub mod busy;
pub mod comm;
pub mod coverage;
pub mod db;
pub mod describe;
pub mod devices;
pub mod distribution;
pub mod fields;
pub mod graphs;
pub mod hash;
pub mod info;
pub mod kernels;
pub mod launch;
pub mod memory;
pub mod nvtx;
pub mod ops;
pub mod out;
pub mod pages;
pub mod perfetto;
pub mod ranges;
pub mod ranks;
pub mod render;
pub mod scan;
pub mod schema;
pub mod select;
pub mod slim;
pub mod strings;
pub mod summary;
pub mod sweep;
pub mod sync;
pub mod timeline;
pub mod trace;

use crate::error::{Error, Result};
use crate::table::Table;
use schema::Schema;
use select::{Request, Selection};
use std::path::Path;
use std::sync::OnceLock;
use strings::Strings;

/// Error codes of this engine (stable; documented in `references/formats/nsys-sqlite.md`).
pub mod codes {
    /// Not an SQLite file (maps to `FormatError`).
    pub const FORMAT_INVALID: &str = "format_invalid";
    /// Shorter than its SQLite header says, or damaged pages (maps to `FormatError`).
    pub const FILE_TRUNCATED: &str = "file_truncated";
    /// No export metadata, or an export-schema major version gpuopt does not model.
    pub const VERSION_UNSUPPORTED: &str = "version_unsupported";
    pub const TABLE_MISSING: &str = "nsys_table_missing";
    /// A VIEW stands where nsys writes a table (never read: a view can compute unbounded rows).
    pub const TABLE_IS_VIEW: &str = "nsys_table_is_view";
    pub const COLUMN_MISSING: &str = "nsys_column_missing";
    pub const STRING_DANGLING: &str = "nsys_string_dangling";
    pub const ENUM_UNKNOWN: &str = "nsys_enum_unknown";
    pub const VALUE_NULL: &str = "nsys_value_null";
    pub const VALUE_INVALID: &str = "nsys_value_invalid";
    pub const INTERVAL_INVERTED: &str = "nsys_interval_inverted";
    pub const TIMESTAMP_IMPOSSIBLE: &str = "nsys_timestamp_impossible";
    pub const SUM_OVERFLOW: &str = "nsys_sum_overflow";
    pub const SQLITE_ERROR: &str = "nsys_sqlite_error";
    pub const NVTX_RANGE_UNKNOWN: &str = "nsys_nvtx_range_unknown";
    pub const WINDOW_INVALID: &str = "window_invalid";
    pub const REPORT_UNKNOWN: &str = "nsys_report_unknown";
}

/// The `nsys stats` reports gpuopt reproduces, by their nsys names.
pub const STATS_REPORTS: &[&str] = &[
    "cuda_api_sum",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_size_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_kern_exec_sum",
    "nvtx_kern_sum",
    "nvtx_sum",
];

/// An opened, validated export.
#[derive(Debug, Clone)]
pub struct Report {
    pub schema: Schema,
    pub strings: Strings,
    /// Which processes and contexts ran on which device: read once, on first need (`--device`,
    /// `devices()`), since each read is three queries of the GPU tables.
    devices: OnceLock<devices::DeviceMap>,
}

impl Report {
    pub fn open(path: &Path) -> Result<Self> {
        let schema = Schema::load(path)?;
        let strings = Strings::load(&schema)?;
        Ok(Self {
            schema,
            strings,
            devices: OnceLock::new(),
        })
    }

    pub fn selection(&self, req: &Request) -> Result<Selection> {
        Selection::resolve(&self.schema, &self.strings, req, || self.device_map())
    }

    fn device_map(&self) -> Result<&devices::DeviceMap> {
        if let Some(map) = self.devices.get() {
            return Ok(map);
        }
        let map = devices::DeviceMap::load(&self.schema)?;
        Ok(self.devices.get_or_init(|| map))
    }

    /// One `nsys stats` report by its nsys name.
    pub fn stats(&self, report: &str, req: &Request) -> Result<Table> {
        let sel = self.selection(req)?;
        let (s, t) = (&self.schema, &self.strings);
        match report {
            "cuda_gpu_kern_sum" => kernels::kern_sum(s, t, &sel, kernels::NameKind::Demangled),
            "cuda_api_sum" => api::api_sum(s, t, &sel),
            "cuda_gpu_mem_time_sum" => memory::mem_time_sum(s, t, &sel),
            "cuda_gpu_mem_size_sum" => memory::mem_size_sum(s, t, &sel),
            "nvtx_sum" => nvtx::nvtx_sum(s, t, &sel),
            "cuda_kern_exec_sum" => kernels::kern_exec_sum(s, t, &sel),
            "nvtx_kern_sum" => nvtx::nvtx_kern_sum(s, t, &sel),
            other => Err(
                Error::input(codes::REPORT_UNKNOWN, format!("no report named {other:?}"))
                    .with_expected(STATS_REPORTS.join(", "))
                    .with_observed(other.to_string()),
            ),
        }
    }

    pub fn kernels(&self, req: &Request, short_names: bool) -> Result<Table> {
        let by = if short_names {
            kernels::NameKind::Short
        } else {
            kernels::NameKind::Demangled
        };
        kernels::kern_sum(&self.schema, &self.strings, &self.selection(req)?, by)
    }

    pub fn memory(&self, req: &Request) -> Result<Table> {
        memory::memory_by_kind(&self.schema, &self.strings, &self.selection(req)?)
    }

    pub fn nvtx(&self, req: &Request, per_instance: bool) -> Result<Table> {
        nvtx::attribution(
            &self.schema,
            &self.strings,
            &self.selection(req)?,
            per_instance,
        )
    }

    /// Communication vs. compute per device and communication stream.
    pub fn comm(&self, req: &Request) -> Result<Table> {
        comm::comm_table(&self.schema, &self.strings, &self.selection(req)?)
    }

    pub fn timeline(&self, req: &Request) -> Result<timeline::Timeline> {
        timeline::timeline(&self.schema, &self.strings, &self.selection(req)?, || {
            self.device_map()
        })
    }

    /// [`Self::timeline`] and [`Self::graphs`] from one read of the operations (what a summary shows).
    pub fn timeline_and_graphs(
        &self,
        req: &Request,
    ) -> Result<(timeline::Timeline, graphs::Graphs)> {
        let sel = self.selection(req)?;
        let (timeline, graphs) =
            timeline::timeline_and_graphs(&self.schema, &self.strings, &sel, true, || {
                self.device_map()
            })?;
        let graphs = match graphs {
            Some(g) => g,
            None => graphs::graphs(&self.schema, &self.strings, &sel)?,
        };
        Ok((timeline, graphs))
    }

    pub fn graphs(&self, req: &Request) -> Result<graphs::Graphs> {
        graphs::graphs(&self.schema, &self.strings, &self.selection(req)?)
    }

    /// GPU activity that a fact (`timeline`, `kernels`, ...) does not include.
    pub fn coverage(&self, fact: &str) -> Result<Vec<coverage::Coverage>> {
        coverage::for_fact(&self.schema, fact)
    }

    /// Every gap, or (`top = Some(k)`) the `k` longest, longest first.
    pub fn gaps(&self, req: &Request, keep: timeline::GapKeep) -> Result<Table> {
        timeline::gaps(&self.schema, &self.strings, &self.selection(req)?, keep)
    }

    /// The launch and execution record the analyses read (`crate::analyses`).
    pub fn activity(&self, req: &Request) -> Result<crate::analyses::activity::Activity> {
        activity::load(&self.schema, &self.strings, &self.selection(req)?)
    }

    /// One row per GPU operation (what plots draw).
    pub fn operations(&self, req: &Request) -> Result<Table> {
        trace::operations(&self.schema, &self.strings, &self.selection(req)?)
    }

    /// Every device that ran GPU work in the export, ascending.
    pub fn devices(&self) -> Result<Vec<i64>> {
        Ok(self.device_map()?.devices())
    }

    pub fn info(&self) -> Result<info::Info> {
        info::info(&self.schema, &self.strings)
    }

    /// The GPU timer's resolution (ns) the export's durations show ([`crate::profile::timer`]).
    pub fn timer_resolution(&self) -> Result<i64> {
        info::timer_resolution(&self.schema)
    }

    /// How CUDA graphs were traced (`graph`, `node`), without the rest of [`Self::info`].
    pub fn graph_trace_mode(&self) -> Result<Option<String>> {
        info::graph_trace_mode(&self.schema)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_graphs;
