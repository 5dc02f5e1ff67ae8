//! What a sample file holds: the options naming its columns, the parsed file, and one data row.

use crate::stats::quantile::Calls;
use crate::stats::schedule::Order;
use serde::Deserialize;

/// The largest sample file read (tens of millions of values).
pub const MAX_SAMPLE_FILE_BYTES: u64 = 1 << 30;

/// Which columns of a sample file to read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReadOptions {
    pub column: Option<String>,
    pub key_column: Option<String>,
    pub case_column: Option<String>,
    pub order_column: Option<String>,
    /// The column naming each row's block (process, run, worker).
    pub block_column: Option<String>,
    /// Resample whole blocks (`--block-column`); false: only report per-block effects and warn.
    pub resample_blocks: bool,
}

/// One parsed sample file.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleFile {
    pub path: String,
    /// `jsonl`, `csv` or `tsv`.
    pub format: &'static str,
    /// The value column read (none for bare values).
    pub value_column: Option<String>,
    pub calls: Calls,
    pub keys: Option<Vec<String>>,
    pub cases: Option<Vec<String>>,
    pub orders: Option<Vec<Order>>,
    /// The block of each call (its first row's).
    pub blocks: Option<Vec<String>>,
    /// The first line of each call.
    pub lines: Vec<u64>,
    /// Data rows read.
    pub rows: usize,
    /// Columns present but not read.
    pub unmodeled_columns: Vec<String>,
}

/// One data row as a reader yields it: its line, its labels and its value(s).
pub(super) struct Row {
    pub(super) line: u64,
    pub(super) key: Option<String>,
    pub(super) case: Option<String>,
    pub(super) order: Option<Order>,
    pub(super) block: Option<String>,
    pub(super) values: Vec<f64>,
}

/// What a reader returns: the rows, the value column read and the columns not read.
pub(super) type Parsed = (Vec<Row>, Option<String>, Vec<String>);
