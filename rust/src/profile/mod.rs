//! Profile comparison: per-key facts of k captures per side (kernel, op, NVTX range or memcpy totals)
//! compared with a t test per key, Benjamini–Hochberg control over keys and intervals at the level the
//! flags imply (false-coverage-rate adjusted). The per-capture aggregation happens upstream (the nsys, torch_trace and ncu engines, then
//! a polars group-by); this module sees one number per (key, capture), and the rounding
//! variance the capture's timer puts into it ([`timer`]).

pub mod diff;
pub mod timer;

pub use diff::{diff, DiffOptions, Family, KeyDiff, KeyMatrix};

/// Error codes of the profile area.
pub mod codes {
    /// The options or the matrices are malformed (shape, confidence, rate).
    pub const PROFILE_DIFF_INVALID: &str = "profile_diff_invalid";
    /// `paired` was asked for with different capture counts on the two sides.
    pub const PROFILE_PAIRS_UNEQUAL: &str = "profile_pairs_unequal";
}
