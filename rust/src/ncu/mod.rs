//! Nsight Compute engine: reads `ncu --csv` exports (raw and details pages, session page) and the
//! framing of `.ncu-rep` files, and turns them into per-launch facts with units normalised to base units.
//!
//! Layers: `csv` (tokeniser and the three pages) and `columns` (a report handed over as columns by the
//! Python `ncu_report` reader) build a [`model::Report`]; `metrics` holds the versioned alias table that
//! names where each fact comes from (`labels` maps the details page's labels back to metric names), and
//! `resolve` reads each fact from the metrics it names; `launches`, `kernels`, `stalls`, `sections`,
//! `long_table`, `roofline` and `compare` turn a report into tables.
//! Nothing here averages different launches or kernels silently: per-name aggregates carry their count.

pub mod cells;
pub mod columns;
pub mod compare;
pub mod csv;
pub mod fields;
pub mod kernels;
pub mod labels;
pub mod launches;
pub mod long_table;
pub mod metrics;
pub mod model;
pub mod number;
pub mod open;
pub mod report;
pub mod resolve;
pub mod roofline;
pub mod sections;
pub mod session;
pub mod stalls;
pub mod units;

/// Stable error codes of the ncu engine (the generic `format_invalid`, `file_truncated` and
/// `version_unsupported` come from `crate::error` conventions).
pub mod codes {
    pub const FORMAT_INVALID: &str = "format_invalid";
    pub const FILE_TRUNCATED: &str = "file_truncated";
    pub const VERSION_UNSUPPORTED: &str = "version_unsupported";
    pub const COLUMN_MISSING: &str = "ncu_column_missing";
    pub const UNITS_ROW_MISSING: &str = "ncu_units_row_missing";
    pub const UNIT_UNKNOWN: &str = "ncu_unit_unknown";
    pub const UNIT_UNEXPECTED: &str = "ncu_unit_unexpected";
    pub const UNIT_INCONSISTENT: &str = "ncu_unit_inconsistent";
    pub const VALUE_INVALID: &str = "ncu_value_invalid";
    pub const LAUNCH_DUPLICATE: &str = "ncu_launch_duplicate";
    pub const REPORT_EMPTY: &str = "ncu_report_empty";
    pub const TOOL_ERROR: &str = "ncu_tool_error";
    pub const WRONG_PAGE: &str = "ncu_wrong_page";
    pub const PEAK_INVALID: &str = "ncu_peak_invalid";
    pub const COLUMNS_INVALID: &str = "ncu_columns_invalid";
}
