//! SASS listings (`cuobjdump -sass`, `nvdisasm`) scanned in one pass into per-function facts.
//!
//! The scanner reads the text line by line without building an instruction list: each function keeps
//! counters (instructions, classes, an opcode histogram) and, when a signature catalog is given, the
//! first few evidence lines of every pattern it matches. Matching is on parsed opcodes only, never on
//! function names, labels or comments.
//!
//! Bottom up: `scanner` holds the state the two grammars (`cuobjdump`, `nvdisasm`) share; `pass`
//! drives one pass, handing each line to its dialect's grammar; `merge` assembles parts into the
//! `listing`; `parallel` scans large cuobjdump files in segments and `file` picks the path.

mod arch;
mod cuobjdump;
mod division;
pub mod fields;
mod file;
mod function;

pub mod instruction;
pub(crate) mod lexer;
mod listing;
mod merge;
mod nvdisasm;
pub(crate) mod parallel;
mod pass;
mod scanner;
pub mod signatures;
mod tables;

pub use arch::Arch;
pub use file::scan_path;
pub use function::{Evidence, FunctionFacts, PatternHits};
pub use instruction::{Class, OpcodeInfo, CLASSES};
pub use listing::{CatalogSummary, Dialect, Listing, Summary, Unmodeled};
pub use pass::{scan_bytes, scan_reader};
pub use scanner::ScanOptions;
pub use signatures::Catalog;
pub use tables::{functions_table, opcodes_table, signatures_table};

/// Error codes of this area (the generic `format_invalid` / `file_truncated` map to `FormatError`).
pub mod codes {
    /// Not a SASS listing: binary bytes, or text with none of the structure of either dialect.
    pub const FORMAT_INVALID: &str = "format_invalid";
    /// The listing ends inside a function (no closing `..........`, end label or `;`).
    pub const FILE_TRUNCATED: &str = "file_truncated";
    /// An architecture line names an architecture this version does not know.
    pub const ARCH_UNKNOWN: &str = "sass_arch_unknown";
    /// A structurally valid listing without any SASS function (for example a PTX-only fatbin).
    pub const NO_FUNCTIONS: &str = "sass_no_functions";
    /// A signature catalog that does not follow `references/sass_signatures.md`.
    pub const CATALOG_INVALID: &str = "sass_catalog_invalid";
    /// A line longer than the scanner accepts (a listing line is a few hundred bytes).
    pub const LINE_TOO_LONG: &str = "sass_line_too_long";
}

#[cfg(test)]
mod tests;
