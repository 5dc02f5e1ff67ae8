//! What an nsys SQLite export is: its export-schema version, its tables (with versioned `_V<n>`
//! names resolved), their columns, and the checks that make every later scan safe.
//!
//! One job per file, bottom up: `sources` (the tables gpuopt reads and the columns it needs), `version`
//! (the export metadata and its schema version), `tables` (each table's columns and record layout,
//! versioned names resolved, views refused) and `export` (the validated export, `Schema`).

mod export;
mod sources;
mod tables;
mod version;

pub use export::Schema;
pub use sources::{
    Source, CUPTI_OVERHEAD, ENUM_MEMCPY_OPER, ENUM_MEM_KIND, ENUM_OVERHEAD_TYPE, ENUM_SYNC_TYPE,
    GRAPH_EVENTS, GRAPH_TRACE, KERNEL, MEMCPY, MEMSET, NVTX, PID_MASK, PROFILER_OVERHEAD, RUNTIME,
    SOURCES, STRING_IDS, SYNC,
};
pub use tables::{resolve_name, Layout, TableInfo};
pub use version::{ExportMeta, NEWEST_KNOWN_MINOR, SUPPORTED_MAJOR};
