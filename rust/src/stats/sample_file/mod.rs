//! Sample files for `gpuopt stats`: JSON Lines or CSV, one call per row (or per key), turned into
//! calls and then into pairs.
//!
//! - **JSON Lines** (`.jsonl`, `.ndjson`, `.json`, or content starting with `{`/`[`): each non-empty line
//!   is a number, an array of numbers (the samples of one call), or an object whose value field is a
//!   number or an array of numbers.
//! - **CSV** (`.csv`; `.tsv` is tab-separated): a header row naming the columns, or no header and one
//!   value per line.
//! - **Value column**: `--column NAME`; else the only column; else a column named `value`.
//! - **Key column**: rows with the same key are the samples of one call; pairs match by key (the
//!   baseline's order is the plan order). Without a key, row i of each file is pair i.
//! - Every value must be finite and > 0; an error names the file, the line and the pair.
//! - A format error names the position and the expected shape, never the file's bytes: not a cell that
//!   fails to parse, not the header's names (a mistaken file's first line may be a secret); see
//!   `crate::shape`. Keys and cases of a file that parsed are named (they are the caller's own labels).
//!
//! One job per file, bottom up: `model` (the options, the parsed file and one data row), `cells` (the
//! cell parsers and the errors every reader gives), `csv` and `jsonl` (the two readers), `read` (format
//! detection, value checks and grouping rows into calls) and `pairing` (two files into pairs, and blocks).

mod cells;
mod csv;
mod jsonl;
mod model;
mod pairing;
mod read;

pub use model::{ReadOptions, SampleFile, MAX_SAMPLE_FILE_BYTES};
pub use pairing::{blocks, pair};
pub use read::{parse, read};

#[cfg(test)]
mod tests;
