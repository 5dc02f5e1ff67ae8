//! Analyses over the launch and execution record of a capture, whatever format it came from:
//! repeated iterations, the critical path of each step, launch queues, and kernel sequences.
//!
//! The nsys and Kineto engines each turn their file into one [`activity::Activity`] (GPU operations
//! in launch order, the host calls that launched or waited for them, the step markers); everything
//! here reads only that, so both formats get the same definitions. Method and limits:
//! `references/analyses.md`.

pub mod activity;
pub mod critical;
pub mod facts;
pub mod fields;
pub mod iterations;
pub mod period;
pub mod permute;
pub mod queue;
pub mod sequences;
pub mod table;

/// Error codes of the analyses (stable; documented in `references/analyses.md`).
pub mod codes {
    /// `--marker NAME` names no range of the capture.
    pub const MARKER_UNKNOWN: &str = "analysis_marker_unknown";
    /// An option out of range (`--n 0`, a step that does not exist).
    pub const OPTION_INVALID: &str = "analysis_option_invalid";
}

#[cfg(test)]
mod tests;
